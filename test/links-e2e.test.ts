// End-to-end: opening links on the host (issue 7 acceptance), tmux as the operator's terminal and
// JACKIN_OPENER pointed at a recorder script. tmux cannot synthesize clicks, so the tests type the SGR
// mouse reports a terminal would send (ESC [ < b ; x ; y M / m; b: 16 = Ctrl, 8 = Alt, 0 = plain left).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startFakeCapsule, welcomeFrame } from './helpers/fake-capsule.ts';
import { confirmOnScreen, fixtureCommand, JACKIN, paneFor, startSession, START_TIMEOUT_MS, JACKIN_CAPSULE } from './helpers/jackin-cli.ts';
import { pollUntil } from './helpers/poll.ts';
import { readActions } from '../src/host/instances/action-log.ts';
import { shellQuote, type TmuxPane } from './helpers/tmux.ts';
import { recordingOpener } from './helpers/recording-opener.ts';
import { ownClipboard, startXvfb } from './helpers/xvfb.ts';

const PALETTE_KEY = [0x1c];
const CTRL = 16;
const ALT = 8;

/** Bytes of one SGR mouse report (press `M` or release `m`) at a 0-based cell. */
function sgr(button: number, row: number, col: number, press: boolean): number[] {
  return [...Buffer.from(`\x1b[<${button};${col + 1};${row + 1}${press ? 'M' : 'm'}`, 'latin1')];
}

async function click(pane: TmuxPane, button: number, row: number, col: number): Promise<void> {
  await pane.sendBytes([...sgr(button, row, col, true), ...sgr(button, row, col, false)]);
}

/** `text` as a regular expression that matches exactly it. */
function literal(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** 0-based row and column of the first screen line matching `line`, at the start of `needle` in it. */
async function cellOf(pane: TmuxPane, line: RegExp, needle: string): Promise<{ row: number; col: number }> {
  const lines = await pane.screenLines();
  const row = lines.findIndex((l) => line.test(l));
  assert.ok(row >= 0, `no screen line matches ${line}:\n${lines.join('\n')}`);
  const col = lines[row]!.indexOf(needle);
  assert.ok(col >= 0, `${needle} not on line ${row}`);
  return { row, col };
}

/**
 * The host's confirmation of a target the capsule resolved: waits for the prompt naming `target`, checks
 * that nothing opened before it, and confirms with Enter.
 */
async function confirmTarget(pane: TmuxPane, target: string | RegExp, opened: () => string[], before: number): Promise<void> {
  const screen = await pane.waitForText(target instanceof RegExp ? target : new RegExp(`│ ${literal(target)}`));
  assert.match(screen, /jackin: confirm/);
  assert.match(screen, /Enter open · Esc cancel/);
  assert.equal(opened().length, before, 'nothing opens before the operator confirms');
  await confirmOnScreen(pane);
}

/** Waits until the host captures the mouse (tmux reports the pane's mouse mode). */
async function waitForCapture(pane: TmuxPane, on = true): Promise<void> {
  await pollUntil(`the pane's mouse reporting to be ${on ? 'on' : 'off'}`, async () => (await pane.modes()).mouseAny === on, { timeoutMs: 10_000 });
}

/**
 * Starts session `name`, waits for the host's click capture, has the program print `text` on a line of its
 * own, and returns the cell where the line's `https` starts.
 */
async function printedLink(pane: TmuxPane, name: string, text: string): Promise<{ row: number; col: number }> {
  await startSession(pane, name);
  await waitForCapture(pane);
  await pane.typeLine(`clear; printf '%s\\n' ${shellQuote(text)}`);
  const line = new RegExp(`^${literal(text)}$`, 'm');
  await pane.waitForText(line);
  return cellOf(pane, line, 'https');
}

test('links: Ctrl+click and Alt+click open the URL token; a plain click opens nothing and is swallowed', async (t) => {
  const rec = recordingOpener(t);
  const pane = await paneFor(t, { env: rec.env });
  const at = await printedLink(pane, 'links-click', 'see https://example.com/a_(b)).');

  await click(pane, CTRL, at.row, at.col + 10);
  await confirmTarget(pane, 'https://example.com/a_(b)', rec.opened, 0);
  await pollUntil('the Ctrl+click to reach the opener', () => rec.opened().length === 1, { last: rec.opened });
  assert.deepEqual(rec.opened(), ['https://example.com/a_(b)']);
  await pane.waitForText('Opened https://example.com');

  await click(pane, ALT, at.row, at.col + 2);
  await confirmTarget(pane, 'https://example.com/a_(b)', rec.opened, 1);
  await pollUntil('the Alt+click to reach the opener', () => rec.opened().length === 2, { last: rec.opened });
  assert.deepEqual(rec.opened(), ['https://example.com/a_(b)', 'https://example.com/a_(b)']);

  // Without a modifier: the program did not ask for the mouse (bash), so the report we captured for
  // ourselves is swallowed, not forwarded: bash would otherwise print it as typed text.
  await click(pane, 0, at.row, at.col + 4);
  await pane.typeLine('echo after-$((40 + 2))');
  const screen = await pane.waitForText(/^after-42$/m);
  assert.doesNotMatch(screen, /\[<0;/, 'the plain click did not reach bash as text');
  assert.equal(rec.opened().length, 2, 'a plain click opens nothing');

  // A click on the trailing punctuation is not on the link: nothing opens.
  await click(pane, CTRL, at.row, at.col + 'https://example.com/a_(b)'.length + 1);
  await pane.waitForText('No link or file path under the pointer');
  assert.equal(rec.opened().length, 2);
});

test("links: after 30 wide emoji the Ctrl+click on a URL resolves that URL (the model uses the terminal's widths)", async (t) => {
  const rec = recordingOpener(t);
  const pane = await paneFor(t, { env: rec.env });
  await startSession(pane, 'links-wide');
  await waitForCapture(pane);
  // U+1F90C takes two columns in tmux (glibc); a model with Unicode 6 widths gave it one, and its columns
  // were 30 off: the click below then landed on the decoy.
  await pane.typeLine(`clear; printf '\\360\\237\\244\\214%.0s' {1..30}; printf ' https://example.com/wide-ok https://example.com/decoy\\n'`);
  await pane.waitForText(/wide-ok https:\/\/example\.com\/decoy$/m);
  const lines = await pane.screenLines();
  const row = lines.findIndex((l) => l.startsWith(`${'\u{1F90C}'.repeat(30)} https://example.com/wide-ok`));
  assert.ok(row >= 0, lines.join('\n'));
  const urlCol = 30 * 2 + 1;
  await click(pane, CTRL, row, urlCol + 'https://example.com/'.length + 2);
  // The host's prompt names the URL the model resolved at the clicked cell: the visible one, not the decoy.
  await confirmTarget(pane, 'https://example.com/wide-ok', rec.opened, 0);
  await pollUntil('the Ctrl+click to reach the opener', () => rec.opened().length === 1, { last: rec.opened });
  assert.deepEqual(rec.opened(), ['https://example.com/wide-ok']);
});

test('links: an OSC 8 hyperlink opens its target, named in the notice; unsafe targets are refused with the reason', async (t) => {
  const rec = recordingOpener(t);
  const pane = await paneFor(t, { env: rec.env });
  await startSession(pane, 'links-osc8');
  await waitForCapture(pane);
  const links: Array<[label: string, target: string, reason: RegExp]> = [
    ['GOOD', 'https://other.example', /Opened https:\/\/other\.example/],
    ['JS', 'javascript:alert(1)', /scheme "javascript" is not allowed/],
    ['FILE', 'file:///etc/passwd', /scheme "file" is not allowed/],
    ['DATA', 'data:text/html,hi', /scheme "data" is not allowed/],
    ['VBS', 'vbscript:msgbox', /scheme "vbscript" is not allowed/],
    ['CUSTOM', 'custom-app://do/thing', /scheme "custom-app" is not allowed/],
    ['DASH', '-https://example.com', /starts with "-"/],
    ['CREDS', 'https://user:secret@example.com/', /carries a user name or password/],
    ['BIDI', 'https://example.com/\u202egnp.exe', /control, whitespace or bidi character \(U\+202E/],
  ];
  // printf with %b-free escapes: each line is "<LABEL>-LINK <OSC 8 hyperlink labelled https://good.example>".
  const printf = links
    .map(([label, target]) => `${label}-LINK \\033]8;;${target.replace(/\u202e/g, '\\342\\200\\256')}\\033\\\\https://good.example\\033]8;;\\033\\\\\\n`)
    .join('');
  await pane.typeLine(`clear; printf '${printf}'`);
  await pane.waitForText(/^BIDI-LINK https:\/\/good\.example$/m);
  let expected = 0;
  for (const [label, , reason] of links) {
    const at = await cellOf(pane, new RegExp(`^${label}-LINK `), 'https://good');
    await click(pane, CTRL, at.row, at.col + 3);
    // The prompt names the hyperlink's target as such, never its label.
    if (label === 'GOOD') await confirmTarget(pane, /Open this hyperlink target\?[\s\S]*https:\/\/other\.example\//, rec.opened, 0);
    await pane.waitForText(reason);
    if (label === 'GOOD') expected = 1;
    assert.equal(rec.opened().length, expected, `after clicking ${label}: ${JSON.stringify(rec.opened())}`);
  }
  assert.deepEqual(rec.opened(), ['https://other.example/'], 'the target opened, never the label');

  // A printed URL with credentials is refused the same way.
  await pane.typeLine(`clear; printf 'creds https://bob:pw@example.com/x\\n'`);
  await pane.waitForText(/^creds https/m);
  const at = await cellOf(pane, /^creds https/, 'https');
  await click(pane, ALT, at.row, at.col + 1);
  await pane.waitForText(/Link refused: link to https:\/\/example\.com carries a user name/);
  assert.equal(rec.opened().length, 1);
});

test('links: without JACKIN_OPENER the `open` package opens the link (the bundled CLI loads it through bin/esm-import.js)', async (t) => {
  // `jackin`'s bundle runs compiled through vm.Script for its code cache, where import() fails: a broken
  // path to the ES-only `open` package would show only here. Its xdg-open hands the URL to $BROWSER when
  // no desktop is found (the empty variables), and the recorder stands in for the browser.
  const rec = recordingOpener(t);
  const env = { BROWSER: rec.env['JACKIN_OPENER']!, DISPLAY: '', WAYLAND_DISPLAY: '', XDG_CURRENT_DESKTOP: '', DESKTOP_SESSION: '' };
  const pane = await paneFor(t, { env });
  const at = await printedLink(pane, 'links-open-package', 'see https://example.com/open-package');
  await click(pane, CTRL, at.row, at.col + 10);
  await confirmTarget(pane, 'https://example.com/open-package', rec.opened, 0);
  await pollUntil('the link to reach the browser through xdg-open', () => rec.opened().length === 1, { last: rec.opened });
  assert.deepEqual(rec.opened(), ['https://example.com/open-package']);
  await pane.waitForText('Opened https://example.com');
});

test('links: JACKIN_OPEN_LINKS=deny opens nothing and says so', async (t) => {
  const rec = recordingOpener(t);
  const pane = await paneFor(t, { env: { ...rec.env, JACKIN_OPEN_LINKS: 'Deny' } });
  const at = await printedLink(pane, 'links-deny', 'go https://example.com/denied');
  await click(pane, CTRL, at.row, at.col + 1);
  await pane.waitForText('opening links is turned off');
  // The palette route too: the URL typed at the prompt, under the cursor. The click's notice goes first, so
  // the one waited for below is the palette's.
  await pane.waitForScreen('the notice of the click to go', (s) => !s.includes('opening links is turned off'), { timeoutMs: 15_000 });
  await pane.type('clear; # https://example.com/typed-denied');
  await pane.waitForText('typed-denied');
  await pane.sendBytes(PALETTE_KEY);
  await pane.waitForText('Open link under cursor');
  await pane.sendKeys('l');
  await pane.waitForText('opening links is turned off');
  assert.deepEqual(rec.opened(), []);
});

test('links: open-url inside the session only offers; "Open offered link" shows it and opens it; file paths are refused', async (t) => {
  // Longer than the palette's widest entry, so choosing it shows the whole target in the prompt first.
  const OFFERED = 'https://example.com/login?client_id=jackin-links-test&state=s3cret';
  const rec = recordingOpener(t);
  const pane = await paneFor(t, { env: rec.env });
  await startSession(pane, 'links-offer');
  await pane.typeLine(`clear; ${JACKIN_CAPSULE} open-url -- '${OFFERED}'; echo "offer-rc=$?"`);
  // The notice is drawn at the right end of the top row, next to this line.
  await pane.waitForText(/^offer-rc=0\b/m);
  await pane.waitForText('Link offered: https://example.com/login');
  assert.doesNotMatch(await pane.capture(), /s3cret/, 'the notice leaves out the query');
  assert.deepEqual(rec.opened(), [], 'an offer opens nothing by itself');

  await pane.typeLine(`${JACKIN_CAPSULE} open-url ./report.html; echo "file-rc=$?"`);
  const refused = await pane.waitForText(/^file-rc=\d+/m);
  assert.match(refused, /^file-rc=[1-9]\d*\b/m);
  assert.match(refused, /is a file path, not a link/);

  await pane.sendBytes(PALETTE_KEY);
  // The entry shows the offered link itself; this one is too long to show whole there, so choosing it
  // shows the exact target in the host's prompt first.
  await pane.waitForText('Open offered link: https://example.com/');
  await pane.sendKeys('u');
  await confirmTarget(pane, OFFERED, rec.opened, 0);
  await pollUntil('the offered link to reach the opener', () => rec.opened().length === 1, { last: rec.opened });
  assert.deepEqual(rec.opened(), [OFFERED]);
});

test('links: "Open link under cursor" opens the URL just typed at the prompt', async (t) => {
  const rec = recordingOpener(t);
  const pane = await paneFor(t, { env: rec.env });
  await startSession(pane, 'links-cursor');
  await pane.type('clear; # https://example.com/typed');
  await pane.waitForText('https://example.com/typed');
  await pane.sendBytes(PALETTE_KEY);
  await pane.waitForText('Open link under cursor');
  await pane.sendKeys('l');
  await confirmTarget(pane, 'https://example.com/typed', rec.opened, 0);
  await pollUntil('the link under the cursor to reach the opener', () => rec.opened().length === 1, { last: rec.opened });
  assert.deepEqual(rec.opened(), ['https://example.com/typed']);
});

test('links: a program with mouse reporting on receives the modified click itself', async (t) => {
  const rec = recordingOpener(t);
  const pane = await paneFor(t, { env: rec.env });
  const dir = mkdtempSync(join(tmpdir(), 'jackin-mouse-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const out = join(dir, 'input.bin');
  await startSession(pane, 'links-mouse', 'MOUSE-RECORDER-READY', fixtureCommand('../links/mouse-recorder.mjs', out));
  const at = await cellOf(pane, /^MOUSE-URL /, 'https');
  const report = Buffer.from(sgr(CTRL, at.row, at.col + 2, true)).toString('latin1');
  // The program's ?1000h reaches the host as a Modes frame just after its output: click until it lands.
  await pollUntil(
    'the program to receive the Ctrl+click report',
    async () => {
      if (!readFileSync(out, 'latin1').includes(report)) await click(pane, CTRL, at.row, at.col + 2);
      return readFileSync(out, 'latin1').includes(report);
    },
    { timeoutMs: 10_000, intervalMs: 300 },
  );
  assert.deepEqual(rec.opened(), [], 'a click the program asked for never opens anything');
  assert.ok(readFileSync(out, 'latin1').startsWith(report), 'the report arrived unchanged');
});

test('links: a capsule sending HostOpenUrl without a gesture, or many after one, gets at most one open', async (t) => {
  const rec = recordingOpener(t);
  // A capsule stand-in speaking the upstream protocol (Welcome without features).
  const upstream = await startFakeCapsule(t, { welcome: () => welcomeFrame(null) });
  const pane = await paneFor(t, { env: rec.env });
  await pane.typeLine(`clear; ${JACKIN} attach fake --allow-upstream-requests --socket ${shellQuote(upstream.socketPath)}`);
  const fake = await upstream.connection(0, START_TIMEOUT_MS);
  await pane.waitForText('FAKE-READY-0', { timeoutMs: START_TIMEOUT_MS });
  const refusals = async () => (await readActions(pane.jackinHome, 'fake')).filter((r) => r.action === 'open-url' && r.result === 'refused').length;

  for (let i = 0; i < 3; i++) fake.send({ type: 'HostOpenUrl', url: `https://example.com/unasked-${i}` });
  await pollUntil('three refusals in the host log', async () => (await refusals()) === 3);
  assert.deepEqual(rec.opened(), []);

  // The palette key is a gesture the host sees (an upstream capsule's palette runs in the container).
  fake.onInput((bytes) => {
    if (bytes.includes(0x1c)) for (let i = 0; i < 5; i++) fake.send({ type: 'HostOpenUrl', url: `https://example.com/flood-${i}` });
  });
  await pane.sendBytes(PALETTE_KEY);
  await pollUntil('four more refusals', async () => (await refusals()) === 7);
  await pollUntil('the one allowed open', () => rec.opened().length === 1, { last: rec.opened });
  assert.deepEqual(rec.opened(), ['https://example.com/flood-0']);
  // Drawn by the host itself; nothing goes back to the capsule.
  await pane.waitForText('Opened https://example.com');
  assert.deepEqual(fake.notices(), []);
  assert.equal(rec.opened().length, 1);
});

test('links: a link that fails to open gets a whole notice on a narrow pane, and is copied to a real X11 clipboard only on the palette key', async (t) => {
  const x = await startXvfb();
  t.after(() => x.stop());
  const dir = mkdtempSync(join(tmpdir(), 'jackin-fail-opener-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  // An opener that fails the way xdg-open does with no display and no browser.
  const opener = join(dir, 'fail');
  writeFileSync(opener, '#!/bin/sh\necho "xdg-open: no method available for opening it" >&2\nexit 3\n', { mode: 0o755 });
  const pane = await paneFor(t, { cols: 60, env: { JACKIN_OPENER: opener, DISPLAY: x.display, JACKIN_CLIPBOARD: 'xclip' } });
  const clipboard = () => spawnSync('xclip', ['-selection', 'clipboard', '-o'], { env: x.env }).stdout.toString('utf8');
  const URL = 'https://example.com/not-opened?q=1';
  await startSession(pane, 'links-fail-copy');
  await pane.type(`clear; # ${URL}`);
  await pane.waitForText('not-opened?q=1');
  await pane.sendBytes(PALETTE_KEY);
  await pane.waitForText('Copy link not opened');
  await pane.sendKeys('l');
  await pane.waitForText(`│ ${URL}`);
  await confirmOnScreen(pane);
  const screen = await pane.waitForText(/Copy link not opened \(k\)/);
  // The notice, read row by row from its box at the top right: every word of it, none cut at the edge.
  const rows = screen.split('\n');
  const start = (rows[0] ?? '').indexOf('✗ Could not open') - 1;
  assert.ok(start >= 0, screen);
  const box: string[] = [];
  for (const row of rows) {
    const part = row.slice(start);
    if (part.trim() === '') break;
    box.push(part.trim());
  }
  assert.ok(box.length > 2, `wrapped over rows: ${JSON.stringify(box)}`);
  // Rows break between words, or inside one longer than a row (the opener's path): compared without spaces.
  assert.equal(
    box.join('').replaceAll(' ', ''),
    `✗ Could not open https://example.com: opener ${opener} exited with status 3: xdg-open: no method available for opening it; check that it is installed or set JACKIN_OPENER to a command that opens its last argument; copy it with the palette: Copy link not opened (k)`.replaceAll(
      ' ',
      '',
    ),
  );
  assert.ok(!screen.includes('…'), 'nothing was cut');
  assert.equal(clipboard(), '', 'the failure copies nothing by itself');
  await pane.sendBytes(PALETTE_KEY);
  await pane.waitForText('Copy link not opened: https://example.com');
  await pane.sendKeys('k');
  await pollUntil('the clipboard to hold the link', () => clipboard() === URL, { last: clipboard });
  await pane.waitForText('Copied https://example.com to the clipboard');
  const copies = async () => (await readActions(pane.jackinHome, 'links-fail-copy')).filter((a) => a.action === 'copy-link').map((a) => a.result);
  await pollUntil('the copy in the host log', async () => (await copies()).length === 1);
  assert.deepEqual(await copies(), ['ok']);
  // Take the selection back with an owner we stop, so the xclip that served the copy exits.
  const owner = await ownClipboard(x, 'text/plain', Buffer.from('other'));
  await owner.stop();
});
