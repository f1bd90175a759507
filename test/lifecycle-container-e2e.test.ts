// End-to-end on a real Podman engine: `jackin run -d --image` starts the container and prints its name; a
// program that ends removes its container whichever jackin was attached last (a reattach after a detach),
// or when none was; `jackin rm` refuses a running container and removes a stopped one of jackin's. Every
// container is removed by the exact name the test gave it.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { INNER_PROMPT, INNER_SHELL, JACKIN, paneFor, runJackin, waitForInnerShell, waitForJackinExit } from './helpers/jackin-cli.ts';
import { glibcTestImage, testContainer } from './helpers/podman-image.mjs';
import { pollUntil } from './helpers/poll.ts';
import { testDir } from './helpers/test-run.ts';
import { shellQuote } from './helpers/tmux.ts';
import { CONTAINER_LABEL } from '../src/host/instances/container-run-argv.ts';
import { wakeups } from './helpers/wakeups.ts';

const execFileP = promisify(execFile);
const CONTAINER_START_MS = 90_000;
const PALETTE_KEY = [0x1c];

/** Every container of that exact name, running or not (`podman ps -a`): its name and status (`Up 2 seconds`, `Exited (0)`). */
async function containersNamed(name: string): Promise<string> {
  return (await execFileP('podman', ['ps', '-a', '--filter', `name=^${name}$`, '--format', '{{.Names}} {{.Status}}'])).stdout.trim();
}

function workspace(t: TestContext): string {
  return testDir(t, 'jackin-life-ws-', { shared: true });
}

test('podman: run -d --image, attach, detach, reattach, exit: the container is removed; jackin rm refused it while it ran', { timeout: 240_000 }, async (t) => {
  const name = testContainer(t, 'podman-life', 'podman');
  const image = await glibcTestImage('podman');
  const pane = await paneFor(t);
  const ws = workspace(t);
  await pane.typeLine(
    `clear; ${JACKIN} run -d --image ${image.ref} --engine podman --name ${name} --workspace ${shellQuote(ws)} -- ${INNER_SHELL}; echo "jackin-rc=$?"`,
  );
  const started = await pane.waitForText(/^jackin-rc=\d+$/m, { timeoutMs: CONTAINER_START_MS });
  assert.match(started, new RegExp(`^${name}\\njackin-rc=0$`, 'm'), 'the name alone on stdout, then 0');
  assert.match(await containersNamed(name), / Up /, 'running');

  const env = { ...process.env, JACKIN_HOME: pane.jackinHome };
  const refused = await runJackin(['rm', name], env, { timeoutMs: 60_000 });
  assert.equal(refused.code, 1);
  assert.match(refused.stderr, /is running.*jackin stop.*\(E_INSTANCE_RUNNING\)/u);
  assert.equal((await runJackin(['logs', '--tail', '5', name], env, { timeoutMs: 60_000 })).code, 0, 'logs reads the container through podman logs');

  await pane.typeLine(`clear; ${JACKIN} attach ${name}; echo "jackin-rc=$?"`);
  await pane.waitForText(INNER_PROMPT, { timeoutMs: CONTAINER_START_MS });
  await pane.sendBytes([...PALETTE_KEY, ...Buffer.from('d')]);
  assert.equal(await waitForJackinExit(pane), 0, 'a detach is a clean exit');
  await pane.typeLine(`clear; ${JACKIN} attach ${name}; echo "jackin-rc=$?"`);
  // The detached session's screen (its prompt, and jackin-rc=0) is up until `clear` runs: wait for the inner
  // shell's answer, so the exit status read next is the reattached session's.
  await waitForInnerShell(pane, CONTAINER_START_MS);
  await pane.typeLine('exit 0');
  assert.equal(await waitForJackinExit(pane, 30_000), 0);
  // Not the first jackin (run -d ended long ago): the program's end removes the container.
  await pollUntil('the container to be removed', async () => (await containersNamed(name)) === '', {
    timeoutMs: 30_000,
    last: () => containersNamed(name),
  });
  // The reaper removes the record right after the container.
  await pollUntil('its record to go with it', () => !existsSync(join(pane.jackinHome, 'containers', `${name}.json`)), { timeoutMs: 10_000 });
});

test('podman: a run -d --image program that ends with nobody attached leaves no container', { timeout: 240_000 }, async (t) => {
  const name = testContainer(t, 'podman-life-alone', 'podman');
  const image = await glibcTestImage('podman');
  const home = testDir(t, 'jackin-life-home-');
  const env = { ...process.env, JACKIN_HOME: home };
  const r = await runJackin(
    ['run', '-d', '--image', image.ref, '--engine', 'podman', '--name', name, '--workspace', workspace(t), '--', 'sh', '-c', 'sleep 1'],
    env,
    { timeoutMs: CONTAINER_START_MS },
  );
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, `${name}\n`);
  assert.notEqual(await containersNamed(name), '', 'the container was started');
  // The capsule gives a first host some seconds to collect the status, then ends; the container goes.
  await pollUntil('the container to be removed', async () => (await containersNamed(name)) === '', {
    timeoutMs: 60_000,
    last: () => containersNamed(name),
  });
});

test("podman: jackin rm removes a stopped container carrying jackin's label, and its record", { timeout: 120_000 }, async (t) => {
  const name = testContainer(t, 'podman-life-rm', 'podman');
  const image = await glibcTestImage('podman');
  const home = testDir(t, 'jackin-life-home-');
  await execFileP('podman', ['create', '--name', name, '--label', `${CONTAINER_LABEL}=${name}`, image.ref, 'true']);
  mkdirSync(join(home, 'containers'), { recursive: true });
  writeFileSync(join(home, 'containers', `${name}.json`), JSON.stringify({ engine: 'podman', container: name, image: image.ref }));
  const r = await runJackin(['rm', name], { ...process.env, JACKIN_HOME: home }, { timeoutMs: 60_000 });
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, `removed ${name} (podman container)\n`);
  assert.equal(await containersNamed(name), '');
  assert.equal(existsSync(join(home, 'containers', `${name}.json`)), false);
});

/** The reaper of `container` (its sh, found by its exact arguments), and every process under it. */
function reaperTree(container: string): number[] {
  const all = readdirSync('/proc').filter((p) => /^\d+$/.test(p));
  const argsOf = (pid: string): string[] => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, 'latin1').split('\0');
    } catch {
      return [];
    }
  };
  const root = all.find((p) => {
    const a = argsOf(p);
    return a[0] === 'sh' && a[3] === 'jackin-reaper' && a[5] === container;
  });
  if (root === undefined) return [];
  const tree = [Number(root)];
  for (let grew = true; grew; ) {
    grew = false;
    for (const p of all) {
      if (tree.includes(Number(p))) continue;
      const parent = childParent(p);
      if (parent !== null && tree.includes(parent)) {
        tree.push(Number(p));
        grew = true;
      }
    }
  }
  return tree;
}

function childParent(pid: string): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return null;
  }
}

test("podman: the reaper of a running container sleeps: it watches the container's process, not a polling engine wait", { timeout: 180_000 }, async (t) => {
  const name = testContainer(t, 'podman-life-reaper', 'podman');
  const image = await glibcTestImage('podman');
  const home = testDir(t, 'jackin-life-home-');
  const env = { ...process.env, JACKIN_HOME: home };
  const r = await runJackin(
    ['run', '-d', '--image', image.ref, '--engine', 'podman', '--name', name, '--workspace', workspace(t), '--', 'sh', '-c', 'exec cat'],
    env,
    { timeoutMs: CONTAINER_START_MS },
  );
  assert.equal(r.code, 0, r.stderr);
  const tree = await pollUntil('the reaper to watch the container with tail --pid', () => {
    const pids = reaperTree(name);
    const watching = pids.some((p) => readFileSync(`/proc/${p}/cmdline`, 'latin1').startsWith('tail\0--pid='));
    return watching ? pids : undefined;
  });
  const before = tree.reduce((n, p) => n + wakeups(p), 0);
  await sleep(3_000);
  const woken = tree.reduce((n, p) => n + wakeups(p), 0) - before;
  // tail looks every 2 s; `podman wait` alone woke 250 to 400 times in 3 s.
  assert.ok(woken <= 6, `the reaper woke ${woken} times in 3 s`);
  // It still does its job: the program ends, the container and its record go.
  assert.equal((await runJackin(['stop', name], env, { timeoutMs: 60_000 })).code, 0);
  await pollUntil('the container to be removed', async () => (await containersNamed(name)) === '', {
    timeoutMs: 60_000,
    last: () => containersNamed(name),
  });
  await pollUntil('its record to go with it', () => !existsSync(join(home, 'containers', `${name}.json`)), { timeoutMs: 10_000 });
});
