/**
 * `jackin stop NAME` on an instance without a container record signals the pid the capsule names (its
 * status reply, capsule.json): only once that process shows it serves the instance's run directory. A
 * container whose run directory is bind-mounted controls both, so a hostile capsule naming another process
 * of the operator (or -1: every process the operator may signal) gets nothing signalled.
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { encodeControlMessage } from '../src/protocol/index.ts';
import { capsulePid, isAlive, stopCapsules } from './helpers/capsules.ts';
import { startFakeCapsule } from './helpers/fake-capsule.ts';
import { CAPSULE_BIN, runJackin, type JackinResult } from './helpers/jackin-cli.ts';
import { pollUntil } from './helpers/poll.ts';

function jackin(args: string[], home: string): Promise<JackinResult> {
  return runJackin(args, { ...process.env, JACKIN_HOME: home }, { timeoutMs: 60_000 });
}

/** A process of the operator's that a hostile capsule would like stopped; killed at the end of the test. */
function victim(t: TestContext): number {
  const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
  t.after(() => child.kill('SIGKILL'));
  assert.ok(child.pid !== undefined);
  return child.pid;
}

test("jackin stop signals no process a capsule names unless that process serves the instance's run directory", async (t) => {
  const target = victim(t);
  for (const pid of [target, -1, 0, 1]) {
    const fake = await startFakeCapsule(t, {
      name: 'evil',
      control: (socket) => socket.end(encodeControlMessage({ ok: true, name: 'evil', program: ['bash'], pid, workspace: '/w', attached: false, clients: 0 })),
    });
    // capsule.json as a container would write it: no PID namespace of its own, the same pid.
    writeFileSync(join(fake.home, 'sockets', 'evil', 'capsule.json'), JSON.stringify({ pid, name: 'evil', program: ['bash'], workspace: '/w' }));
    const r = await jackin(['stop', 'evil'], fake.home);
    assert.equal(r.code, 1, `pid ${pid}: ${r.stdout}${r.stderr}`);
    assert.match(r.stderr, /E_NO_INSTANCE|not stopping evil/u);
    assert.match(r.stderr, /nothing was signalled/u);
    assert.equal(r.stdout, '');
    await fake.close();
  }
  assert.ok(isAlive(target), 'the named process was left alone');
  assert.ok(isAlive(process.pid));
});

test("jackin stop still stops a local capsule: its process serves the instance's run directory", async (t) => {
  const home = mkdtempSync(join(tmpdir(), 'jackin-stop-'));
  t.after(async () => {
    await stopCapsules(home);
    rmSync(home, { recursive: true, force: true });
  });
  const child = spawn(process.execPath, [CAPSULE_BIN, 'serve', '--run-dir', join(home, 'sockets', 'local'), '--name', 'local', '--', 'sleep', '600'], {
    detached: true,
    stdio: 'ignore',
  });
  child.unref();
  const pid = await capsulePid(home, 'local', 20_000);
  const r = await jackin(['stop', 'local'], home);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, 'stopped local\n');
  await pollUntil('the capsule process to end', () => !isAlive(pid), { timeoutMs: 20_000 });
});
