// End-to-end: link hints (issue 37), tmux as the operator's terminal and JACKIN_OPENER pointed at a
// recorder. The program owns the mouse (full screen, mouse tracking on), so a click would go to it; the
// palette's "Open link on screen" labels every link on the screen instead, and typing a label opens that
// link, after the host's prompt names the exact target. A program that leaves the mouse alone gets the same labels.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { confirmOnScreen, fixtureCommand, paneFor, startSession, typeLabel } from './helpers/jackin-cli.ts';
import { pollUntil } from './helpers/poll.ts';
import { recordingOpener } from './helpers/recording-opener.ts';
import { readActions } from '../src/host/instances/action-log.ts';
import type { TmuxPane } from './helpers/tmux.ts';
import { ownClipboard, startXvfb } from './helpers/xvfb.ts';
import { recordingClipboard } from './helpers/recording-clipboard.ts';
import { CONFIRM_ARM_MS } from '../src/host/session/confirm-controller.ts';
import { spawnSync } from 'node:child_process';

const PALETTE_KEY = [0x1c];
/** What the program drew, row by row (0-based), as tmux shows it. */
const SCREEN: Record<number, string> = {
  1: '漢字漢字 plain https://example.com/plain-after-wide',
  3: '表 see the docs here',
  5: 'decoy https://example.com/decoy',
};

async function startHintScreen(t: TestContext, name: string, env: Record<string, string> = {}, { mouse = true }: { mouse?: boolean } = {}) {
  const rec = recordingOpener(t);
  const pane = await paneFor(t, { env: { ...rec.env, ...env } });
  const dir = mkdtempSync(join(tmpdir(), 'jackin-hints-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const input = join(dir, 'input.bin');
  await startSession(pane, name, 'HINT-SCREEN-READY', fixtureCommand('../links/hint-screen.mjs', input, ...(mouse ? [] : ['--no-mouse'])));
  // The program tracks the mouse itself: the host's capture is off, its clicks are the program's.
  if (mouse) await pollUntil("the program's mouse tracking", async () => (await pane.modes()).mouseAny);
  return { rec, pane, read: () => readFileSync(input, 'latin1') };
}

/** Opens the palette and chooses `key`, then waits for the labels (the host's help line shows with them). */
async function showHints(pane: TmuxPane, key: string): Promise<string[]> {
  await pane.sendBytes(PALETTE_KEY);
  await pane.waitForText('Open link on screen');
  await pane.sendBytes([...Buffer.from(key)]);
  await pane.waitForText('type a label to');
  return pane.screenLines();
}

/** The screen shows the program's own lines again. */
async function screenRestored(pane: TmuxPane): Promise<void> {
  await pane.waitForScreen("the program's screen, labels gone", (screen) => {
    const lines = screen.split('\n');
    return Object.entries(SCREEN).every(([row, text]) => lines[Number(row)] === text) && !screen.includes('type a label');
  });
}

test('hints: in a program that tracks the mouse, the OSC 8 label after a wide character opens its target, only after the prompt', async (t) => {
  const { rec, pane, read } = await startHintScreen(t, 'hints-osc8');
  const lines = await showHints(pane, 'o');
  // Labels in reading order over each link's first cells, counted in columns (漢字漢字 takes eight).
  assert.equal(lines[1], '漢字漢字 plain attps://example.com/plain-after-wide');
  assert.equal(lines[3], '表 see she docs here');
  assert.equal(lines[5], 'decoy dttps://example.com/decoy');
  await typeLabel(pane, 's');
  const prompt = await pane.waitForText('│ https://target.example/osc8-target');
  assert.match(prompt, /jackin: confirm/);
  assert.deepEqual(rec.opened(), [], 'nothing opens before the operator confirms');
  await confirmOnScreen(pane);
  await pollUntil('the opener to run', () => rec.opened().length === 1, { last: rec.opened });
  assert.deepEqual(rec.opened(), ['https://target.example/osc8-target']);
  await screenRestored(pane);
  assert.equal(read(), '', 'neither the palette key, the action key nor the label reached the program');
  // Logged once the opener exited.
  const opens = async () => (await readActions(pane.jackinHome, 'hints-osc8')).filter((a) => a.action === 'open-url').map((a) => [a.target, a.result]);
  await pollUntil('the open in the host log', async () => (await opens()).length > 0, { last: () => null });
  assert.deepEqual(await opens(), [['https://target.example/osc8-target', 'ok']]);
});

test('hints: the plain URL after wide characters opens by its label; Esc leaves the screen as it was', async (t) => {
  const { rec, pane, read } = await startHintScreen(t, 'hints-plain');
  await showHints(pane, 'o');
  await pane.sendKeys('Escape');
  await screenRestored(pane);
  assert.deepEqual(rec.opened(), []);
  await showHints(pane, 'o');
  await typeLabel(pane, 'a');
  await pane.waitForText('│ https://example.com/plain-after-wide');
  await confirmOnScreen(pane);
  await pollUntil('the opener to run', () => rec.opened().length === 1, { last: rec.opened });
  assert.deepEqual(rec.opened(), ['https://example.com/plain-after-wide']);
  await screenRestored(pane);
  assert.equal(read(), '');
});

test('hints: in a program that does not track the mouse, the same labels open the same links, after the prompt', async (t) => {
  const { rec, pane, read } = await startHintScreen(t, 'hints-nomouse', {}, { mouse: false });
  const lines = await showHints(pane, 'o');
  assert.equal(lines[1], '漢字漢字 plain attps://example.com/plain-after-wide');
  assert.equal(lines[3], '表 see she docs here');
  assert.equal(lines[5], 'decoy dttps://example.com/decoy');
  await typeLabel(pane, 'd');
  await pane.waitForText('│ https://example.com/decoy');
  assert.deepEqual(rec.opened(), [], 'nothing opens before the operator confirms');
  await confirmOnScreen(pane);
  await pollUntil('the opener to run', () => rec.opened().length === 1, { last: rec.opened });
  assert.deepEqual(rec.opened(), ['https://example.com/decoy']);
  await screenRestored(pane);
  assert.equal(read(), '');
});

test("hints: Copy link on screen shows the whole target in the host's prompt, and puts it on a real X11 clipboard only on Enter, logged; nothing opens", async (t) => {
  const x = await startXvfb();
  t.after(() => x.stop());
  const { rec, pane, read } = await startHintScreen(t, 'hints-copy', { DISPLAY: x.display });
  const clipboard = () => spawnSync('xclip', ['-selection', 'clipboard', '-o'], { env: x.env }).stdout.toString('utf8');
  // Esc in the prompt: nothing is copied.
  await showHints(pane, 'y');
  await pane.waitForText('type a label to copy');
  await typeLabel(pane, 's');
  let prompt = await pane.waitForText('│ https://target.example/osc8-target');
  assert.match(prompt, /Copy this hyperlink target\?/);
  assert.match(prompt, /Enter copy/);
  await pane.sendKeys('Escape');
  await screenRestored(pane);
  assert.equal(clipboard(), '', 'cancelled: nothing on the clipboard');
  // Enter: copied.
  await showHints(pane, 'y');
  await typeLabel(pane, 's');
  prompt = await pane.waitForText('│ https://target.example/osc8-target');
  assert.equal(clipboard(), '', 'nothing is copied before the operator confirms');
  await confirmOnScreen(pane);
  await pollUntil('the clipboard to hold the hyperlink target', () => clipboard() === 'https://target.example/osc8-target', { last: clipboard });
  await pane.waitForText('Copied https://target.example');
  await screenRestored(pane);
  assert.deepEqual(rec.opened(), []);
  assert.equal(read(), '');
  const copies = async () => (await readActions(pane.jackinHome, 'hints-copy')).filter((a) => a.action === 'copy-link').map((a) => [a.target, a.result]);
  await pollUntil('the copy in the host log', async () => (await copies()).length > 1);
  assert.deepEqual(await copies(), [
    ['https://target.example/osc8-target', 'cancelled'],
    ['https://target.example/osc8-target', 'ok'],
  ]);
  // Take the selection back with an owner we stop, so the xclip that served the copy exits.
  const owner = await ownClipboard(x, 'text/plain', Buffer.from('other'));
  await owner.stop();
});

/**
 * Sends `burst` (a label and the keys after it) as one read, again until it is taken (as typeLabel): a burst
 * typed while the labels are new is dropped whole by design, so the program gets the taken one's keys once.
 */
async function sendBurst(pane: TmuxPane, burst: string): Promise<void> {
  let sentAt = -Infinity;
  await pollUntil(
    'the burst to be taken',
    async () => {
      const screen = await pane.capture();
      if (!screen.includes('type a label to') || screen.includes('jackin: confirm')) return true;
      if (Date.now() - sentAt > 2 * CONFIRM_ARM_MS) {
        sentAt = Date.now();
        await pane.sendBytes([...Buffer.from(burst, 'latin1')]);
      }
      return false;
    },
    { timeoutMs: 15_000 },
  );
}

test('hints: keys typed right after a label in the same read reach the program once the prompt is answered, never the prompt', async (t) => {
  const clip = recordingClipboard(t);
  const { rec, pane, read } = await startHintScreen(t, 'hints-keys-after', clip.env);
  // Open: the label, then keys (an Enter among them) in one read; the prompt shows and stays up.
  await showHints(pane, 'o');
  await sendBurst(pane, 'sopen-after\r');
  await pane.waitForText('│ https://target.example/osc8-target');
  assert.equal(read(), '', 'held while the prompt is up');
  await pane.sendKeys('Escape');
  await pollUntil('the keys after the label to reach the program', () => read() === 'open-after\r', { last: read });
  await screenRestored(pane);
  assert.deepEqual(rec.opened(), [], 'the Enter after the label answered no prompt');
  // Copy: the same; confirmed, the keys follow the copy.
  await showHints(pane, 'y');
  await sendBurst(pane, 'acopy-after');
  await pane.waitForText('│ https://example.com/plain-after-wide');
  assert.deepEqual(clip.written(), []);
  await confirmOnScreen(pane);
  await pollUntil('the copy', () => clip.written().length === 1, { last: clip.written });
  assert.deepEqual(clip.written(), ['https://example.com/plain-after-wide']);
  await pollUntil('the keys after the label to reach the program', () => read() === 'open-after\rcopy-after', { last: read });
});
