// End-to-end: the keys hint (JACKIN_HINT) is drawn once when a session starts on a terminal, goes at the first key, and is absent when switched off.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { INNER_PROMPT, START_TIMEOUT_MS, jackinAttach, paneFor, startSession, waitForJackinExit } from './helpers/jackin-cli.ts';
import { pollUntil } from './helpers/poll.ts';

const HINT = /jackin: Ctrl\+\\ opens the palette, Ctrl\+\\ d detaches/;
const CTRL_BACKSLASH = 0x1c;

test('the keys hint shows once at the start of a session, goes at the first key, and shows again for a later jackin attach', async (t) => {
  const pane = await paneFor(t, { env: { JACKIN_HINT: 'on' } });
  // The hint shares the first row with the prompt (`in$` is not a row of its own while it shows).
  await startSession(pane, 'hinted', HINT);
  // The first key takes it away (the program's screen is repainted over it), and the key reaches the program.
  await pane.typeLine('echo typed-$((40+2))');
  await pane.waitForText(/^typed-42$/m);
  await pane.waitForScreen('the hint to go at the first key', (s) => !HINT.test(s), { timeoutMs: 5_000 });
  // Not again in the same session.
  await pane.typeLine('echo more-$((1+1))');
  await pane.waitForText(/^more-2$/m);
  assert.doesNotMatch(await pane.capture(), HINT);
  // A detach and a new `jackin attach` is a new session: the hint is there again, then goes with time.
  await pane.sendBytes([CTRL_BACKSLASH]);
  await pane.type('d');
  assert.equal(await waitForJackinExit(pane), 0);
  await pane.typeLine(`clear; ${jackinAttach('hinted')}; echo "jackin-rc=$?"`);
  await pane.waitForText(HINT, { timeoutMs: START_TIMEOUT_MS });
  await pane.waitForScreen('the hint to go with its time', (s) => !HINT.test(s), { timeoutMs: 10_000 });
  await pane.typeLine('exit 0');
  assert.equal(await waitForJackinExit(pane, 10_000), 0);
});

test('JACKIN_HINT=off: no keys hint', async (t) => {
  const pane = await paneFor(t, { env: { JACKIN_HINT: 'off' } });
  const seen: string[] = [];
  await startSession(pane, 'quiet');
  // Watch the screen for longer than the hint would be drawn for a start.
  const until = Date.now() + 1500;
  await pollUntil('1.5 s of screens', async () => {
    seen.push(await pane.capture());
    return Date.now() > until;
  });
  for (const s of seen) assert.doesNotMatch(s, HINT);
  await pane.waitForText(INNER_PROMPT);
  await pane.typeLine('exit 0');
  assert.equal(await waitForJackinExit(pane, 10_000), 0);
});
