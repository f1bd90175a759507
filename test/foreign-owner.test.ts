// A run directory whose socket belongs to another user: the usual case of a capsule running as root in a
// container while the operator is not root. The operator is uid 1000 here (`setpriv`); no container is
// needed to make a root-owned socket, so these run locally (the container versions are in container-e2e).
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { CAPSULE_BIN, JACKIN_BIN } from './helpers/jackin-cli.ts';
import { pollUntil } from './helpers/poll.ts';
import { stopChild } from './helpers/stop-child.ts';
import { socketAddress } from '../src/transport/socket-address.ts';

const execFileP = promisify(execFile);
const OPERATOR = 1000;

/** A home for uid 1000 (reachable by it) with one run directory it owns. */
function operatorHome(t: TestContext, instance: string): { home: string; jackinHome: string; runDir: string } {
  const root = mkdtempSync(join(tmpdir(), 'jackin-owner-'));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  chmodSync(root, 0o755);
  const home = join(root, 'home');
  const jackinHome = join(home, '.jackin');
  const runDir = join(jackinHome, 'sockets', instance);
  mkdirSync(runDir, { recursive: true, mode: 0o700 });
  for (const d of [home, jackinHome, join(jackinHome, 'sockets'), runDir]) chownSync(d, OPERATOR, OPERATOR);
  return { home, jackinHome, runDir };
}

function asOperator(args: string[], env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  const argv = ['--reuid=1000', '--regid=1000', '--clear-groups', 'env', ...Object.entries(env).map(([k, v]) => `${k}=${v}`), process.execPath, ...args];
  return execFileP('setpriv', argv, { encoding: 'utf8' }).then(
    (r) => ({ code: 0, stdout: r.stdout, stderr: r.stderr }),
    (e: { code?: number; stdout?: string; stderr?: string }) => ({
      code: typeof e.code === 'number' ? e.code : -1,
      stdout: e.stdout ?? '',
      stderr: e.stderr ?? '',
    }),
  );
}

test('a live socket owned by root is "not accessible (owned by uid 0)" to ls and doctor, never stale, and attach names the permission problem', async (t) => {
  const { home, jackinHome, runDir } = operatorHome(t, 'rootcap');
  const socket = join(runDir, 'jackin.sock');
  const server = createServer((s) => s.destroy());
  // Through its directory when the path is longer than a socket address holds (a long TMPDIR).
  const address = socketAddress(socket);
  await new Promise<void>((r) => server.listen(address.address, r)).finally(address.release);
  t.after(() => new Promise<void>((r) => server.close(() => r())));
  chmodSync(socket, 0o600);
  const env = { HOME: home, JACKIN_HOME: jackinHome, PATH: process.env['PATH'] ?? '/usr/bin:/bin' };

  const ls = await asOperator([JACKIN_BIN, 'ls'], env);
  assert.equal(ls.code, 0, ls.stderr);
  assert.match(ls.stdout, /^rootcap\s+not accessible \(owned by uid 0\)\s/m);
  const json = await asOperator([JACKIN_BIN, 'ls', '--json'], env);
  const [entry] = JSON.parse(json.stdout) as Array<{ state: string; owner: number }>;
  assert.equal(entry?.state, 'inaccessible');
  assert.equal(entry?.owner, 0);

  const doctor = await asOperator([JACKIN_BIN, 'doctor', '--json'], env);
  const check = (JSON.parse(doctor.stdout) as { checks: Array<{ name: string; status: string; detail: string; fix?: string }> }).checks.find(
    (c) => c.name === 'instance:rootcap',
  );
  assert.equal(check?.status, 'error');
  assert.match(check!.detail, /^not accessible \(owned by uid 0\)/);
  assert.doesNotMatch(check!.fix ?? '', /remove/, 'never advises removing a directory that may be live');
  assert.match(check?.fix ?? '', /--user/);

  // A docker client is on PATH here: the old fallback would have hidden the cause behind its error.
  const attach = await asOperator([JACKIN_BIN, 'attach', 'rootcap'], env);
  assert.equal(attach.code, 1);
  assert.match(attach.stderr, /permission denied on .*jackin\.sock \(owned by uid 0, you are uid 1000\).*--user/);
  assert.doesNotMatch(attach.stderr, /docker exec|Docker daemon/);
  assert.equal(statSync(socket).uid, 0, 'nothing was changed');
});

test('a capsule started as a non-root user replaces the socket and capsule.json a killed root capsule left in its run directory', async (t) => {
  const { runDir } = operatorHome(t, 'leftover');
  const socket = join(runDir, 'jackin.sock');
  // A root "capsule" that dies by SIGKILL: its socket file stays, owned by root, mode 0600.
  // It listens from its run directory on a relative name, so a long TMPDIR cannot overflow the socket address.
  const dead = spawn(
    process.execPath,
    ['-e', `require('net').createServer().listen('jackin.sock', () => { require('fs').chmodSync('jackin.sock', 0o600); console.log('up'); })`],
    { cwd: runDir, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  await new Promise<void>((r) => dead.stdout!.once('data', () => r()));
  dead.kill('SIGKILL');
  await new Promise((r) => dead.once('exit', r));
  writeFileSync(join(runDir, 'capsule.json'), '{"pid": 1}\n', { mode: 0o600 });
  assert.equal(statSync(socket).uid, 0);

  const capsule = spawn(
    'setpriv',
    ['--reuid=1000', '--regid=1000', '--clear-groups', process.execPath, CAPSULE_BIN, 'serve', '--run-dir', runDir, '--', 'sleep', '600'],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  capsule.stderr!.on('data', (b: Buffer) => (stderr += b.toString()));
  t.after(() => stopChild(capsule));
  await pollUntil(
    'the new capsule to own the socket and capsule.json',
    () => {
      if (capsule.exitCode !== null) throw new Error(`capsule exited ${capsule.exitCode}: ${stderr}`);
      try {
        return statSync(socket).uid === OPERATOR && statSync(join(runDir, 'capsule.json')).uid === OPERATOR;
      } catch {
        return false;
      }
    },
    { timeoutMs: 20_000, last: () => stderr },
  );
});
