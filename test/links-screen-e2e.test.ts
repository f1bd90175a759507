// End-to-end: what the capsule's screen model resolves for links that agent CLIs draw (issue 49), through
// the real `jackin run` in tmux with JACKIN_OPENER pointed at a recorder. Ctrl+click is typed as the SGR
// mouse report a terminal sends; hints through the palette's "Open link on screen".
//  - Copilot writes its sign-in link, moves the cursor over cells it has not written, closes the link,
//    then draws a spinner into those cells: the link keeps its full target (with its `state`).
//  - A link cleared from the screen is gone: the same text printed again without a link opens that text.
//  - OpenCode and Qwen wrap long URLs themselves (a hard newline at the last column, no OSC 8): the URL
//    opens whole, by click and by hint, and the host's prompt shows the joined target first.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { confirmOnScreen, paneFor, startSession, typeLabel } from './helpers/jackin-cli.ts';
import { pollUntil } from './helpers/poll.ts';
import { recordingOpener } from './helpers/recording-opener.ts';
import { shellQuote, type TmuxPane } from './helpers/tmux.ts';

const PALETTE_KEY = [0x1c];
const CTRL = 16;

/** Bytes of one SGR mouse report (press `M` or release `m`) at a 0-based cell. */
function sgr(button: number, row: number, col: number, press: boolean): number[] {
  return [...Buffer.from(`\x1b[<${button};${col + 1};${row + 1}${press ? 'M' : 'm'}`, 'latin1')];
}

async function click(pane: TmuxPane, button: number, row: number, col: number): Promise<void> {
  await pane.sendBytes([...sgr(button, row, col, true), ...sgr(button, row, col, false)]);
}

/** Waits until the host captures the mouse (tmux reports the pane's mouse mode). */
async function waitForCapture(pane: TmuxPane): Promise<void> {
  await pollUntil("the pane's mouse reporting to be on", async () => (await pane.modes()).mouseAny, { timeoutMs: 10_000 });
}

/** The text inside the host's confirmation box (its rows between the borders, joined without breaks). */
function promptText(screen: string): string {
  return screen
    .split('\n')
    .filter((l) => l.includes('│'))
    .map((l) => {
      const from = l.indexOf('│') + 1;
      const to = l.indexOf('│', from);
      return (to === -1 ? l.slice(from) : l.slice(from, to)).trim();
    })
    .join('');
}

/** Waits for the host's prompt, checks it shows `target` whole and nothing opened yet, and confirms. */
async function confirmShown(pane: TmuxPane, target: string, opened: () => string[], before: number): Promise<void> {
  const screen = await pane.waitForScreen(`the host's prompt naming ${target}`, (s) => s.includes('jackin: confirm') && promptText(s).includes(target));
  assert.match(screen, /Enter open · Esc cancel/);
  assert.equal(opened().length, before, 'nothing opens before the operator confirms');
  await confirmOnScreen(pane);
}

/** 0-based row of the first screen line equal to `text`. */
async function rowOf(pane: TmuxPane, text: string): Promise<number> {
  const lines = await pane.screenLines();
  const row = lines.indexOf(text);
  assert.ok(row >= 0, `no screen line is ${JSON.stringify(text)}:\n${lines.join('\n')}`);
  return row;
}

test('links: an OSC 8 link closed after a cursor move keeps its target under a spinner (Copilot sign-in)', async (t) => {
  const rec = recordingOpener(t);
  const pane = await paneFor(t, { env: rec.env });
  await startSession(pane, 'links-copilot');
  await waitForCapture(pane);
  // The sequence: link opened, label printed, CR LF, cursor right 3 over unwritten cells, link
  // closed, "Waiting" printed, then a spinner frame drawn into the cells the cursor moved over.
  await pane.typeLine(
    `clear; printf '\\033]8;;https://example.com/m5?y=1&state=abc\\007https://example.com/m5\\r\\n\\033[3C\\033]8;;\\007Waiting\\r * \\r\\n\\n'`,
  );
  await pane.waitForText(/^ \* Waiting$/m);
  const row = await rowOf(pane, 'https://example.com/m5');
  await click(pane, CTRL, row, 10);
  await confirmShown(pane, 'https://example.com/m5?y=1&state=abc', rec.opened, 0);
  await pollUntil('the Ctrl+click to reach the opener', () => rec.opened().length === 1, { last: rec.opened });
  assert.deepEqual(rec.opened(), ['https://example.com/m5?y=1&state=abc']);

  // Hints list the same target at the link's cells (the only link on the screen: label a).
  await pane.sendBytes(PALETTE_KEY);
  await pane.waitForText('Open link on screen');
  await pane.sendBytes([...Buffer.from('o')]);
  await pane.waitForText('type a label to');
  await typeLabel(pane, 'a');
  await confirmShown(pane, 'https://example.com/m5?y=1&state=abc', rec.opened, 1);
  await pollUntil('the hint to reach the opener', () => rec.opened().length === 2, { last: rec.opened });
  assert.deepEqual(rec.opened(), ['https://example.com/m5?y=1&state=abc', 'https://example.com/m5?y=1&state=abc']);
});

test("links: after the screen is erased, the same text printed without a link opens that text, not the cleared link's target", async (t) => {
  const rec = recordingOpener(t);
  const pane = await paneFor(t, { env: rec.env });
  await startSession(pane, 'links-cleared');
  await waitForCapture(pane);
  // The hyperlink and then the plain text land on the same cells (row 0), the screen erased between them
  // as `clear` does where the terminal's clear capability is ESC [ H ESC [ J.
  await pane.typeLine(
    `clear; printf '\\033]8;;https://example.com/old-target\\033\\\\https://example.com/same\\033]8;;\\033\\\\\\n'; printf '\\033[H\\033[Jhttps://example.com/same\\n'`,
  );
  await pane.waitForScreen('the plain text alone on the first row', (s) => s.split('\n')[0] === 'https://example.com/same');
  await click(pane, CTRL, 0, 5);
  await confirmShown(pane, 'https://example.com/same', rec.opened, 0);
  await pollUntil('the Ctrl+click to reach the opener', () => rec.opened().length === 1, { last: rec.opened });
  assert.deepEqual(rec.opened(), ['https://example.com/same']);
});

test('links: a URL the program wrapped itself at the last column opens whole, by click on either row and by hint', async (t) => {
  const rec = recordingOpener(t);
  const pane = await paneFor(t, { env: rec.env, cols: 60 });
  await startSession(pane, 'links-hardwrap');
  await waitForCapture(pane);
  const { cols } = await pane.size();
  const head = `https://example.com/hard/${'a'.repeat(cols - 'https://example.com/hard/'.length)}`;
  const tail = 'bc?state=xyz';
  const full = head + tail;
  assert.equal(head.length, cols);
  // A hard newline right after the last column, as OpenCode and Qwen write: no soft wrap, no OSC 8.
  await pane.typeLine(`clear; printf '%s\\n%s\\n' ${shellQuote(head)} ${shellQuote(tail)}`);
  await pane.waitForText(new RegExp(`^${tail.replace(/[?]/g, '\\?')}$`, 'm'));
  const row = await rowOf(pane, head);

  await click(pane, CTRL, row, 3);
  await confirmShown(pane, full, rec.opened, 0);
  await pollUntil('the click on the first row to reach the opener', () => rec.opened().length === 1, { last: rec.opened });
  await click(pane, CTRL, row + 1, 4);
  await confirmShown(pane, full, rec.opened, 1);
  await pollUntil('the click on the second row to reach the opener', () => rec.opened().length === 2, { last: rec.opened });

  await pane.sendBytes(PALETTE_KEY);
  await pane.waitForText('Open link on screen');
  await pane.sendBytes([...Buffer.from('o')]);
  await pane.waitForText('type a label to');
  await typeLabel(pane, 'a');
  await confirmShown(pane, full, rec.opened, 2);
  await pollUntil('the hint to reach the opener', () => rec.opened().length === 3, { last: rec.opened });
  assert.deepEqual(rec.opened(), [full, full, full]);
});
