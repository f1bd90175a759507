// End-to-end: Ctrl+V where jackin has no clipboard of its own and the session looks remote (SSH_CONNECTION,
// no DISPLAY): jackin asks the operator's terminal through the kitty clipboard protocol (OSC 5522). The
// operator's terminal is a stand-in that follows the protocol's specification
// (https://sw.kovidgoyal.net/kitty/clipboard/): this test, at the other end of a real PTY in which
// `jackin run` runs. It answers DECRQM 5522, and a read of image/png with the PNG in 4096-byte chunks
// written in odd-sized pieces, or with an error status (EPERM, EBUSY, ENOSYS).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import pty from '@lydell/node-pty';
import { runDir, stopCapsules } from './helpers/capsules.ts';
import { JACKIN_BIN } from './helpers/jackin-cli.ts';
import { pollUntil } from './helpers/poll.ts';
import { testDir, testRunEnv } from './helpers/test-run.ts';

const png = readFileSync(new URL('./fixtures/images/sample.png', import.meta.url));
const b64 = (s: string | Buffer): string => Buffer.from(s).toString('base64');
const packet = (meta: string, payload?: string): string => `\x1b]5522;${meta}${payload === undefined ? '' : `;${payload}`}\x1b\\`;

type Answer = 'png' | 'EPERM' | 'EBUSY' | 'ENOSYS';
const TEXT = 'pasted over ssh';

/** The stand-in terminal: jackin in a PTY; what jackin writes is scanned for the protocol's questions. */
function standIn(t: { after: (fn: () => void | Promise<void>) => void }, opts: { decrpm: number; osc52?: string }) {
  // Cleanup hooks run in the order they were added: jackin and its capsule stop before the directory goes.
  let stop = async (): Promise<void> => undefined;
  t.after(() => stop());
  const home = testDir(t, 'jackin-tclip-');
  const out = join(home, 'program-input');
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: home,
    JACKIN_HOME: home,
    TERM: 'xterm-256color',
    // A machine reached over SSH without a clipboard: the terminal is the clipboard.
    SSH_CONNECTION: '127.0.0.1 40000 127.0.0.1 22',
    JACKIN_PASTE_KEY: 'ctrl+v',
    ...testRunEnv(),
  };
  // The program records every byte it is given (raw, no echo), after saying it is ready.
  const program = `stty raw -echo; printf 'READY-%s' go; exec cat > '${out}'`;
  const term = pty.spawn(process.execPath, [JACKIN_BIN, 'run', '--name', 'tclip', '--', 'sh', '-c', program], {
    name: 'xterm-256color',
    cols: 200,
    rows: 30,
    env,
    encoding: null,
  });
  let exited = false;
  term.onExit(() => (exited = true));
  stop = async () => {
    if (!exited) term.kill();
    await stopCapsules(home);
  };
  const state = { output: '', answer: 'png' as Answer, detections: 0, osc52: 0, reads: [] as string[], metas: [] as string[] };
  // Everything jackin wrote (state.output is cleared between steps); questions are answered once each, by offset.
  let all = '';
  let scanned = 0;
  const answered = new Set<number>();
  const write = (s: string): void => {
    // In odd-sized pieces: jackin must reassemble packets wherever its reads split them.
    const bytes = Buffer.from(s, 'latin1');
    for (let i = 0; i < bytes.length; i += 997) term.write(bytes.subarray(i, i + 997) as unknown as string);
  };
  term.onData((d: Buffer | string) => {
    const text = Buffer.isBuffer(d) ? d.toString('latin1') : d;
    state.output += text;
    all += text;
    // A question split across reads of the PTY is found on the next: the last bytes are scanned again.
    const from = Math.max(0, scanned - 64);
    const fresh = all.slice(from);
    scanned = all.length;
    const first = (m: RegExpMatchArray): boolean => !answered.has(from + m.index!) && answered.add(from + m.index!) !== undefined;
    for (const m of fresh.matchAll(/\x1b\[\?5522\$p/g)) {
      if (!first(m)) continue;
      state.detections += 1;
      write(`\x1b[?5522;${opts.decrpm}$y`);
    }
    // OSC 52, the text of its clipboard (asked when the terminal has no 5522): answered when the test gives one.
    for (const m of fresh.matchAll(/\x1b\]52;c;\?(\x07|\x1b\\)/g)) {
      if (!first(m)) continue;
      state.osc52 += 1;
      if (opts.osc52 !== undefined) write(`\x1b]52;c;${b64(opts.osc52)}\x1b\\`);
    }
    for (const m of fresh.matchAll(/\x1b\]5522;(type=read:id=([A-Za-z0-9_+.-]+)[^;\x1b]*);([A-Za-z0-9+/=]*)\x1b\\/g)) {
      if (!first(m)) continue;
      const id = m[2]!;
      state.reads.push(id);
      state.metas.push(m[1]!);
      const mime = Buffer.from(m[3]!, 'base64').toString();
      if (mime !== 'image/png') {
        const data = mime.startsWith('text/plain') ? b64(TEXT) : '';
        write(
          packet(`type=read:status=OK:id=${id}`) +
            (data === '' ? '' : packet(`type=read:status=DATA:mime=${b64(mime)}:id=${id}`, data)) +
            packet(`type=read:status=DONE:id=${id}`),
        );
        continue;
      }
      if (state.answer !== 'png') {
        write(packet(`type=read:status=${state.answer}:id=${id}`));
        continue;
      }
      let s = packet(`type=read:status=OK:id=${id}`);
      for (let i = 0; i < png.length; i += 4096) s += packet(`type=read:status=DATA:mime=${b64('image/png')}:id=${id}`, b64(png.subarray(i, i + 4096)));
      write(s + packet(`type=read:status=DONE:id=${id}`));
    }
  });
  const screenText = (): string =>
    state.output
      .replace(/\x1b\][^\x07\x1b]*(\x07|\x1b\\)/g, '')
      .replace(/\x1b\[[0-9;?<>=]*[ -/]*[@-~]/g, '')
      .replace(/\x1b./g, '');
  return {
    state,
    staging: join(runDir(home, 'tclip'), 'clipboard'),
    received: (): string => (existsSync(out) ? readFileSync(out, 'latin1') : ''),
    press: (bytes: string) => term.write(bytes),
    /** The terminal's own paste key, with paste events on: the types on its clipboard and a one-use password. */
    pasteEvent: (types: string, pw: string) =>
      write(packet(`type=read:status=OK:pw=${b64(pw)}`) + packet(`type=read:status=DATA:mime=${b64('.')}`, b64(types)) + packet('type=read:status=DONE')),
    screenText,
    ready: () => pollUntil('the program to be ready', () => screenText().includes('READY-go'), { timeoutMs: 30_000 }),
  };
}

const staged = (dir: string): string[] => (existsSync(dir) ? readdirSync(dir) : []);

test('terminal clipboard e2e: EPERM, EBUSY and ENOSYS are notices that stage nothing; then the PNG is staged and its path typed, never Enter', async (t) => {
  const s = standIn(t, { decrpm: 2 });
  await s.ready();
  const notices: Array<[Answer, RegExp]> = [
    ['EPERM', /Image not pasted: your terminal refused to share its clipboard \(EPERM\)/],
    ['EBUSY', /Image not pasted: your terminal is busy with another clipboard request \(EBUSY\)/],
    ['ENOSYS', /Image not pasted: your terminal has no such clipboard \(ENOSYS\)/],
  ];
  for (const [answer, notice] of notices) {
    s.state.answer = answer;
    s.state.output = '';
    s.press('\x16');
    await pollUntil(`the ${answer} notice`, () => notice.test(s.screenText()), { timeoutMs: 15_000, last: () => s.screenText().slice(-400) });
    assert.deepEqual(staged(s.staging), [], `nothing staged after ${answer}`);
  }
  s.state.answer = 'png';
  s.press('\x16');
  const path = await pollUntil('the staged path typed into the program', () => /\/clipboard\/clip-[^\s]+\.png$/.exec(s.received())?.[0], {
    timeoutMs: 30_000,
    last: () => s.received(),
  });
  const files = staged(s.staging);
  assert.equal(files.length, 1);
  assert.deepEqual(readFileSync(join(s.staging, files[0]!)), png, 'the staged image is byte-identical');
  assert.ok(s.received().endsWith(files[0]!), `${s.received()} ends with the staged file name`);
  // Only the path: no Ctrl+V byte, no Enter, nothing of the terminal's answers.
  assert.doesNotMatch(s.received(), /[\x16\r\n]|5522/);
  assert.equal(s.state.detections, 1, 'support asked once');
  assert.ok(path.length > 0);
});

test('terminal clipboard e2e: a terminal without OSC 5522 gets the notice naming what would work; Ctrl+V reaches the program', async (t) => {
  const s = standIn(t, { decrpm: 0 });
  await s.ready();
  s.press('\x16');
  await pollUntil('the cannot-send-images notice', () => /your terminal cannot send images: .*kitty and Ghostty do.*jackin stage FILE/.test(s.screenText()), {
    timeoutMs: 15_000,
    last: () => s.screenText().slice(-400),
  });
  await pollUntil('the Ctrl+V byte at the program', () => s.received().includes('\x16'), { timeoutMs: 10_000 });
  assert.equal(s.state.reads.length, 0, 'no read is asked of a terminal that said no');
  assert.deepEqual(staged(s.staging), []);
});

test("terminal clipboard e2e: a terminal without OSC 5522 that answers OSC 52: Ctrl+V pastes its clipboard's text, no notice, nothing staged", async (t) => {
  const s = standIn(t, { decrpm: 0, osc52: 'echo from the laptop' });
  await s.ready();
  s.press('\x16');
  await pollUntil("the terminal's text at the program", () => s.received().includes('echo from the laptop'), {
    timeoutMs: 15_000,
    last: () => JSON.stringify(s.received()),
  });
  assert.equal(s.state.osc52, 1, 'OSC 52 asked once');
  assert.equal(s.state.reads.length, 0, 'no 5522 read is asked of a terminal that said no');
  assert.ok(!s.received().includes('\x16'), 'the Ctrl+V byte became the paste');
  assert.doesNotMatch(s.screenText(), /cannot send images/);
  assert.deepEqual(staged(s.staging), []);
});

test('terminal clipboard e2e: paste events go on; the terminal paste key with an image stages it (read with the password), with text types the text; off at exit', async (t) => {
  const s = standIn(t, { decrpm: 1 });
  await s.ready();
  await pollUntil('paste events on', () => s.state.output.includes('\x1b[?5522h') || undefined, { timeoutMs: 10_000 });
  s.pasteEvent('text/plain image/png', 'once-1');
  await pollUntil('the staged path typed into the program', () => /\/clipboard\/clip-[^\s]+\.png$/.test(s.received()), {
    timeoutMs: 30_000,
    last: () => s.received(),
  });
  assert.match(s.state.metas.at(-1)!, new RegExp(`:pw=${b64('once-1')}:name=`), 'the read quotes the paste event password');
  const files = staged(s.staging);
  assert.equal(files.length, 1);
  assert.deepEqual(readFileSync(join(s.staging, files[0]!)), png);
  const before = s.received();
  s.pasteEvent('text/plain;charset=utf-8 text/plain', 'once-2');
  await pollUntil('the text typed into the program', () => s.received().slice(before.length) === TEXT || undefined, {
    timeoutMs: 15_000,
    last: () => s.received(),
  });
  assert.equal(staged(s.staging).length, 1, 'text stages nothing');
  // Detach (palette, d): the restore turns paste events off.
  s.state.output = '';
  s.press('\x1c');
  await pollUntil('the palette', () => s.screenText().includes('Detach') || undefined, { timeoutMs: 10_000 });
  s.press('d');
  await pollUntil('paste events off at exit', () => s.state.output.includes('\x1b[?5522l') || undefined, { timeoutMs: 10_000 });
});
