// End-to-end (tmux): a session is drawn on the terminal's alternate screen (JACKIN_ALT_SCREEN, default on), so
// a detach gives back the screen the operator had; a program's own alternate screen is kept inside the
// session, and leaving it brings back the program's normal screen, repainted by the capsule.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { INNER_PROMPT, START_TIMEOUT_MS, jackinRun, paneFor, waitForJackinExit } from './helpers/jackin-cli.ts';

const CTRL_BACKSLASH = 0x1c;
const BEFORE = /^before-42$/m;

test('alternate screen: the session hides the screen before it; a program leaving its own gets its normal screen back; a detach gives the first one back', async (t) => {
  const pane = await paneFor(t, { env: { JACKIN_ALT_SCREEN: 'on' } });
  await pane.typeLine('clear; echo before-$((6*7))');
  await pane.waitForText(BEFORE);
  await pane.typeLine(`${jackinRun('alt')}; echo "jackin-rc=$?"`);
  await pane.waitForText(INNER_PROMPT, { timeoutMs: START_TIMEOUT_MS });
  assert.doesNotMatch(await pane.capture(), BEFORE, "the operator's screen is not the session's");
  await pane.typeLine('echo main-$((1+1))');
  await pane.waitForText(/^main-2$/m);
  // A full-screen program: its own alternate screen, then back (read waits for a key in between).
  await pane.typeLine(`printf '\\033[?1049h'; echo alt-$((2+1)); read x; printf '\\033[?1049l'; echo back-$((3+1))`);
  const inAlt = await pane.waitForText(/^alt-3$/m);
  assert.doesNotMatch(inAlt, /^main-2$/m, 'entering its alternate screen cleared the screen');
  assert.doesNotMatch(inAlt, BEFORE);
  await pane.typeLine('');
  // The program's normal screen is back: cleared as it left, then repainted by the capsule.
  const back = await pane.waitForScreen('main-2 repainted under back-4', (s) => /^main-2$/m.test(s) && /^back-4$/m.test(s));
  assert.doesNotMatch(back, /^alt-3$/m);
  assert.doesNotMatch(back, BEFORE, "still not the operator's screen");
  // Detach: the screen before the attach, with jackin's lines below it, and none of the session's.
  await pane.sendBytes([CTRL_BACKSLASH]);
  await pane.type('d');
  assert.equal(await waitForJackinExit(pane), 0);
  const after = await pane.waitForText(/jackin: detached from alt/);
  assert.match(after, BEFORE);
  assert.doesNotMatch(after, /^main-2$/m);
  assert.ok(after.indexOf('before-42') < after.indexOf('jackin: detached from alt'), after);
});

test('JACKIN_ALT_SCREEN=off: the session draws on the normal screen, which keeps it after a detach', async (t) => {
  const pane = await paneFor(t, { env: { JACKIN_ALT_SCREEN: 'off' } });
  await pane.typeLine(`clear; ${jackinRun('noalt')}; echo "jackin-rc=$?"`);
  await pane.waitForText(INNER_PROMPT, { timeoutMs: START_TIMEOUT_MS });
  await pane.typeLine('echo kept-$((5+5))');
  await pane.waitForText(/^kept-10$/m);
  await pane.sendBytes([CTRL_BACKSLASH]);
  await pane.type('d');
  assert.equal(await waitForJackinExit(pane), 0);
  assert.match(await pane.waitForText(/jackin: detached from noalt/), /^kept-10$/m);
});
