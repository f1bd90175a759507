// The palette key is never lost: pressed 200 times while the program floods the terminal and switches
// scroll regions, origin mode and synchronized updates on and off, it opens the palette every time, and
// none of those presses reaches the program.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fixtureCommand, paneFor, startSession } from './helpers/jackin-cli.ts';
import { pollUntil } from './helpers/poll.ts';

const PRESSES = 200;
const PALETTE = 'Detach (the program keeps running)';
const WAIT = { timeoutMs: 20_000 };

test(`the palette key opens the palette ${PRESSES} times out of ${PRESSES} during busy output`, async (t) => {
  const pane = await paneFor(t, { rows: 40, cols: 120 });
  const record = join(pane.jackinHome, 'program-input.bin');
  // Its own lines, never the command line's echo (see startSession).
  await startSession(pane, 'soak', /^line \d+\.\d+ x{60}$/m, fixtureCommand('busy-modes.mjs', record));
  let screen = '';
  for (let i = 0; i < PRESSES; i++) {
    await pane.sendBytes([0x1c]);
    await pollUntil(`the palette to open on press ${i + 1}`, async () => (screen = await pane.capture()).includes(PALETTE), {
      ...WAIT,
      intervalMs: 5,
      last: () => screen,
    });
    await pane.sendKeys('Escape');
    await pollUntil(`the palette to close after press ${i + 1}`, async () => !(screen = await pane.capture()).includes(PALETTE), {
      ...WAIT,
      intervalMs: 5,
      last: () => screen,
    });
  }
  assert.deepEqual([...readFileSync(record)], [], 'no palette key (nor Escape) reached the program');
});
