/**
 * `jackin run --name N` reuses N's run directory, which a container (an earlier `jackin run --image --name
 * N`) could write: what it left in capsule.log's place (a symlink to a file of the operator's, a FIFO)
 * never makes the host append the capsule's output elsewhere, or wait for ever.
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, execFileSync, type ExecFileException } from 'node:child_process';
import { lstatSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stopCapsules } from './helpers/capsules.ts';
import { JACKIN_BIN } from './helpers/jackin-cli.ts';

function home(t: TestContext): string {
  const dir = mkdtempSync(join(tmpdir(), 'jackin-reuse-'));
  t.after(async () => {
    await stopCapsules(dir);
    rmSync(dir, { recursive: true, force: true });
  });
  return dir;
}

/** `jackin run --name NAME -- sh -c 'echo ran'`, stdin not a terminal; resolves with its status and output. */
function jackinRun(dir: string, name: string): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      [JACKIN_BIN, 'run', '--name', name, '--', 'sh', '-c', 'echo ran'],
      { env: { ...process.env, JACKIN_HOME: dir }, timeout: 60_000 },
      (e: ExecFileException | null, stdout, stderr) => {
        resolve({ code: e === null ? 0 : typeof e.code === 'number' ? e.code : -1, out: stdout + stderr });
      },
    );
    child.stdin?.end();
  });
}

test("jackin run: a symlink left in capsule.log's place is replaced, and the file it named is untouched", { timeout: 120_000 }, async (t) => {
  const dir = home(t);
  const victim = join(dir, 'operators-file');
  writeFileSync(victim, 'original\n');
  const runDir = join(dir, 'sockets', 'reuse');
  mkdirSync(runDir, { recursive: true, mode: 0o700 });
  symlinkSync(victim, join(runDir, 'capsule.log'));
  const r = await jackinRun(dir, 'reuse');
  assert.equal(r.code, 0, r.out);
  assert.equal(readFileSync(victim, 'utf8'), 'original\n');
  assert.ok(lstatSync(join(runDir, 'capsule.log')).isFile());
  assert.match(readFileSync(join(runDir, 'capsule.log'), 'utf8'), /program exited with status 0/u);
});

test("jackin run: a FIFO left in capsule.log's place is replaced instead of waited on", { timeout: 120_000 }, async (t) => {
  const dir = home(t);
  const runDir = join(dir, 'sockets', 'fifo');
  mkdirSync(runDir, { recursive: true, mode: 0o700 });
  execFileSync('mkfifo', [join(runDir, 'capsule.log')]);
  const r = await jackinRun(dir, 'fifo');
  assert.equal(r.code, 0, r.out);
  assert.ok(lstatSync(join(runDir, 'capsule.log')).isFile());
});
