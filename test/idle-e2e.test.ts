// Idle costs nothing: an attached `jackin run` session whose program waits for input wakes neither the
// capsule nor the host (no timer polls anything). Counted as context switches of every thread of each
// process over a few seconds, after the session settled.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { capsulePid } from './helpers/capsules.ts';
import { paneFor, startSession } from './helpers/jackin-cli.ts';
import { pollUntil } from './helpers/poll.ts';
import { shellQuote } from './helpers/tmux.ts';
import { childPids, wakeups } from './helpers/wakeups.ts';

/** How long the session is watched once idle. */
const WINDOW_MS = 3_000;
/**
 * Wake-ups allowed per process over the window. Not zero: V8 may finish a collection or a compile task left
 * from the start-up once. A poll shows at once: the capsule's old 50 ms exit check woke it 60 times in 3 s.
 */
const MAX_WAKEUPS = 4;

test('an idle attached session wakes neither the capsule nor the host', async (t) => {
  const pane = await paneFor(t);
  const program = `sh -c ${shellQuote("printf 'IDLE-%s' READY; exec cat")}`;
  await startSession(pane, 'idle', 'IDLE-READY', program);
  const capsule = await capsulePid(pane.jackinHome, 'idle');
  const shell = Number(await pane.display('#{pane_pid}'));
  const host = await pollUntil('the jackin host process under the pane\'s shell', () => childPids(shell)[0]);
  // Settled: the first repaint went out, start-up work (compiles, collections) is done.
  await sleep(1_500);
  const before = { capsule: wakeups(capsule), host: wakeups(host) };
  await sleep(WINDOW_MS);
  const woken = { capsule: wakeups(capsule) - before.capsule, host: wakeups(host) - before.host };
  assert.ok(woken.capsule <= MAX_WAKEUPS && woken.host <= MAX_WAKEUPS, `wake-ups in ${WINDOW_MS} ms of idle: ${JSON.stringify(woken)}`);
  // Still working after the silence: a key reaches the program and its echo comes back.
  await pane.type('still-here');
  await pane.waitForText('still-here');
});
