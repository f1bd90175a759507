import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { BORROWED_READ_BYTES, BorrowedReads } from './borrowed-reads.ts';
import { connectSocket } from './socket.ts';

/** A Unix socket server that runs `serve` on its one connection. */
async function server(t: TestContext, serve: (s: Socket) => void): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'jackin-borrowed-'));
  const path = join(dir, 's.sock');
  const srv = createServer(serve);
  await new Promise<void>((resolve) => srv.listen(path, resolve));
  t.after(() => {
    srv.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return path;
}

test('borrowed reads: every byte in order, each read a view of the one lent buffer, at most BORROWED_READ_BYTES, then the end', async (t) => {
  const data = randomBytes(3 * 1024 * 1024 + 777);
  const path = await server(t, (s) => s.end(data));
  const reads = new BorrowedReads();
  const sock = await connectSocket(path, { onread: reads.onread });
  t.after(() => sock.destroy());
  const got: Buffer[] = [];
  for await (const view of reads.chunks(sock)) {
    assert.equal(view.buffer, reads.onread.buffer.buffer, 'a view of the lent buffer, not a buffer of its own');
    assert.ok(view.length > 0 && view.length <= BORROWED_READ_BYTES);
    got.push(Buffer.from(view));
  }
  assert.ok(Buffer.concat(got).equals(data));
  assert.ok(got.length >= Math.ceil(data.length / BORROWED_READ_BYTES));
});

test('borrowed reads: the socket reads nothing more while the reader holds a read (the view stays as it was)', async (t) => {
  const path = await server(t, (s) => {
    // More than the lent buffer and the socket's queue hold, so the writer would go on if the reader did.
    s.end(Buffer.alloc(8 * 1024 * 1024, 0x41));
  });
  const reads = new BorrowedReads();
  const sock = await connectSocket(path, { onread: reads.onread });
  t.after(() => sock.destroy());
  const it = reads.chunks(sock)[Symbol.asyncIterator]();
  const first = await it.next();
  assert.equal(first.done, false);
  const view = first.value as Buffer;
  const copy = Buffer.from(view);
  reads.onread.buffer.fill(0x7a, view.length);
  await sleep(100);
  assert.ok(view.equals(copy), 'the held read was not overwritten');
  assert.ok(
    reads.onread.buffer.subarray(view.length).every((b) => b === 0x7a),
    'nothing was read into the buffer meanwhile',
  );
  let total = view.length;
  for (let r = await it.next(); r.done !== true; r = await it.next()) total += r.value.length;
  assert.equal(total, 8 * 1024 * 1024);
});

test('borrowed reads: a connection that is destroyed ends the reads; an error is thrown to the reader', async (t) => {
  const path = await server(t, (s) => s.write(Buffer.alloc(1000, 1)));
  const reads = new BorrowedReads();
  const sock = await connectSocket(path, { onread: reads.onread });
  const it = reads.chunks(sock)[Symbol.asyncIterator]();
  assert.equal((await it.next()).done, false);
  const next = it.next();
  sock.destroy(new Error('link lost'));
  await assert.rejects(next, /link lost/);
  await assert.rejects(reads.chunks(sock).next(), /only once/);
});
