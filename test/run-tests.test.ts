// scripts/run-tests.mjs cleans up after tests that did not: interrupted (node --test then runs no after-hook,
// and what the tests started in sessions of their own gets no signal), it stops the run's processes by pid
// and removes its containers by name; at a normal end, it reports a process or container a test left, and
// removes it. The run here is a real one, on a fixture test file that starts a process and a container.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { readdirSync, readFileSync, existsSync } from 'node:fs';
import { constants } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isAlive } from './helpers/capsules.ts';
import { busyboxTestImage, testContainer } from './helpers/podman-image.mjs';
import { pollUntil } from './helpers/poll.ts';
import { testDir } from './helpers/test-run.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
const FIXTURE = 'test/fixtures/run-tests/interrupted.mjs';

function containerState(name: string): string {
  try {
    return execFileSync('podman', ['inspect', '--type', 'container', '--format', '{{.State.Status}}', name], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
  } catch {
    return 'gone';
  }
}

/** The sleep the fixture started, while it is that process: a pid reused since is not it. */
function sleeperAlive(pid: number): boolean {
  if (!isAlive(pid)) return false;
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'latin1') === 'sleep\x00600\x00';
  } catch {
    return false;
  }
}

function withoutTestContext(): NodeJS.ProcessEnv {
  const { NODE_TEST_CONTEXT: _, ...env } = process.env;
  return env;
}

/** Starts run-tests on the fixture (`--unit`: no build) with a TMPDIR of the test's own; waits for the fixture's start. */
async function runFixture(t: Parameters<typeof testDir>[0] & { after: (fn: () => unknown) => void }, mode: 'wait' | 'leave') {
  const image = ((await busyboxTestImage('podman')) as { ref: string }).ref;
  const runnerTmp = testDir(t, 'jackin-runner-tmp-');
  const ready = join(testDir(t, 'jackin-runner-ready-'), 'ready.json');
  const name = testContainer(t, `runner-${mode}`, 'podman');
  const runner = spawn(process.execPath, ['scripts/run-tests.mjs', '--unit', FIXTURE], {
    cwd: root,
    // Without this test's NODE_TEST_CONTEXT: node --test refuses to run files from within a test file.
    env: { ...withoutTestContext(), TMPDIR: runnerTmp, FIXTURE_READY: ready, FIXTURE_CONTAINER: name, FIXTURE_IMAGE: image, FIXTURE_MODE: mode },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  runner.stderr.setEncoding('utf8').on('data', (d: string) => {
    stderr += d;
  });
  const exited = new Promise<number | null>((resolve) => runner.on('exit', (code) => resolve(code)));
  let sleeper = 0;
  t.after(async () => {
    // Still running (the test failed before it ended): a SIGTERM has it sweep its own run, the fixture's
    // test processes too; SIGKILL only if it does not end.
    if (runner.exitCode === null && runner.signalCode === null) {
      runner.kill('SIGTERM');
      const timer = setTimeout(() => runner.kill('SIGKILL'), 30_000);
      await exited;
      clearTimeout(timer);
    }
    if (sleeper !== 0 && sleeperAlive(sleeper)) process.kill(sleeper, 'SIGKILL');
  });
  sleeper = (
    await pollUntil(
      'the fixture to start its process and container',
      () => existsSync(ready) && (JSON.parse(readFileSync(ready, 'utf8')) as { sleeper: number }),
      {
        timeoutMs: 60_000,
        last: () => stderr,
      },
    )
  ).sleeper;
  return { runner, runnerTmp, name, sleeper, exited, stderr: () => stderr };
}

for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  test(`run-tests interrupted by ${signal}: the tests' process of its own session is stopped by pid, their container removed by name, the run's TMPDIR removed; 128 + the signal`, {
    timeout: 120_000,
  }, async (t) => {
    const run = await runFixture(t, 'wait');
    assert.ok(sleeperAlive(run.sleeper), 'the fixture started its process');
    assert.equal(containerState(run.name), 'running');
    assert.deepEqual(readdirSync(run.runnerTmp).length, 1, 'the run made its temporary directory');

    run.runner.kill(signal);
    const code = await run.exited;
    assert.equal(code, 128 + constants.signals[signal], run.stderr());
    assert.ok(!sleeperAlive(run.sleeper), `the process in a session of its own is stopped:\n${run.stderr()}`);
    assert.equal(containerState(run.name), 'gone', run.stderr());
    assert.deepEqual(readdirSync(run.runnerTmp), [], "the run's temporary directory is removed");
    assert.match(run.stderr(), new RegExp(`run-tests: ${signal}: stopping the tests`));
    assert.match(run.stderr(), new RegExp(`^run-tests: stopped process ${run.sleeper}: sleep 600$`, 'm'));
    assert.match(run.stderr(), new RegExp(`^run-tests: podman container ${run.name} \\(removed\\)$`, 'm'));
  });
}

test('run-tests at a normal end: a process and a container a test left are listed, the run fails, and both are removed', { timeout: 120_000 }, async (t) => {
  const run = await runFixture(t, 'leave');
  const code = await run.exited;
  assert.equal(code, 1, run.stderr());
  assert.match(run.stderr(), /run-tests: the tests left things behind/);
  assert.match(run.stderr(), new RegExp(`^  process ${run.sleeper} \\(cwd [^)]*\\): sleep 600$`, 'm'));
  assert.match(run.stderr(), new RegExp(`^  podman container ${run.name} \\(removed\\)$`, 'm'));
  assert.ok(!sleeperAlive(run.sleeper), 'the process is stopped');
  assert.equal(containerState(run.name), 'gone');
  assert.deepEqual(readdirSync(run.runnerTmp), [], "the run's temporary directory is removed");
});
