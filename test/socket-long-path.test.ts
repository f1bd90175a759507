// A capsule under a long JACKIN_HOME or run directory (a long TMPDIR, as macOS has) listens where it says and hosts reach it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { listenPrivate } from '../src/capsule/session/run-dir.ts';
import { connectSocket } from '../src/transport/socket.ts';
import { MAX_SOCKET_PATH_BYTES } from '../src/transport/socket-address.ts';

test('socket address: a socket whose path is longer than a socket address holds is made and reached at that exact path', async (t) => {
  const root = mkdtempSync(join(tmpdir(), 'jackin-sockaddr-'));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  const dir = join(root, 'd'.repeat(60), 'e'.repeat(40));
  mkdirSync(dir, { recursive: true });
  const path = join(dir, 'jackin.sock');
  assert.ok(Buffer.byteLength(path) > MAX_SOCKET_PATH_BYTES);
  const server = createServer((s) => s.end('hello'));
  t.after(() => server.close());
  await listenPrivate(server, path);
  // Node would have cut the path short and made the socket under a truncated name.
  assert.deepEqual(readdirSync(dir), ['jackin.sock']);
  assert.ok(existsSync(path));
  for (const followSymlink of [false, true]) {
    const sock = await connectSocket(path, { followSymlink });
    const got = await new Promise<string>((resolve) => {
      let text = '';
      sock.on('data', (b: Buffer) => (text += b.toString()));
      sock.on('end', () => resolve(text));
    });
    sock.destroy();
    assert.equal(got, 'hello', `followSymlink ${followSymlink}`);
  }
});
