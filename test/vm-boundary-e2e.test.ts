// A run directory shared across a VM boundary (Docker Desktop, colima, a Podman machine), on a real Podman
// engine: the host sees the capsule's capsule.json and a socket file that does not connect, while the
// container runs and its capsule listens on its side. The boundary is made with a private mount namespace
// (unshare -m): in it, the instance's run directory is a tmpfs holding a copy of capsule.json and a socket
// file nothing listens on, so `jackin attach` there sees what a macOS host sees. It must go to the engine's
// exec relay at once, say why with --verbose, and remember it: a second attach says it was found before.
// The container is removed by the exact name the test gave it; the namespace and its tmpfs end with the shell.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { INNER_PROMPT, INNER_SHELL, JACKIN, paneFor, runJackin, waitForJackinExit } from './helpers/jackin-cli.ts';
import { glibcTestImage, testContainer } from './helpers/podman-image.mjs';
import { pollUntil } from './helpers/poll.ts';
import { testDir } from './helpers/test-run.ts';
import { shellQuote } from './helpers/tmux.ts';

const CONTAINER_START_MS = 90_000;
const PALETTE_KEY = [0x1c];

test('podman: a run directory whose socket does not connect from the host goes to the exec relay at once, and remembers it', {
  timeout: 240_000,
}, async (t) => {
  const name = testContainer(t, 'podman-vm-boundary', 'podman');
  const image = await glibcTestImage('podman');
  const pane = await paneFor(t);
  const ws = testDir(t, 'jackin-boundary-ws-', { shared: true });
  const logs = testDir(t, 'jackin-boundary-logs-');
  const env = { ...process.env, JACKIN_HOME: pane.jackinHome };
  const started = await runJackin(
    ['run', '-d', '--image', image.ref, '--engine', 'podman', '--name', name, '--workspace', ws, '--', 'sh', '-c', INNER_SHELL],
    env,
    { timeoutMs: CONTAINER_START_MS },
  );
  assert.equal(started.code, 0, started.stderr);
  const runDir = join(pane.jackinHome, 'sockets', name);
  // The capsule writes capsule.json just after its socket answers.
  await pollUntil('the capsule to write capsule.json in the shared run directory', () => existsSync(join(runDir, 'capsule.json')), { timeoutMs: 10_000 });

  // In a mount namespace of its own, the run directory is what a VM boundary leaves on the host.
  const v1 = join(logs, 'first.log');
  const v2 = join(logs, 'second.log');
  const copy = join(logs, 'capsule.json');
  const rc1 = join(logs, 'first.rc');
  // Killed once bound, so nothing unlinks the socket file (Node removes it when the server closes). Bound
  // by a relative name from inside the directory: the full path can pass the 108 bytes a socket address holds.
  const deadSocket = `(cd "$R" && ${shellQuote(process.execPath)} -e 'require("net").createServer().listen("jackin.sock", () => process.kill(process.pid, "SIGKILL"))'; true)`;
  const script = [
    `R=${shellQuote(runDir)}`,
    `cp "$R/capsule.json" ${shellQuote(copy)}`,
    'mount -t tmpfs -o mode=0700 tmpfs "$R"',
    `cp ${shellQuote(copy)} "$R/capsule.json"`,
    deadSocket,
    `${JACKIN} attach ${name} --verbose 2>${shellQuote(v1)}`,
    `echo "$?" > ${shellQuote(rc1)}`,
    `exec ${JACKIN} attach ${name} --verbose 2>${shellQuote(v2)}`,
  ].join('; ');
  await pane.typeLine(`clear; unshare -m --propagation private sh -c ${shellQuote(script)}; echo "jackin-rc=$?"`);
  await pane.waitForText(INNER_PROMPT, { timeoutMs: CONTAINER_START_MS });
  await pane.typeLine('echo "boundary-$((6*7))"');
  await pane.waitForText(/^boundary-42$/m);
  const first = readFileSync(v1, 'utf8');
  assert.match(
    first,
    /transport: podman, because socket \S+jackin\.sock is there and its capsule is up \(capsule\.json\), but it does not connect from this host: .*VM boundary.*falling back to podman exec/u,
    first,
  );
  assert.ok(existsSync(join(pane.jackinHome, 'relayed', `${name}.json`)), 'the boundary is remembered for the instance');

  // Detach; the second attach in the same namespace (the same socket file) goes to the relay without trying it.
  await pane.sendBytes([...PALETTE_KEY, ...Buffer.from('d')]);
  // The second session repaints the screen at once: the first one's status is read from a file.
  assert.equal(await pollUntil('the first attach to end', () => (existsSync(rc1) ? readFileSync(rc1, 'utf8') : undefined), { timeoutMs: 30_000 }), '0\n');
  const second = await pollUntil('the second attach to say its transport', () => {
    const text = existsSync(v2) ? readFileSync(v2, 'utf8') : '';
    return text.includes('transport:') ? text : undefined;
  });
  assert.match(second, /transport: podman, because socket \S+ is there .*\(found before, remembered for [\w-]+\); falling back to podman exec/u, second);
  await pane.typeLine('echo "again-$((6*7))"');
  await pane.waitForText(/^again-42$/m);
  await pane.typeLine('exit 0');
  assert.equal(await waitForJackinExit(pane, 30_000), 0);
});
