import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { hasCode } from '../errors.ts';
import { connectSocket, isNotListening } from './socket.ts';
import { pollUntil } from '../../test/helpers/poll.ts';
import { testDir } from '../../test/helpers/test-run.ts';

/** A listening socket at `path` that counts the connections it gets; closed at the end of the test. */
async function listener(t: TestContext, path: string): Promise<{ server: Server; connections: () => number }> {
  let n = 0;
  const server = createServer((s) => {
    n++;
    s.on('error', () => undefined);
    s.end('hello');
  });
  await new Promise<void>((resolve) => server.listen(path, resolve));
  t.after(() => server.close());
  return { server, connections: () => n };
}

function tempDir(t: TestContext): string {
  return testDir(t, 'jackin-socket-');
}

test("connectSocket: a symlink in an instance socket's place is never followed; the socket it names gets no connection", async (t) => {
  const dir = tempDir(t);
  // Another socket of the operator's (another instance, an agent socket).
  const other = await listener(t, join(dir, 'other.sock'));
  const runDir = join(dir, 'run');
  mkdirSync(runDir);
  symlinkSync(join(dir, 'other.sock'), join(runDir, 'jackin.sock'));
  await assert.rejects(
    connectSocket(join(runDir, 'jackin.sock')),
    (e) => hasCode(e, 'E_SOCKET_UNAVAILABLE') && isNotListening(e) && /is not a socket/.test((e as Error).message),
  );
  // A regular file (or a FIFO) in its place: the same.
  rmSync(join(runDir, 'jackin.sock'));
  writeFileSync(join(runDir, 'jackin.sock'), '');
  await assert.rejects(connectSocket(join(runDir, 'jackin.sock')), (e) => hasCode(e, 'E_SOCKET_UNAVAILABLE') && isNotListening(e));
  assert.equal(other.connections(), 0);
  // The operator's own --socket may be a symlink.
  (await connectSocket(join(runDir, '..', 'other.sock'), { followSymlink: true })).destroy();
  symlinkSync(join(dir, 'other.sock'), join(dir, 'mine.sock'));
  (await connectSocket(join(dir, 'mine.sock'), { followSymlink: true })).destroy();
  // Connections are accepted in order: once these two are counted, none came before them.
  await pollUntil("the two connections of the operator's own paths", () => other.connections() >= 2);
  assert.equal(other.connections(), 2);
});

test("connectSocket: once a symlink is renamed into the socket's place, connects reach neither it nor the socket it names", async (t) => {
  const dir = tempDir(t);
  const other = await listener(t, join(dir, 'other.sock'));
  const runDir = join(dir, 'run');
  mkdirSync(runDir);
  const own = await listener(t, join(runDir, 'jackin.sock'));
  // Keep the real socket reachable under another name, and swap a symlink in while connects are under way.
  symlinkSync(join(dir, 'other.sock'), join(runDir, 'planted'));
  const attempts: Array<Promise<unknown>> = [];
  for (let i = 0; i < 50; i++) {
    attempts.push(
      connectSocket(join(runDir, 'jackin.sock')).then(
        (s) => s.destroy(),
        () => undefined,
      ),
    );
    if (i === 25) renameSync(join(runDir, 'planted'), join(runDir, 'jackin.sock'));
  }
  await Promise.all(attempts);
  // A marker connection: connections are accepted in order, so once it is counted every earlier one was too.
  (await connectSocket(join(dir, 'other.sock'))).destroy();
  await pollUntil('the marker connection', () => other.connections() >= 1);
  assert.equal(other.connections(), 1, 'no connection reached the socket the symlink names');
  assert.ok(own.connections() > 0);
});

test('connectSocket: a missing socket and a stale one still read as "not listening"', async (t) => {
  const dir = tempDir(t);
  await assert.rejects(connectSocket(join(dir, 'missing.sock')), (e) => isNotListening(e) && /no socket at/.test((e as Error).message));
});
