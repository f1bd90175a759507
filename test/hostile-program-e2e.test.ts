// End-to-end: what a hostile program may still set against the host's own UI (issue 34), with tmux as the
// operator's terminal. Each attack acted before its fix: legacy mouse reports read as palette shortcuts
// opened an offered link with no prompt; the program's colours reached the terminal while the prompt was
// up; kitty-encoded Esc and Ctrl+C left the palette and the prompt up; a copy was missing from the log; an
// instance name carried a clipboard write to the terminal that ran `jackin stop`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readActions } from '../src/host/instances/action-log.ts';
import { fixtureCommand, JACKIN, OUTER_PROMPT, paneFor, startSession, typeLabel, waitForJackinExit, JACKIN_CAPSULE } from './helpers/jackin-cli.ts';
import { pollUntil } from './helpers/poll.ts';
import { recordingClipboard } from './helpers/recording-clipboard.ts';
import { recordingOpener } from './helpers/recording-opener.ts';
import { pipePaneOutput, shellQuote, type TmuxPane } from './helpers/tmux.ts';

const PALETTE_KEY = [0x1c];
const WAIT = { timeoutMs: 20_000 };
const b64 = (s: string): string => Buffer.from(s, 'utf8').toString('base64');

async function paletteClosed(pane: TmuxPane): Promise<void> {
  await pane.waitForScreen('the palette to close', (s) => !s.includes('┌─ jackin '));
}

test('hostile program: legacy mouse reports (?1000h without SGR) never act as palette shortcuts', async (t) => {
  const rec = recordingOpener(t);
  const pane = await paneFor(t, { env: rec.env });
  await startSession(pane, 'hp-mouse');
  await pane.typeLine(`clear; ${JACKIN_CAPSULE} open-url -- https://evil.example/offered; printf '\\033[?1000hMOUSE-ON\\n'; cat`);
  await pane.waitForText(/^MOUSE-ON$/m);
  await pollUntil('the pane to report the mouse', async () => (await pane.modes()).mouseAny);
  await pane.sendBytes(PALETTE_KEY);
  await pane.waitForText('Open offered link: '); // its link drawn: choosable (not "reading the offer…")
  // Ctrl+Shift+wheel-down is `u` (Open offered link), wheel-right `c` (Copy offered text), in the legacy form.
  await pane.sendBytes(Buffer.from('\x1b[Mu!!\x1b[Mc!!', 'latin1'));
  await pane.sendBytes(Buffer.from('\x1b[<85;5;5M', 'latin1'));
  assert.match(await pane.capture(), /Open offered link/, 'the palette is still up: no report chose anything');
  await pane.sendKeys('Escape');
  await paletteClosed(pane);
  assert.deepEqual(rec.opened(), []);
  assert.deepEqual(
    (await readActions(pane.jackinHome, 'hp-mouse')).filter((r) => r.action === 'open-url' || r.action === 'copy'),
    [],
  );
  // The program asked for normal tracking in the legacy encoding; the terminal was asked for SGR reports.
  assert.equal((await pane.display('#{mouse_sgr_flag}')).trim(), '1');
  await pane.sendKeys('C-c');
  // The interrupt flushes the terminal's input queue, and a line typed while bash is still taking the
  // terminal back from cat can be lost: wait until the shell answers a line of its own before `exit`.
  let asked = 0;
  await pollUntil(
    'the shell to answer after Ctrl+C',
    async () => {
      if ((await pane.capture()).includes('after-ctrl-c-2')) return true;
      if (asked++ % 25 === 0) await pane.typeLine('echo after-ctrl-c-$((1+1))');
      return false;
    },
    { timeoutMs: 20_000 },
  );
  await pane.typeLine('exit');
  await waitForJackinExit(pane);
});

test('hostile program: colours set to the background do not reach the terminal while the prompt is up, and Esc and Ctrl+C work in the kitty keyboard protocol', async (t) => {
  const rec = recordingOpener(t);
  const pane = await paneFor(t, { env: rec.env });
  await startSession(pane, 'hp-colours');
  const written = await pipePaneOutput(t, pane, 'latin1');
  const sets = Array.from({ length: 16 }, (_, i) => `${i};rgb:10/10/10`).join(';');
  const target = `https://good.example/${'a'.repeat(80)}`;
  // The program sets every colour and both defaults to its background, and pushes a kitty keyboard level.
  await pane.typeLine(
    `clear; printf '\\033]4;${sets}\\a\\033]10;rgb:10/10/10\\a\\033]11;rgb:10/10/10\\a\\033[>1u'; ${JACKIN_CAPSULE} open-url -- ${target}; echo offered-$((40+2))`,
  );
  await pane.waitForText(/^offered-42/m);
  await pane.sendBytes(PALETTE_KEY);
  await pane.waitForText('Open offered link: '); // its link drawn: choosable (not "reading the offer…")
  // Ctrl+C as a kitty terminal sends it at level 1 closes the palette.
  await pane.sendBytes(Buffer.from('\x1b[99;5u', 'latin1'));
  await paletteClosed(pane);
  await pane.sendBytes(PALETTE_KEY);
  await pane.waitForText('Open offered link: '); // its link drawn: choosable (not "reading the offer…")
  await pane.sendKeys('u');
  await pane.waitForText('jackin: confirm');
  const up = written();
  const box = up.lastIndexOf('jackin: confirm');
  const reset = up.lastIndexOf('\x1b]104\x1b\\\x1b]110\x1b\\\x1b]111\x1b\\', box);
  assert.ok(reset > up.lastIndexOf(`\x1b]4;${sets}`), "the operator's colours came after the program's, before the prompt");
  assert.ok(!up.slice(reset).includes('rgb:10/10/10'), "none of the program's colours since");
  // Esc as `CSI 27 u` cancels the prompt; the program's colours are set again after it.
  await pane.sendBytes(Buffer.from('\x1b[27u', 'latin1'));
  await pane.waitForScreen('the prompt to close', (s) => !s.includes('jackin: confirm'));
  await pollUntil("the program's colours set again", () => written().slice(box).includes('\x1b]11;rgb:10/10/10'));
  assert.deepEqual(rec.opened(), [], 'cancelled: nothing opened');
  await pane.typeLine('exit');
  await waitForJackinExit(pane);
});

test('hostile program: a copy of offered text is in jackin log by size and hash, never the text', async (t) => {
  const pane = await paneFor(t);
  await startSession(pane, 'hp-copy');
  const secret = 'export TOKEN=hunter2-e2e';
  await pane.typeLine(`clear; printf '\\033]52;c;%s\\a'; echo offered-$((40+2))`.replace('%s', b64(secret)));
  await pane.waitForText(/^offered-42/m);
  await pane.sendBytes(PALETTE_KEY);
  await pane.waitForText('Copy offered text');
  await pane.sendKeys('c');
  const copies = await pollUntil('the copy in the log', async () => {
    const r = (await readActions(pane.jackinHome, 'hp-copy')).filter((a) => a.action === 'copy');
    return r.length > 0 ? r : undefined;
  });
  assert.match(copies[0]!.target, /^text of 24 bytes, sha256 [0-9a-f]{16}$/u);
  assert.ok(!readFileSync(join(pane.jackinHome, 'log', 'actions.jsonl'), 'utf8').includes('hunter2'));
  await pane.typeLine('exit');
  await waitForJackinExit(pane);
});

test('hostile program: an instance name with a clipboard write in it is refused by run and stop, and nothing reaches tmux', async (t) => {
  const pane = await paneFor(t);
  await pane.tmux('set-option', '-g', 'set-clipboard', 'on');
  // Outside jackin, the same bytes are a clipboard write tmux acts on.
  await pane.typeLine(`printf 'q\\033]52;c;SEVZ\\a\\n'; clear`);
  await pollUntil('tmux to store the outside write', async () => (await pane.tmux('list-buffers', '-F', '#{buffer_name}')).trim() !== '');
  await pane.tmux('delete-buffer');
  await pane.typeLine(`clear; ${JACKIN} run --name $'q\\e]52;c;SEVZ\\a' -- true; echo "run-rc=$?"; ${JACKIN} stop $'q\\e]52;c;SEVZ\\a'; echo "stop-rc=$?"`);
  const screen = await pane.waitForText(/^stop-rc=\d+$/m);
  assert.match(screen, /^run-rc=2$/m);
  assert.match(screen, /^stop-rc=2$/m);
  assert.match(screen, /E_BAD_INSTANCE_NAME/);
  await pane.waitForText(OUTER_PROMPT);
  assert.equal((await pane.tmux('list-buffers', '-F', '#{buffer_name}')).trim(), '', 'no clipboard write reached tmux');
});

/** A program that asks for the cursor position and the status every 50 ms and logs when each reply came (issue 43, 6). */
const POLLER = String.raw`
import { writeFileSync } from 'node:fs';
const sent = [];
const got = [];
let buf = '';
let done = false;
process.stdin.setRawMode(true);
process.stdout.write('\x1b[2J\x1b[HPOLLING\r\n\x1b[3;5H');
const timer = setInterval(() => {
  sent.push(Date.now());
  process.stdout.write('\x1b[6n\x1b[5n');
}, 50);
process.stdin.on('data', (d) => {
  buf += d.toString('latin1');
  const reply = /\x1b\[(?:(\d+;\d+)R|(0)n)/;
  for (let m = reply.exec(buf); m !== null; m = reply.exec(buf)) {
    got.push({ t: Date.now(), pos: m[1] ?? 'status ' + m[2] });
    buf = buf.slice(0, m.index) + buf.slice(m.index + m[0].length);
  }
  if (!done && buf.includes('q')) {
    done = true;
    clearInterval(timer);
    // The replies still due come within this; then the log, and the line the test waits for.
    setTimeout(() => {
      writeFileSync(process.argv[2], JSON.stringify({ sent, got }));
      process.stdout.write('\x1b[6;1HPOLL-' + 'DONE\r\n');
      process.exit(0);
    }, 1000);
  }
});
`;

test('hostile program: a program polling CSI 6n and CSI 5n cannot tell that the palette is up (one reply per query, in order, from the right position)', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'jackin-hp-poll-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const script = join(dir, 'poller.mjs');
  const log = join(dir, 'replies.json');
  writeFileSync(script, POLLER);
  const pane = await paneFor(t);
  await startSession(pane, 'hp-poll');
  await pane.typeLine(`${shellQuote(process.execPath)} ${shellQuote(script)} ${shellQuote(log)}; echo poller-rc=$?`);
  await pane.waitForText(/^POLLING$/m);
  const started = Date.now();
  await pollUntil('the program to ask a few times first', async () => Date.now() - started > 500);
  await pane.sendBytes(PALETTE_KEY);
  await pane.waitForText('┌─ jackin ');
  const opened = Date.now();
  await new Promise((resolve) => setTimeout(resolve, 2_000)); // the palette stays up this long: the attack's window
  await pane.sendKeys('Escape');
  await paletteClosed(pane);
  const closed = Date.now();
  await pollUntil('the program to ask a few more times', async () => Date.now() - closed > 500);
  await pane.sendKeys('q');
  await pane.waitForText(/^POLL-DONE$/m, { timeoutMs: 15_000 });
  const { sent, got } = JSON.parse(readFileSync(log, 'utf8')) as { sent: number[]; got: Array<{ t: number; pos: string }> };
  const during = sent.filter((s) => s > opened + 200 && s < closed - 200).length;
  assert.ok(during >= 10, `the program asked while the palette was up (${during} times)`);
  const at = (ms: number): string => (ms < opened ? `${ms - opened}` : ms < closed ? `+${ms - opened}` : `closed+${ms - closed}`);
  const timeline = `palette up ${closed - opened} ms; asked at ${sent.map(at).join(' ')}; answered at ${got.map((g) => at(g.t)).join(' ')}`;
  assert.equal(got.length, 2 * sent.length, `one reply per query: ${2 * sent.length} asked, ${got.length} answered (${timeline})`);
  const expected = sent.flatMap(() => ['3;5', 'status 0']);
  assert.deepEqual(
    got.map((g) => g.pos),
    expected,
    "every reply in order: the program's own cursor position, then the status",
  );
  const late = sent.map((s, i) => got[2 * i]!.t - s).filter((ms) => ms > 1_000);
  assert.deepEqual(late, [], 'no reply waited for the palette to close');
  await pane.waitForText(/^poller-rc=0$/m);
  await pane.typeLine('exit');
  await waitForJackinExit(pane);
});

test("hostile program: 13 × U+1FAE8 before a hyperlink: labels only where the host's own view shows the link; Copy link on screen shows the whole target and the text there, and copies nothing on Esc", async (t) => {
  const clip = recordingClipboard(t);
  const pane = await paneFor(t, { env: clip.env });
  const dir = mkdtempSync(join(tmpdir(), 'jackin-hp-shift-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const input = join(dir, 'input.bin');
  await startSession(pane, 'hp-shift', 'SHIFT-SCREEN-READY', fixtureCommand('../links/hint-shift.mjs', input));
  // tmux draws none of the 13 (glibc 2.36 has no width for them): the hyperlink's text is at column 0, the
  // good URL at 26 (whose first cell a repaint, which draws the hyperlink's cells again where the capsule
  // has them, covers with that `x`).
  assert.match((await pane.screenLines())[1] ?? '', /^x {25}[hx]ttps:\/\/good\.example\/docs$/);
  await pane.sendBytes(PALETTE_KEY);
  await pane.waitForText('Copy link on screen');
  await pane.sendKeys('y');
  await pane.waitForText('type a label to copy');
  // The capsule lists the hyperlink at column 26 and the good URL at 52; the host's own view of the
  // repainted screen shows the hyperlink's `x` at 26 (the repaint draws it there again) and nothing it can
  // be sure of after the emoji: the good URL gets no label, where the operator sees only blanks.
  const row = (await pane.screenLines())[1] ?? '';
  const label = row[26] ?? '';
  assert.match(label, /^[a-z]$/, `a label on the hyperlink's cell: ${JSON.stringify(row)}`);
  assert.equal(row.slice(27).trimEnd(), 'ttps://good.example/docs', `no other label on the row: ${JSON.stringify(row)}`);
  await typeLabel(pane, label, 'type a label to copy');
  // What it would copy is shown whole, by the host, before anything is copied.
  const prompt = await pane.waitForText('│ https://evil.example/steal', WAIT);
  assert.match(prompt, /Copy this hyperlink target\?/);
  // …and names the text the host's own view shows at the label: the hyperlink's `x`.
  const promptLines = prompt.split('\n');
  const reads = promptLines.findIndex((l) => l.includes('hyperlink target; the text on screen reads:'));
  assert.ok(reads > 0, prompt);
  assert.match(promptLines[reads + 1] ?? '', /│ x +│/);
  assert.deepEqual(clip.written(), [], 'nothing copied before the operator answered');
  await pane.sendKeys('Escape');
  await pane.waitForScreen('the prompt to close', (s) => !s.includes('jackin: confirm'));
  assert.deepEqual(clip.written(), [], 'cancelled: nothing copied');
  const copies = await pollUntil('the cancelled copy in the log', async () => {
    const r = (await readActions(pane.jackinHome, 'hp-shift')).filter((a) => a.action === 'copy-link');
    return r.length > 0 ? r : undefined;
  });
  assert.deepEqual(
    copies.map((r) => [r.target, r.result]),
    [['https://evil.example/steal', 'cancelled']],
  );
  assert.equal(readFileSync(input, 'latin1'), '', 'no key reached the program');
});
