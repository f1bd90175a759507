import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { JackinError } from '../errors.ts';
import { runDirSocketPath } from './instance-paths.ts';
import { connectSocket } from './socket.ts';
import { acrossVmBoundary, forgetBoundary, rememberBoundary, rememberedBoundary } from './socket-boundary.ts';

function tempDir(t: TestContext): string {
  const dir = mkdtempSync(join(tmpdir(), 'jackin-boundary-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** A socket file nothing listens on: bound by a process killed before it could unlink it (by a relative name: the path may be long). */
function deadSocket(dir: string): string {
  const r = spawnSync(process.execPath, ['-e', 'require("net").createServer().listen("jackin.sock", () => process.kill(process.pid, "SIGKILL"))'], {
    cwd: dir,
  });
  assert.equal(r.signal, 'SIGKILL', r.stderr.toString());
  const path = runDirSocketPath(dir);
  assert.ok(existsSync(path));
  return path;
}

async function refusal(path: string): Promise<JackinError> {
  const e = await connectSocket(path).then(
    (s) => {
      s.destroy();
      return null;
    },
    (err: unknown) => err,
  );
  assert.ok(e instanceof JackinError, 'the dead socket refuses');
  return e;
}

test('a socket that refuses beside a capsule.json is a VM boundary; without capsule.json it is a capsule not up yet', async (t) => {
  const dir = tempDir(t);
  const path = deadSocket(dir);
  const e = await refusal(path);
  assert.equal((e.cause as NodeJS.ErrnoException).code, 'ECONNREFUSED');
  assert.equal(await acrossVmBoundary(path, e), false, 'no capsule.json: starting');
  writeFileSync(join(dir, 'capsule.json'), '{}');
  assert.equal(await acrossVmBoundary(path, e), true);
});

test('no socket file, or a refusal of another kind, is no boundary', async (t) => {
  const dir = tempDir(t);
  writeFileSync(join(dir, 'capsule.json'), '{}');
  const path = runDirSocketPath(dir);
  const missing = await refusal(path);
  assert.equal((missing.cause as NodeJS.ErrnoException).code, 'ENOENT');
  assert.equal(await acrossVmBoundary(path, missing), false);
  const denied = new JackinError('E_SOCKET_UNAVAILABLE', 'denied', { cause: Object.assign(new Error('denied'), { code: 'EACCES' }) });
  deadSocket(dir);
  assert.equal(await acrossVmBoundary(path, denied), false);
});

test('the boundary is remembered for the same socket file only, and forgotten on request', async (t) => {
  const home = tempDir(t);
  const dir = tempDir(t);
  const path = deadSocket(dir);
  assert.equal(await rememberedBoundary(home, 'agent', path), false);
  await rememberBoundary(home, 'agent', path);
  assert.equal(await rememberedBoundary(home, 'agent', path), true);
  assert.equal(await rememberedBoundary(home, 'other', path), false, 'per instance');
  // A new capsule binds a new socket file: what was remembered no longer holds, and is dropped.
  rmSync(path);
  deadSocket(dir);
  assert.equal(await rememberedBoundary(home, 'agent', path), false);
  assert.equal(existsSync(join(home, 'relayed', 'agent.json')), false);
  await rememberBoundary(home, 'agent', path);
  await forgetBoundary(home, 'agent');
  assert.equal(existsSync(join(home, 'relayed', 'agent.json')), false);
});
