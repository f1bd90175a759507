// End-to-end: the command palette and notices in tmux (issue 4 acceptance). The palette and notices are
// drawn by the host over the session; when they go away the capsule repaints, so the pane must be exactly
// the program's screen again.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { encodeControlMessage, ControlMessageDecoder } from '../src/protocol/index.ts';
import { runDir } from './helpers/capsules.ts';
import { OUR_FEATURES, startFakeCapsule } from './helpers/fake-capsule.ts';
import { fixtureCommand, JACKIN, paneFor, startSession, START_TIMEOUT_MS } from './helpers/jackin-cli.ts';
import { pollUntil } from './helpers/poll.ts';
import { shellQuote, type TmuxPane } from './helpers/tmux.ts';
import { socketAddress } from '../src/transport/socket-address.ts';

const PALETTE_KEY = [0x1c];
const ESC = [0x1b];

/** Sends one control-channel request to the instance's socket and returns the reply. */
async function control(socketPath: string, request: unknown): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    // Through its directory when the path is longer than a socket address holds (a long TMPDIR).
    const address = socketAddress(socketPath);
    const s = connect(address.address);
    s.once('connect', address.release).once('error', address.release);
    const d = new ControlMessageDecoder();
    s.on('connect', () => s.write(encodeControlMessage(request)));
    s.on('data', (b) => {
      const [m] = d.push(b);
      if (m !== undefined) {
        resolve(m as Record<string, unknown>);
        s.destroy();
      }
    });
    s.on('error', reject);
  });
}

/** The screen with trailing blank lines removed (tmux pads the capture to the pane height). */
async function screen(pane: TmuxPane): Promise<string> {
  return (await pane.capture()).replace(/\n+$/, '');
}

const paletteGone = (s: string) => !s.includes('jackin ') && !s.includes('Detach');

test('palette: opens on Ctrl+\\ with its actions and keys, filters, closes on Esc leaving the screen as it was', async (t) => {
  const pane = await paneFor(t);
  await startSession(pane, 'pal');
  await pane.typeLine('echo before-palette');
  await pane.waitForText(/^before-palette$/m);
  const before = await screen(pane);
  await pane.sendBytes(PALETTE_KEY);
  const open = await pane.waitForText('Detach');
  assert.match(open, /│ d\s+Detach/);
  assert.match(open, /│ r\s+Redraw/);
  assert.match(open, /│ Ctrl\+\\\s+Send the palette key/);
  await pane.type('/redr');
  const filtered = await pane.waitForText('/redr');
  assert.doesNotMatch(filtered, /Detach/, 'the filter hides other actions');
  assert.match(filtered, /Redraw/);
  await pane.sendBytes(ESC); // clears the filter
  await pane.waitForText('type to filter');
  await pane.sendBytes(ESC); // closes
  const after = await pane.waitForScreen('the palette closed', paletteGone);
  assert.equal(after.replace(/\n+$/, ''), before, 'the pane equals the capture taken before the palette opened');
});

test('palette: Enter runs the selected action (Redraw) and the palette leaves no trace', async (t) => {
  const pane = await paneFor(t);
  await startSession(pane, 'palrun');
  await pane.typeLine('echo run-action');
  await pane.waitForText(/^run-action$/m);
  const before = await screen(pane);
  await pane.sendBytes(PALETTE_KEY);
  await pane.waitForText('Detach');
  await pane.type('/Redraw');
  await pane.waitForText('/Redraw');
  await pane.sendKeys('Enter');
  await pane.waitForScreen('the palette closed', paletteGone);
  await pollUntil('the pane back to the program screen', async () => (await screen(pane)) === before, { timeoutMs: 5000 });
  // The session still works: the palette gave the keyboard back.
  await pane.typeLine('echo still-here');
  await pane.waitForText(/^still-here$/m);
});

test('palette: over a full-screen program that kept drawing, closing shows exactly the program screen', async (t) => {
  const pane = await paneFor(t);
  await startSession(pane, 'palfull');
  const expectedFile = join(pane.home, 'ticker-screen.txt');
  await pane.typeLine(fixtureCommand('ticker.mjs', expectedFile));
  await pane.waitForText('TICKER-TOP');
  await pane.sendBytes(PALETTE_KEY);
  await pane.waitForText('Detach');
  // The program keeps drawing underneath; its output only updates the capsule's model while the palette is up.
  await pollUntil(
    'the program to finish drawing',
    () => {
      try {
        return readFileSync(expectedFile, 'utf8');
      } catch {
        return undefined;
      }
    },
    { timeoutMs: 15_000 },
  );
  const during = await screen(pane);
  assert.match(during, /Detach/, 'the palette stayed on top while the program drew');
  await pane.sendBytes(ESC);
  const expected = readFileSync(expectedFile, 'utf8').replace(/\n+$/, '');
  await pollUntil('the pane to equal the program screen', async () => (await screen(pane)) === expected, {
    timeoutMs: 5000,
    last: () => expected,
  });
  await pane.type('q');
  await pane.waitForText(/^in\$$/m);
});

test('notices: a notice appears, goes away on its own, and leaves the program screen', async (t) => {
  const pane = await paneFor(t);
  await startSession(pane, 'notes');
  await pane.typeLine('echo notice-base');
  await pane.waitForText(/^notice-base$/m);
  const before = await screen(pane);
  const sock = join(runDir(pane.jackinHome, 'notes'), 'jackin.sock');
  const reply = await control(sock, { method: 'notice', level: 'success', text: 'Exported report.txt' });
  assert.equal(reply['ok'], true);
  const shown = await pane.waitForText('Exported report.txt');
  assert.match(shown.split('\n')[0]!, /✓ capsule: Exported report\.txt/, 'drawn on the top line, marked as said by the capsule');
  // No key is pressed: the notice's own expiry takes it away (its times, on a clock the test moves: src/ui/notices.test.ts).
  await pollUntil('the notice to go away', async () => (await screen(pane)) === before, { timeoutMs: 8000 });
});

test("palette: a palette key pressed before the capsule's Welcome opens the palette once it comes, and never reaches the program", async (t) => {
  const pane = await paneFor(t);
  // A capsule that says Welcome only when the test does (ours: it offers repaint).
  const fake = await startFakeCapsule(t, { home: pane.jackinHome, name: 'early' });
  await pane.typeLine(`clear; ${JACKIN} attach ${shellQuote('early')}`);
  // jackin is in raw mode before its Hello, so keys from here on are jackin's.
  const c = await fake.connection(0, START_TIMEOUT_MS);
  await pane.sendBytes(Buffer.from('a\x1c', 'latin1'));
  await pollUntil('the key before the palette key', () => c.input() === 'a', { last: () => c.input() });
  c.send({ type: 'Welcome', sessions: 1, features: { ...OUR_FEATURES } });
  await pane.waitForText('Detach (the program keeps running)', { timeoutMs: START_TIMEOUT_MS });
  await pane.sendBytes([0x64]);
  await pollUntil('the detach request', () => c.received.find((f) => f.type === 'AttachControl'), { last: () => c.received.map((f) => f.type) });
  assert.equal(c.input(), 'a', 'the palette key and the d never reached the program');
});

test('notices: container text with ESC, BEL, CSI and newlines appears only as inert text', async (t) => {
  const pane = await paneFor(t);
  await startSession(pane, 'hostile');
  await pane.typeLine('echo hostile-base');
  await pane.waitForText(/^hostile-base$/m);
  const before = await screen(pane);
  const sock = join(runDir(pane.jackinHome, 'hostile'), 'jackin.sock');
  const name = 'report\x1b[2J\x1b]0;owned\x07\nrm -rf ~\r.txt';
  await control(sock, { method: 'notice', level: 'error', text: `Export refused: ${name}: reason \x1b[31mred\x1b[0m\x07` });
  const shown = await pane.waitForText('Export refused');
  const top = shown.split('\n')[0]!;
  assert.ok(top.includes('report\\x1b[2J\\x1b]0;owned\\x07\\nrm -rf ~\\r.txt'), top);
  assert.ok(top.includes('reason \\x1b[31mred\\x1b[0m\\x07'), top);
  // Nothing was interpreted: the screen was not cleared and no extra line appeared.
  const lines = shown.split('\n');
  assert.ok(
    lines.some((l) => l === 'hostile-base'),
    'the screen was not cleared',
  );
  assert.equal((await pane.display('#{pane_title}')) === 'owned', false, 'no OSC title change');
  await pollUntil('the notice to go away', async () => (await screen(pane)) === before, { timeoutMs: 8000 });
});

/** SGR sequences in a capture (tmux -e) that set a colour: 30-37, 38, 40-47, 48, 90-97, 100-107. */
function colourSgrs(capture: string): string[] {
  return [...capture.matchAll(/\x1b\[([0-9;]*)m/g)].map((m) => m[1]!).filter((p) => p.split(';').some((n) => /^(3[0-8]|4[0-8]|9[0-7]|10[0-7])$/.test(n)));
}

test('palette: drawn in colour, and under NO_COLOR without any colour (the selection in reverse video)', async (t) => {
  for (const noColor of [false, true]) {
    const pane = await paneFor(t, noColor ? { env: { NO_COLOR: '1' } } : {});
    await startSession(pane, noColor ? 'pal-mono' : 'pal-colour');
    await pane.sendBytes(PALETTE_KEY);
    await pane.waitForText('Detach');
    const drawn = await pane.capture({ escapes: true });
    if (noColor) {
      assert.deepEqual(colourSgrs(drawn), []);
      assert.match(drawn, /\x1b\[(?:[0-9;]*;)?7(?:;[0-9;]*)?m/, 'the selected action in reverse video');
    } else {
      assert.notDeepEqual(colourSgrs(drawn), [], 'in colour without NO_COLOR');
    }
    await pane.sendBytes(ESC);
    await pane.waitForScreen('the palette closed', paletteGone);
  }
});
