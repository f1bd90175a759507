// Idle costs nothing: an attached `jackin run` session whose program waits for input wakes neither the
// capsule nor the host (no timer polls anything), counted as context switches of every thread of each
// process over a few seconds after the session settled; and neither holds the Node modules only a transfer
// needs (src/lazy-builtins.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { capsulePid, runDir } from './helpers/capsules.ts';
import { CAPSULE_BIN, JACKIN_BIN, paneFor, startSession } from './helpers/jackin-cli.ts';
import { stopChild } from './helpers/stop-child.ts';
import { pollUntil } from './helpers/poll.ts';
import { shellQuote, type TmuxPane } from './helpers/tmux.ts';
import { childPids, wakeups } from './helpers/wakeups.ts';

/** How long the session is watched once idle. */
const WINDOW_MS = 3_000;
/**
 * Wake-ups allowed per process over the window. Not zero: V8 may finish a collection or a compile task left
 * from the start-up once. A poll shows at once: the capsule's old 50 ms exit check woke it 60 times in 3 s.
 */
const MAX_WAKEUPS = 4;

/** Starts a session whose program waits for input; its capsule's and host's pids once it settled. */
async function idleSession(pane: TmuxPane, name: string): Promise<{ capsule: number; host: number }> {
  const marker = name.toUpperCase();
  await startSession(pane, name, `${marker}-READY`, `sh -c ${shellQuote(`printf '${marker}-%s' READY; exec cat`)}`);
  const capsule = await capsulePid(pane.jackinHome, name);
  const shell = Number(await pane.display('#{pane_pid}'));
  const host = await pollUntil("the jackin host process under the pane's shell", () => childPids(shell)[0]);
  // Settled: the first repaint went out, start-up work (compiles, collections) is done.
  await sleep(1_500);
  return { capsule, host };
}

test('an idle attached session wakes neither the capsule nor the host', async (t) => {
  const pane = await paneFor(t);
  const { capsule, host } = await idleSession(pane, 'idle');
  const before = { capsule: wakeups(capsule), host: wakeups(host) };
  await sleep(WINDOW_MS);
  const woken = { capsule: wakeups(capsule) - before.capsule, host: wakeups(host) - before.host };
  assert.ok(woken.capsule <= MAX_WAKEUPS && woken.host <= MAX_WAKEUPS, `wake-ups in ${WINDOW_MS} ms of idle: ${JSON.stringify(woken)}`);
  // Still working after the silence: a key reaches the program and its echo comes back.
  await pane.type('still-here');
  await pane.waitForText('still-here');
});

test('an idle attached session has not loaded node:crypto or node:zlib, which only moving images, files or copies needs', async (t) => {
  // lazy-builtins.ts: on Node 24 each process held 0.6 MiB more while idle with them loaded at start.
  const dir = mkdtempSync(join(tmpdir(), 'jk-builtins-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const preload = fileURLToPath(new URL('./fixtures/idle/record-builtins.cjs', import.meta.url));
  const pane = await paneFor(t, { env: { NODE_OPTIONS: `--require=${preload}`, JACKIN_TEST_BUILTINS_DIR: dir } });
  const { capsule, host } = await idleSession(pane, 'builtins');
  const loaded = async (pid: number): Promise<string[]> => {
    assert.ok(existsSync(join(dir, `${pid}.ready`)), `the recorder was not preloaded into process ${pid} (NODE_OPTIONS did not reach it)`);
    process.kill(pid, 'SIGUSR2');
    const text = await pollUntil(`the built-ins of process ${pid}`, () => {
      try {
        return readFileSync(join(dir, `${pid}.txt`), 'utf8');
      } catch {
        return undefined;
      }
    });
    return text.split('\n').filter((l) => l.startsWith('NativeModule '));
  };
  for (const [who, pid] of [
    ['capsule', capsule],
    ['host', host],
  ] as const) {
    const modules = await loaded(pid);
    // The list is real: both load the socket module they work with.
    assert.ok(modules.includes('NativeModule net'), `${who}: ${modules.join(', ')}`);
    assert.deepEqual(
      modules.filter((m) => /^NativeModule (crypto|zlib)$/.test(m)),
      [],
      `${who} loaded them while idle`,
    );
  }
  // The signal changed nothing for the session.
  await pane.type('still-here');
  await pane.waitForText('still-here');
});

test('an idle jackin forward, its ports announced to the capsule (jackin-capsule ports lists them), wakes neither itself nor the capsule', async (t) => {
  // Stopped before the pane's directories go (hooks run in the order they were added): its last log line goes there.
  let child: ChildProcess | undefined;
  t.after(() => (child === undefined ? undefined : stopChild(child, 'SIGINT')));
  const pane = await paneFor(t);
  const { capsule } = await idleSession(pane, 'idlefwd');
  child = spawn(process.execPath, [JACKIN_BIN, 'forward', 'idlefwd', ':9'], {
    env: { ...process.env, JACKIN_HOME: pane.jackinHome },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (b: Buffer) => (out += b.toString()));
  const url = await pollUntil('jackin forward to print its URL', () => /^http:\/\/localhost:\d+\/$/m.exec(out)?.[0]);
  const listed = execFileSync(process.execPath, [CAPSULE_BIN, 'ports', '--run-dir', runDir(pane.jackinHome, 'idlefwd')], { encoding: 'utf8' });
  assert.match(listed, new RegExp(`^${url} -> container port 9 \\(jackin forward\\)$`, 'm'));
  await sleep(1_500);
  const forward = child.pid!;
  const before = { capsule: wakeups(capsule), forward: wakeups(forward) };
  await sleep(WINDOW_MS);
  const woken = { capsule: wakeups(capsule) - before.capsule, forward: wakeups(forward) - before.forward };
  assert.ok(woken.capsule <= MAX_WAKEUPS && woken.forward <= MAX_WAKEUPS, `wake-ups in ${WINDOW_MS} ms of idle: ${JSON.stringify(woken)}`);
});
