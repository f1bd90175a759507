import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { connectSocket } from '../../transport/socket.ts';
import { BORROWED_READ_BYTES } from '../../transport/borrowed-reads.ts';
import { LentReads, readViews } from './lent-reads.ts';

/** Promise.withResolvers, which Node 20 lacks. */
function resolvers<T>(): { promise: Promise<T>; resolve: (v: T) => void } {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

/** A Unix socket server whose connections are wrapped by one LentReads, each handed to `serve`. */
async function server(t: TestContext, serve: (s: Socket) => void): Promise<{ path: string; srv: Server }> {
  const dir = mkdtempSync(join(tmpdir(), 'jackin-lent-'));
  const path = join(dir, 's.sock');
  const lent = new LentReads();
  const srv: Server = createServer({ allowHalfOpen: true, pauseOnConnect: true }, (s) => serve(lent.wrap(s, srv)));
  await new Promise<void>((resolve) => srv.listen(path, resolve));
  t.after(() => {
    srv.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return { path, srv };
}

test('lent reads: a view reader sees every byte in order, each read a view of one shared buffer, reads longer than Node’s own 64 KiB', async (t) => {
  const data = randomBytes(3 * 1024 * 1024 + 777);
  const views: Buffer[] = [];
  const got: Buffer[] = [];
  const done = resolvers<void>();
  const { path } = await server(t, (s) => {
    // Held until the writer has filled the socket's queue, so the first read finds more than 64 KiB.
    s.pause();
    readViews(s, (view) => {
      views.push(view);
      got.push(Buffer.from(view));
    });
    s.on('end', () => done.resolve());
    setTimeout(() => s.resume(), 200);
  });
  const client = await connectSocket(path);
  t.after(() => client.destroy());
  client.end(data);
  await done.promise;
  assert.ok(Buffer.concat(got).equals(data), 'every byte, in order');
  const lent = views[0]!.buffer;
  for (const v of views) {
    assert.equal(v.buffer, lent, 'every read is a view of the one lent buffer');
    assert.ok(v.length > 0 && v.length <= BORROWED_READ_BYTES);
  }
  assert.ok(views[0]!.length > 64 * 1024, `the first read took ${views[0]!.length} bytes: not more than Node's own 64 KiB reads`);
});

test('lent reads: without a view reader each read is a "data" event with a copy of its own; the server counts the connection until it closes', async (t) => {
  const data = randomBytes(1024 * 1024 + 3);
  const chunks: Buffer[] = [];
  const opened = resolvers<Socket>();
  const ended = resolvers<void>();
  const { path, srv } = await server(t, (s) => {
    s.on('data', (c: Buffer) => chunks.push(c));
    s.on('end', () => ended.resolve());
    opened.resolve(s);
  });
  const client = await connectSocket(path);
  t.after(() => client.destroy());
  const conn = await opened.promise;
  const count = (): Promise<number> => new Promise((resolve, reject) => srv.getConnections((e, n) => (e ? reject(e) : resolve(n))));
  assert.equal(await count(), 1);
  client.end(data);
  await ended.promise;
  // More than four lent buffers' worth: a chunk that were a view of the lent buffer would have been
  // overwritten by the reads after it, and this comparison would fail.
  assert.ok(chunks.length > 1);
  assert.ok(Buffer.concat(chunks).equals(data), 'every byte, in order, each chunk a copy of its own');
  // The lent socket writes as any socket does (allowHalfOpen: the reply after the request's end).
  const reply = resolvers<Buffer>();
  const got: Buffer[] = [];
  client.on('data', (c: Buffer) => got.push(c));
  client.on('end', () => reply.resolve(Buffer.concat(got)));
  conn.end('bye');
  assert.equal((await reply.promise).toString(), 'bye');
  const closed = new Promise<void>((resolve) => srv.close(() => resolve()));
  client.destroy();
  await Promise.race([closed, sleep(5000).then(() => assert.fail('server.close waited for a connection that had closed'))]);
  assert.equal(await count(), 0);
});

test('lent reads: readViews on a socket LentReads did not wrap reads its "data" events, and stops when asked', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'jackin-lent-'));
  const path = join(dir, 's.sock');
  const conn = resolvers<Socket>();
  const srv = createServer((s) => conn.resolve(s));
  await new Promise<void>((resolve) => srv.listen(path, resolve));
  const client = await connectSocket(path);
  t.after(() => {
    client.destroy();
    srv.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const s = await conn.promise;
  const got: string[] = [];
  const first = resolvers<void>();
  const stop = readViews(s, (v) => {
    got.push(v.toString());
    first.resolve();
  });
  client.write('one');
  await first.promise;
  stop();
  assert.equal(s.listenerCount('data'), 0);
  assert.deepEqual(got, ['one']);
});
