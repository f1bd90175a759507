import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ControlMessageDecoder, encodeControlMessage, type ListedForward } from '../../protocol/index.ts';
import { pollUntil } from '../../../test/helpers/poll.ts';
import { CapsuleServer } from '../session/server.ts';
import { Session } from '../session/session.ts';
import { installForwardList, MAX_LISTED_FORWARDS } from './forward-list.ts';

async function start(t: TestContext): Promise<{ socketPath: string; server: CapsuleServer }> {
  const dir = mkdtempSync(join(tmpdir(), 'capsule-fwdlist-'));
  const socketPath = join(dir, 'jackin.sock');
  const session = Session.spawn({ file: 'sh', args: ['-c', 'read line'], env: { ...process.env, TERM: 'xterm-256color' } });
  const server = await CapsuleServer.listen({
    socketPath,
    session,
    info: { name: 'test', program: ['sh'], workspace: dir, pid: process.pid },
    registerMethods: (_control, srv) => installForwardList(srv),
  });
  t.after(async () => {
    await server.shutdown(null, 'test over');
    session.kill('SIGKILL');
    await session.exited;
    session.dispose();
    rmSync(dir, { recursive: true, force: true });
  });
  return { socketPath, server };
}

/** Sends one request; resolves with the reply and the connection, left open. */
async function request(socketPath: string, req: unknown): Promise<{ reply: Record<string, unknown>; socket: Socket }> {
  const socket = connect(socketPath);
  const decoder = new ControlMessageDecoder();
  const reply = await new Promise<Record<string, unknown>>((resolve, reject) => {
    socket.on('data', (chunk: Buffer) => {
      const [m] = decoder.push(chunk);
      if (m !== undefined) resolve(m as Record<string, unknown>);
    });
    socket.on('error', reject);
    socket.write(encodeControlMessage(req));
  });
  return { reply, socket };
}

async function ports(socketPath: string): Promise<unknown> {
  const { reply, socket } = await request(socketPath, { method: 'ports' });
  socket.destroy();
  return reply;
}

const announce = (forwards: ListedForward[]): unknown => ({ method: 'announce-forwards', forwards });

test('forward list: announced forwards are listed while their connection stays open, and go when it closes (ended or dropped)', async (t) => {
  const { socketPath, server } = await start(t);
  assert.deepEqual(await ports(socketPath), { ok: true, forwards: [] });
  const a = await request(
    socketPath,
    announce([
      { hostPort: 18081, containerPort: 81, kind: 'forward' },
      { hostPort: 18080, containerPort: 80, kind: 'forward' },
    ]),
  );
  assert.deepEqual(a.reply, { ok: true, listed: 2 });
  const b = await request(socketPath, announce([{ hostPort: 1455, containerPort: 1455, kind: 'login' }]));
  assert.deepEqual(await ports(socketPath), {
    ok: true,
    forwards: [
      { hostPort: 1455, containerPort: 1455, kind: 'login' },
      { hostPort: 18080, containerPort: 80, kind: 'forward' },
      { hostPort: 18081, containerPort: 81, kind: 'forward' },
    ],
  });
  // Held outside the socket's bound on connections: only the ones in flight count.
  assert.equal(server.connections, 0);
  a.socket.end();
  await pollUntil('the first announcement to go', async () => ((await ports(socketPath)) as { forwards: unknown[] }).forwards.length === 1);
  // A host that dies drops the connection without ending it: its forwards go too.
  b.socket.destroy();
  await pollUntil('the second announcement to go', async () => ((await ports(socketPath)) as { forwards: unknown[] }).forwards.length === 0);
});

test(`forward list: at most ${MAX_LISTED_FORWARDS} forwards; one announcement past it is refused whole and lists nothing`, async (t) => {
  const { socketPath } = await start(t);
  const held: Socket[] = [];
  t.after(() => held.forEach((s) => s.destroy()));
  for (let i = 0; i < MAX_LISTED_FORWARDS / 16; i++) {
    const forwards = Array.from({ length: 16 }, (_, j): ListedForward => ({ hostPort: 20000 + i * 16 + j, containerPort: 80, kind: 'forward' }));
    const r = await request(socketPath, announce(forwards));
    held.push(r.socket);
    assert.deepEqual(r.reply, { ok: true, listed: 16 });
  }
  const over = await request(socketPath, announce([{ hostPort: 30000, containerPort: 80, kind: 'forward' }]));
  held.push(over.socket);
  assert.equal(over.reply['code'], 'E_FORWARD_LIMIT');
  const listed = (await ports(socketPath)) as { forwards: ListedForward[] };
  assert.equal(listed.forwards.length, MAX_LISTED_FORWARDS);
  assert.ok(!listed.forwards.some((f) => f.hostPort === 30000));
});

test('forward list: an announcement naming anything but ports and a known kind is refused, nothing listed', async (t) => {
  const { socketPath } = await start(t);
  for (const req of [
    announce([]),
    { method: 'announce-forwards', forwards: [{ hostPort: 18080, containerPort: 80, kind: 'forward', host: '10.0.0.1' }] },
    { method: 'announce-forwards', forwards: [{ hostPort: 18080, containerPort: 80, kind: 'forward' }], url: 'http://evil.example/' },
    { method: 'announce-forwards', forwards: [{ hostPort: 18080, containerPort: 80, kind: 'mystery' }] },
  ]) {
    const r = await request(socketPath, req);
    r.socket.destroy();
    assert.equal(r.reply['code'], 'E_BAD_REQUEST', JSON.stringify(req));
  }
  assert.deepEqual(await ports(socketPath), { ok: true, forwards: [] });
});

test("forward list: the capsule's shutdown closes the announcements it holds instead of waiting for them", async (t) => {
  const { socketPath, server } = await start(t);
  const a = await request(socketPath, announce([{ hostPort: 18080, containerPort: 80, kind: 'forward' }]));
  const closed = new Promise<void>((resolve) => a.socket.once('close', () => resolve()));
  a.socket.on('error', () => {});
  await Promise.race([
    server.shutdown(null, 'test over'),
    new Promise((_, reject) => setTimeout(() => reject(new Error('shutdown waited for the announcement')), 5_000).unref()),
  ]);
  await closed;
});
