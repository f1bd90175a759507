// Hostile capsule suite (issue 8, item 1): a scripted fake capsule (test/helpers/fake-capsule.ts) against
// a real `jackin attach` in tmux, with JACKIN_OPENER pointed at a recorder and JACKIN_DOWNLOAD_DIR at a
// temporary directory. What must hold whatever the capsule sends:
// - no URL opened and no file written without a matching operator gesture;
// - every bad frame that leaves the stream in sync is skipped with a notice (drawn by the host over our
//   capsule and over an upstream one alike; nothing goes back to the capsule) and the session goes on;
// - a framing error ends the session with a one-line reason, a non-zero status and the terminal restored;
// - an endless slow stream or a flood of output never takes the detach key away from the operator.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { encodeServerFrame, FRAME_CAPS, SERVER_TAGS, DEFAULT_FRAME_CAP } from '../src/protocol/index.ts';
import {
  malformedWelcomeFrame,
  OUR_FEATURES,
  rawFrame,
  startFakeCapsule,
  welcomeFrame,
  type FakeConnection,
  type FakeCapsuleOptions,
} from './helpers/fake-capsule.ts';
import { JACKIN, paneFor, START_TIMEOUT_MS, typeLabel } from './helpers/jackin-cli.ts';
import { pollUntil } from './helpers/poll.ts';
import { readActions } from '../src/host/instances/action-log.ts';
import { recordingClipboard } from './helpers/recording-clipboard.ts';
import { shellQuote, type TmuxPane } from './helpers/tmux.ts';

const PALETTE_KEY = [0x1c];
const PANE = { rows: 30, cols: 160 };
/** Generous: two node processes and tmux share 2 busy cores in CI. */
const WAIT = { timeoutMs: 20_000 };

interface HostSide {
  env: Record<string, string>;
  downloads: string;
  recorderLog: string;
  /** Every path under the download directory, relative to it. */
  written(): string[];
}

/** A download directory and a recorder opener (it appends each argument it gets to a log file). */
function hostSide(t: TestContext): HostSide {
  const root = mkdtempSync(join(tmpdir(), 'jackin-hostile-'));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  const downloads = join(root, 'downloads');
  mkdirSync(downloads);
  const recorderLog = join(root, 'opened.txt');
  const opener = join(root, 'record-opener');
  writeFileSync(opener, `#!/bin/sh\nprintf '%s\\n' "$@" >> ${shellQuote(recorderLog)}\n`);
  chmodSync(opener, 0o755);
  return {
    env: { JACKIN_OPENER: opener, JACKIN_DOWNLOAD_DIR: downloads },
    downloads,
    recorderLog,
    written: () => readdirSync(downloads, { recursive: true, encoding: 'utf8' }).sort(),
  };
}

/** The same export an upstream capsule sends when its palette's export action runs. */
function sendExport(c: FakeConnection, id: bigint, name: string, payload: Buffer): void {
  c.send({ type: 'FileExportStart', exportId: id, size: payload.length, source: `/workspace/${name}`, name, reveal: false, open: false });
  c.send({ type: 'FileExportChunk', exportId: id, offset: 0, bytes: payload });
  c.send({ type: 'FileExportEnd', exportId: id, sha256: createHash('sha256').update(payload).digest() });
}

/** The screen with wrapped lines joined, so a long reason is one line (-J keeps trailing blanks: trimmed). */
async function joinedScreen(pane: TmuxPane): Promise<string> {
  return (await pane.tmux('capture-pane', '-p', '-J', '-t', pane.target)).replace(/ +$/gm, '');
}

/** Types something into the session and waits for the fake capsule's echo of it: the session is alive. */
async function assertAlive(pane: TmuxPane, c: FakeConnection, word: string): Promise<void> {
  await pane.type(word);
  await pollUntil(`the capsule to receive ${word}`, () => c.input().includes(word), { ...WAIT, last: () => c.input() });
  let last = '';
  await pollUntil(`the echo of ${word} on the screen`, async () => (last = await joinedScreen(pane)).includes(word), { ...WAIT, last: () => last });
}

/**
 * Runs `jackin attach <name>` in the pane's shell; the shell prints `rc-<tag>=<status>` and the terminal
 * modes that matter (`stty-<tag>=echo,icanon,` when restored) as soon as jackin returns.
 */
async function attach(pane: TmuxPane, name: string, tag: string): Promise<void> {
  const stty = `stty -a | tr ' ;' '\\n\\n' | grep -xE -- '-?(echo|icanon)' | sort | tr '\\n' ,`;
  // ESC [K: the fake capsule never repaints, so what the palette drew may still be on these rows.
  await pane.typeLine(`clear; ${JACKIN} attach ${shellQuote(name)}; printf 'rc-${tag}=%s\\033[K\\n' "$?"; printf 'stty-${tag}=%s\\033[K\\n' "$(${stty})"`);
}

/**
 * Waits for the attach started by `attach(…, tag)` to end; returns its status, the screen, and jackin's last
 * line (the one right above the status: a multi-line message would not match a whole reason there).
 */
/** Starts fake capsule `o.name`, attaches jackin to it in `pane` (as `tag`) and waits for the program's READY line. */
async function attachToFake(
  t: TestContext,
  pane: TmuxPane,
  o: Omit<FakeCapsuleOptions, 'home'> & { name: string },
  tag: string = o.name,
): Promise<FakeConnection> {
  const fake = await startFakeCapsule(t, { home: pane.jackinHome, ...o });
  await attach(pane, o.name, tag);
  const c = await fake.connection(0, START_TIMEOUT_MS);
  await pane.waitForText('FAKE-READY-0', WAIT);
  return c;
}

async function attachEnded(pane: TmuxPane, tag: string): Promise<{ status: number; screen: string; lastLine: string }> {
  await pane.waitForText(new RegExp(`^stty-${tag}=[a-z,-]*$`, 'm'), WAIT);
  const screen = await joinedScreen(pane);
  const m = new RegExp(`^rc-${tag}=(\\d+)$`, 'm').exec(screen);
  assert.ok(m, `no exit status for ${tag}:\n${screen}`);
  // The terminal is back in cooked mode with echo: the outer shell's settings, not jackin's raw mode.
  assert.match(screen, new RegExp(`^stty-${tag}=echo,icanon,$`, 'm'), `terminal not restored after ${tag}:\n${screen}`);
  const lines = screen.split('\n');
  const lastLine = lines[lines.findIndex((l) => l.startsWith(`rc-${tag}=`)) - 1] ?? '';
  return { status: Number(m[1]), screen, lastLine };
}

/**
 * What a full-screen program leaves on in the operator's terminal: the alternate screen, a hidden cursor,
 * any-motion SGR mouse reporting, bracketed paste, application cursor keys and keypad.
 */
const PROGRAM_MODES = '\x1b[?1049h\x1b[?25l\x1b[?1003h\x1b[?1006h\x1b[?2004h\x1b[?1h\x1b=';

/** Has the fake capsule switch those modes on, as its program would, and waits until the pane has them. */
async function programModesOn(pane: TmuxPane, c: FakeConnection): Promise<void> {
  c.send({ type: 'Output', bytes: Buffer.from(`${PROGRAM_MODES}FULL-SCREEN-${c.index}\r\n`, 'latin1') });
  await pollUntil(
    "the program's modes to reach the pane",
    async () => {
      const m = await pane.modes();
      return m.alternateOn && !m.cursorVisible && m.mouseAny && m.keypadCursor && m.keypad;
    },
    WAIT,
  );
}

/** The pane is back to what the outer shell expects: main screen, visible cursor, no mouse reporting. */
async function assertModesRestored(pane: TmuxPane, what: string): Promise<void> {
  const m = await pane.modes();
  assert.deepEqual(
    { alternateOn: m.alternateOn, cursorVisible: m.cursorVisible, mouseAny: m.mouseAny, keypadCursor: m.keypadCursor, keypad: m.keypad },
    { alternateOn: false, cursorVisible: true, mouseAny: false, keypadCursor: false, keypad: false },
    `terminal modes after ${what}`,
  );
}

test('hostile capsule (upstream): unsolicited HostOpenUrl and FileExport frames open and write nothing; in-sync bad frames are skipped with a host notice', async (t) => {
  const host = hostSide(t);
  // Upstream requests allowed: still refused without a gesture.
  const pane = await paneFor(t, { ...PANE, env: { ...host.env, JACKIN_UPSTREAM_REQUESTS: 'allow' } });
  const c = await attachToFake(t, pane, { name: 'upstream', welcome: () => welcomeFrame(null), echo: true }, 'up');

  // Unsolicited: nobody clicked or pressed anything.
  c.send({ type: 'HostOpenUrl', url: 'https://example.com/unasked' });
  c.send({ type: 'HostOpenUrl', url: 'mailto:victim@example.com' });
  sendExport(c, 1n, 'unasked.txt', Buffer.from('planted\n'));
  const refusals = await pollUntil(
    'three refusals in the host log',
    async () => {
      const l = (await readActions(pane.jackinHome, 'upstream')).filter((r) => r.result === 'refused');
      return l.length >= 3 ? l : undefined;
    },
    WAIT,
  );
  assert.deepEqual(
    refusals.map((r) => r.action),
    ['open-url', 'open-url', 'export'],
  );
  assert.ok(
    refusals.every((r) => /no palette key or click of yours/.test(r.detail ?? '')),
    JSON.stringify(refusals),
  );
  await assertAlive(pane, c, 'alive-after-unsolicited');

  // Bad frames whose length is within the cap: the stream stays in sync, so each is skipped and told.
  const bad: Array<[what: string, bytes: Buffer, code: string]> = [
    [
      'a URL that is not UTF-8',
      rawFrame(SERVER_TAGS.HostOpenUrl, Buffer.concat([Buffer.from('https://example.com/'), Buffer.from([0xff, 0xfe, 0xc3])])),
      'E_BAD_UTF8',
    ],
    ['an unknown tag', rawFrame(0x99, Buffer.from('who knows')), 'E_UNKNOWN_TAG'],
    // FileExportStart whose name length (200) promises more than the payload holds.
    ['a lying field length', lyingExportStart(), 'E_PAYLOAD_SHORT'],
  ];
  for (const [i, [what, bytes, code]] of bad.entries()) {
    c.raw(bytes);
    // Drawn by the host over the upstream capsule's screen.
    await pane.waitForText(`skipped a malformed frame from the capsule: ${code}`, WAIT).catch((e: Error) => {
      throw new Error(`no notice for ${what}: ${e.message}`);
    });
    await assertAlive(pane, c, `alive-after-bad-${i}`);
  }

  assert.deepEqual(c.notices(), [], 'nothing was sent back to the capsule');
  assert.ok(!existsSync(host.recorderLog), `the opener ran: ${existsSync(host.recorderLog) ? readFileSync(host.recorderLog, 'utf8') : ''}`);
  assert.deepEqual(host.written(), [], 'nothing written without a gesture');
  assert.equal(await pane.paneDead(), false);
});

/** A FileExportStart whose name length field says 200 while 8 name bytes follow. */
function lyingExportStart(): Buffer {
  const source = Buffer.from('/workspace/x');
  const name = Buffer.from('lies.txt');
  const head = Buffer.alloc(8 + 8 + 2 + 2 + 1 + 1);
  head.writeBigUInt64BE(9n, 0);
  head.writeBigUInt64BE(4n, 8);
  head.writeUInt16BE(source.length, 16);
  head.writeUInt16BE(200, 18);
  return rawFrame(SERVER_TAGS.FileExportStart, Buffer.concat([head, source, name]));
}

test('hostile capsule (ours, extensions negotiated): host requests are refused even right after a palette key; bad frames and escape sequences are shown inert', async (t) => {
  const host = hostSide(t);
  const pane = await paneFor(t, { ...PANE, env: host.env });
  const c = await attachToFake(t, pane, { name: 'ours', welcome: () => welcomeFrame(OUR_FEATURES), echo: true });
  await pollUntil('the host to negotiate extensions', () => c.received.some((f) => f.type === 'ExtHello'), WAIT);

  c.send({ type: 'HostOpenUrl', url: 'https://example.com/unasked' });
  await pane.waitForText(/Ignored a request from the capsule to open https:\/\/example\.com.*never open links/, WAIT);
  sendExport(c, 1n, 'unasked.txt', Buffer.from('planted\n'));
  await pane.waitForText(/Refused a file export from the capsule: .*on request/, WAIT);

  // A palette key is a gesture, but our capsule never answers one with these frames: still refused.
  await pane.sendBytes(PALETTE_KEY);
  await pane.waitForText('Detach (the program keeps running)', WAIT);
  c.send({ type: 'HostOpenUrl', url: 'https://after-key.example/x' });
  sendExport(c, 2n, 'after-key.txt', Buffer.from('planted\n'));
  await pane.sendKeys('Escape');
  // Notices are drawn once the palette closes. (The export refusal reads like the one above, and the fake
  // never repaints, so its text is no proof; the listing checked at the end is.)
  await pane.waitForText(/Ignored a request from the capsule to open https:\/\/after-key\.example/, WAIT);
  await assertAlive(pane, c, 'alive-after-key');
  assert.ok(!c.input().includes('\x1c'), 'the palette key stayed with the host');

  // Each expected notice names its frame, so an earlier notice left on the screen cannot satisfy the wait.
  const bad: Array<[what: string, bytes: Buffer, notice: string]> = [
    ['a Notice that is not UTF-8', rawFrame(SERVER_TAGS.Notice, Buffer.from([2, 0x41, 0xff, 0x42])), 'E_BAD_UTF8 Notice'],
    ['an unknown extension tag', rawFrame(0xbf, Buffer.from([1, 2, 3])), 'E_UNKNOWN_TAG unknown server frame tag 0xBF'],
    // A Shutdown that cannot be decoded must not end the session.
    ['a Shutdown whose reason is not UTF-8', rawFrame(SERVER_TAGS.Shutdown, Buffer.from([0xc3, 0x28])), 'E_BAD_UTF8 Shutdown'],
  ];
  for (const [i, [what, bytes, notice]] of bad.entries()) {
    c.raw(bytes);
    await pane.waitForText(`skipped a malformed frame from the capsule: ${notice}`, WAIT).catch((e: Error) => {
      throw new Error(`no notice for ${what}: ${e.message}`);
    });
    await assertAlive(pane, c, `alive-after-bad-${i}`);
  }

  // A well-formed Notice full of escape sequences: drawn as visible text, so none of them ran.
  c.send({ type: 'Notice', level: 'info', text: 'ESC-TEST \x1b]2;pwned\x07\x1b[2J\x1b[31mred' });
  const screen = await pane.waitForText('ESC-TEST', WAIT);
  assert.match(screen, /ESC-TEST \\x1b\]2;pwned\\x07\\x1b\[2J\\x1b\[31mred/);
  assert.match(screen, /FAKE-READY-0/, 'the screen was not cleared');
  assert.notEqual(await pane.display('#{pane_title}'), 'pwned');

  assert.ok(!existsSync(host.recorderLog), 'the opener never ran');
  assert.deepEqual(host.written(), [], 'nothing written');
  assert.equal(await pane.paneDead(), false);
});

test('hostile capsule (upstream): export names with separators, dot-dot, control characters and escape sequences are sanitised, stay in the download directory and never overwrite', async (t) => {
  const host = hostSide(t);
  const pane = await paneFor(t, { ...PANE, env: { ...host.env, JACKIN_UPSTREAM_REQUESTS: 'allow' } });
  const dest = join(host.downloads, 'jackin', 'names');
  mkdirSync(dest, { recursive: true, mode: 0o700 });
  writeFileSync(join(dest, 'report.txt'), 'ORIGINAL\n');
  const outside = join(dirname(host.downloads), 'escape.txt');

  const names: Array<[raw: string, saved: string]> = [
    ['../../../escape.txt', 'escape.txt'],
    ['/etc/passwd', 'passwd'],
    ['..', 'export'],
    ['a\\..\\..\\win.txt', 'win.txt'],
    ['evil\x1b]0;pwned\x07\x1b[31mred\r\n.txt', 'evil]0;pwned[31mred.txt'],
    ['.bashrc', 'bashrc'],
    ['report.txt', 'report-1.txt'],
  ];
  const c = await attachToFake(t, pane, { name: 'names', welcome: () => welcomeFrame(null) });

  // Each palette key (forwarded to the upstream capsule, whose palette it is) opens the window for one export.
  let keys = 0;
  c.onInput((bytes) => {
    for (const b of bytes) {
      if (b !== 0x1c) continue;
      const i = keys++;
      const entry = names[i];
      if (entry === undefined) continue;
      sendExport(c, BigInt(100 + i), entry[0], Buffer.from(`payload-${i}\n`));
      // A second export on the same gesture: refused.
      if (i === 0) sendExport(c, 99n, 'piggyback.txt', Buffer.from('planted\n'));
    }
  });
  const logged = (result: string) => async () => {
    const l = (await readActions(pane.jackinHome, 'names')).filter((r) => r.action === 'export' && r.result === result);
    return l;
  };
  for (const [i] of names.entries()) {
    await pane.sendBytes(PALETTE_KEY);
    await pollUntil(`export ${i} to be saved`, async () => (await logged('ok')()).length === i + 1, WAIT);
    if (i === 0) await pollUntil('the piggybacked export to be refused', async () => (await logged('refused')()).length === 1, WAIT);
  }

  assert.deepEqual(readdirSync(dest).sort(), ['report.txt', ...names.map(([, saved]) => saved)].sort());
  assert.equal(readFileSync(join(dest, 'report.txt'), 'utf8'), 'ORIGINAL\n', 'the existing file is untouched');
  for (const [i, [, saved]] of names.entries()) {
    const p = join(dest, saved);
    assert.equal(readFileSync(p, 'utf8'), `payload-${i}\n`, saved);
    assert.equal(statSync(p).mode & 0o777, 0o600, `${saved} is private`);
  }
  // Nothing anywhere else under the download directory, nor next to it.
  assert.deepEqual(host.written(), ['jackin', join('jackin', 'names'), ...readdirSync(dest).map((n) => join('jackin', 'names', n))].sort());
  assert.ok(!existsSync(outside), 'nothing escaped the download directory');
  assert.deepEqual(c.notices(), [], 'no notice (no host path) went to the capsule');
  assert.ok(!existsSync(host.recorderLog), 'no reveal or open was asked for');
});

test('hostile capsule: a malformed Welcome block means upstream; framing errors and lying lengths end the session with one line, a non-zero status and the terminal restored', async (t) => {
  const host = hostSide(t);
  const pane = await paneFor(t, { ...PANE, env: host.env });
  const chunkCap = FRAME_CAPS.get(SERVER_TAGS.FileExportChunk)!;
  const fake = await startFakeCapsule(t, {
    home: pane.jackinHome,
    name: 'broken',
    welcome: (i) => (i === 0 ? malformedWelcomeFrame() : welcomeFrame(i === 2 ? null : OUR_FEATURES)),
    echo: true,
  });

  // 0: a Welcome whose extension block is malformed. The host carries on as with an upstream capsule.
  await attach(pane, 'broken', 'welcome');
  const c0 = await fake.connection(0, START_TIMEOUT_MS);
  await pane.waitForText('FAKE-READY-0', WAIT);
  await pane.waitForText(/malformed extension block \(E_BAD_EXTENSIONS\)/, WAIT);
  assert.ok(!c0.received.some((f) => f.type === 'ExtHello'), 'no extensions negotiated');
  c0.send({ type: 'HostOpenUrl', url: 'https://example.com/after-bad-welcome' });
  await pollUntil(
    'the refused open in the host log',
    async () => (await readActions(pane.jackinHome, 'broken')).some((r) => r.action === 'open-url' && r.result === 'refused'),
    WAIT,
  );
  assert.deepEqual(c0.notices(), [], 'nothing was sent back to the capsule');
  await assertAlive(pane, c0, 'alive-after-welcome');
  c0.socket.end();
  const r = await attachEnded(pane, 'welcome');
  await assertModesRestored(pane, 'welcome');
  assert.notEqual(r.status, 0);
  assert.match(r.lastLine, /^jackin: lost connection to broken: the capsule closed the connection$/);

  // Connections 1 to 3 each break the stream their own way once the program's modes are on; the session
  // must end with one line naming the cause, a non-zero status and the operator's terminal restored.
  const breakWith = async (i: number, label: string, send: (c: FakeConnection) => void | Promise<void>, lastLine: RegExp): Promise<void> => {
    await attach(pane, 'broken', label);
    const c = await fake.connection(i, START_TIMEOUT_MS);
    await pane.waitForText(`FAKE-READY-${i}`, WAIT);
    await programModesOn(pane, c);
    await send(c);
    const ended = await attachEnded(pane, label);
    await assertModesRestored(pane, label);
    assert.notEqual(ended.status, 0, label);
    assert.match(ended.lastLine, lastLine);
  };

  // 1: an Output frame declaring one byte over the cap: a framing error.
  await breakWith(
    1,
    'oversized',
    (c) => c.raw(rawFrame(SERVER_TAGS.Output, Buffer.from('x'.repeat(64)), DEFAULT_FRAME_CAP + 1)),
    new RegExp(
      `^jackin: lost connection to broken: protocol error: Output frame declares ${DEFAULT_FRAME_CAP + 1} bytes, over its cap of ${DEFAULT_FRAME_CAP}$`,
    ),
  );

  // 2: an upstream capsule's FileExportChunk over the chunk cap (the large tags have their own caps).
  await breakWith(
    2,
    'chunk',
    (c) => c.raw(rawFrame(SERVER_TAGS.FileExportChunk, Buffer.alloc(1024), chunkCap + 1)),
    new RegExp(`^jackin: lost connection to broken: protocol error: FileExportChunk frame declares ${chunkCap + 1} bytes, over its cap of ${chunkCap}$`),
  );

  // 3: a length within the cap that lies: 1000 bytes promised, 20 sent, then the stream ends.
  await breakWith(
    3,
    'truncated',
    (c) => {
      c.raw(rawFrame(SERVER_TAGS.HostOpenUrl, Buffer.from('https://example.com/'), 1000));
      c.socket.end();
    },
    /^jackin: lost connection to broken: the stream ended inside a frame \(.*HostOpenUrl frame \(20 of 1000 payload bytes\)\)$/,
  );

  // 4: an Output frame that promises 1000 bytes and stops after some that switch modes on. The host
  // writes an Output frame's bytes as they arrive, so these reached the terminal before the stream ended:
  // the modes they set are still restored.
  const half = '\x1b[?1049hHALF-OUTPUT-4\x1b[?1000h\x1b[?25l';
  await breakWith(
    4,
    'truncated output',
    async (c) => {
      c.raw(rawFrame(SERVER_TAGS.Output, Buffer.from(half, 'latin1'), 1000));
      await pane.waitForText('HALF-OUTPUT-4', WAIT);
      c.socket.end();
    },
    new RegExp(`^jackin: lost connection to broken: the stream ended inside a frame \\(.*Output frame \\(${half.length} of 1000 payload bytes\\)\\)$`),
  );

  assert.ok(!existsSync(host.recorderLog), 'the opener never ran');
  assert.deepEqual(host.written(), []);
});

test('hostile capsule: an endless 1-byte-per-100-ms stream and a capsule that never answers Detach; Ctrl+\\ d still detaches', async (t) => {
  const host = hostSide(t);
  const pane = await paneFor(t, { ...PANE, env: host.env });
  const c = await attachToFake(t, pane, { name: 'slow', welcome: () => welcomeFrame(OUR_FEATURES) });
  await programModesOn(pane, c);
  const trickle = setInterval(() => c.send({ type: 'Output', bytes: Buffer.from('.') }), 100);
  t.after(() => clearInterval(trickle));
  await pane.waitForText('.....', WAIT);

  await pane.sendBytes(PALETTE_KEY);
  await pane.waitForText('Detach (the program keeps running)', WAIT);
  await pane.sendKeys('d');
  const r = await attachEnded(pane, 'slow');
  await assertModesRestored(pane, 'slow');
  assert.equal(r.status, 0, r.screen);
  assert.match(r.lastLine, /^jackin: detached from slow$/);
  assert.ok(
    c.received.some((f) => f.type === 'AttachControl' && f.body.kind === 'Detach'),
    'the host asked to detach',
  );
});

test('hostile capsule: a 50 MiB flood of output; typed input reaches the capsule, and the palette and detach work afterwards', async (t) => {
  const host = hostSide(t);
  const pane = await paneFor(t, { ...PANE, env: host.env });
  const c = await attachToFake(t, pane, { name: 'flood', welcome: () => welcomeFrame(OUR_FEATURES) });
  await programModesOn(pane, c);
  const FLOOD_BYTES = 50 * 1024 * 1024;
  const line = `${'flood-0123456789-'.repeat(6)}\r\n`;
  const frame = encodeServerFrame({ type: 'Output', bytes: Buffer.from(line.repeat(Math.floor(65_536 / line.length))) });
  const payloadPerFrame = frame.length - 5;
  const flood = (async () => {
    let sent = 0;
    while (sent < FLOOD_BYTES) {
      await c.write(frame);
      sent += payloadPerFrame;
    }
    await c.write(encodeServerFrame({ type: 'Output', bytes: Buffer.from('\r\nFLOOD-DONE\r\n') }));
    return sent;
  })();

  await pane.type('typed-during-flood');
  await pollUntil('typed input to reach the capsule during the flood', () => c.input().includes('typed-during-flood'), {
    timeoutMs: 120_000,
    last: () => c.input(),
  });
  const sent = await flood;
  assert.ok(sent >= FLOOD_BYTES);
  await pane.waitForText('FLOOD-DONE', { timeoutMs: 120_000 });

  await pane.sendBytes(PALETTE_KEY);
  await pane.waitForText('Detach (the program keeps running)', WAIT);
  const answered = new Promise<void>((resolve) => {
    const check = setInterval(() => {
      const d = c.received.find((f) => f.type === 'AttachControl' && f.body.kind === 'Detach');
      if (d?.type !== 'AttachControl') return;
      clearInterval(check);
      c.send({ type: 'AttachControlResponse', requestId: d.requestId, result: 'success' });
      c.send({ type: 'Shutdown', reason: null });
      resolve();
    }, 20);
    t.after(() => clearInterval(check));
  });
  await pane.sendKeys('d');
  await answered;
  const r = await attachEnded(pane, 'flood');
  await assertModesRestored(pane, 'flood');
  assert.equal(r.status, 0, r.screen);
  // Palette residue may follow on that row: the fake capsule never repaints.
  assert.match(r.lastLine, /^jackin: detached from flood/);
  assert.ok(!existsSync(host.recorderLog));
  assert.deepEqual(host.written(), []);
});

test('hostile capsule (ours, link-list): a listed link whose text is not on the screen gets no label; the one that is, copied only after the prompt showed its whole target', async (t) => {
  const host = hostSide(t);
  const clip = recordingClipboard(t);
  const pane = await paneFor(t, { ...PANE, env: { ...host.env, ...clip.env } });
  const c = await attachToFake(t, pane, { name: 'hints-liar', welcome: () => welcomeFrame({ ...OUR_FEATURES, 'link-list': 1 }), echo: true });
  // The fake's screen, drawn as a repaint draws it (normal screen, soft reset, home, clear), on every Repaint.
  const screen = '\x1b[?1049l\x1b[!p\x1b[r\x1b[H\x1b[2J\x1b[3;1Hhttps://good.example/docs\x1b[4;1Hhttps://other.example/x\x1b[6;1HLINKS-SHOWN';
  c.send({ type: 'Output', bytes: Buffer.from(screen, 'latin1') });
  await pane.waitForText('LINKS-SHOWN', WAIT);
  // Every link list the host asks for: the good URL's cells with another target, and the other URL truly.
  let seen = 0;
  const answer = setInterval(() => {
    for (const f of c.received.slice(seen)) {
      seen += 1;
      if (f.type === 'Repaint') c.send({ type: 'Output', bytes: Buffer.from(screen, 'latin1') });
      if (f.type === 'ListLinks') {
        c.send({
          type: 'Links',
          requestId: f.requestId,
          links: [
            { row: 2, col: 0, cells: 25, source: 'text', url: 'https://evil.example/steal' },
            { row: 3, col: 0, cells: 23, source: 'text', url: 'https://other.example/x' },
          ],
        });
      }
    }
  }, 20);
  t.after(() => clearInterval(answer));
  await pane.sendBytes(PALETTE_KEY);
  await pane.waitForText('Copy link on screen', WAIT);
  await pane.sendKeys('y');
  const lines = (await pane.waitForText('type a label to copy', WAIT)).split('\n');
  assert.equal(lines[2], 'https://good.example/docs', "no label over the good URL: the host's own view shows other text there");
  const label = lines[3]?.[0] ?? '';
  assert.match(label, /^[a-z]$/, `a label on the other URL: ${JSON.stringify(lines[3])}`);
  await typeLabel(pane, label, 'type a label to copy');
  const prompt = await pane.waitForText('│ https://other.example/x', WAIT);
  assert.match(prompt, /Copy this link\?/);
  assert.deepEqual(clip.written(), [], 'nothing copied before the operator answered');
  await pane.sendKeys('Escape');
  // The prompt's box stays drawn until the fake repaints: the host's notice and log tell.
  await pane.waitForText('Not copied: https://other.example', WAIT);
  const copies = await pollUntil(
    'the cancelled copy in the log',
    async () => {
      const r = (await readActions(pane.jackinHome, 'hints-liar')).filter((a) => a.action === 'copy-link');
      return r.length > 0 ? r : undefined;
    },
    WAIT,
  );
  assert.deepEqual(
    copies.map((r) => [r.target, r.result]),
    [['https://other.example/x', 'cancelled']],
  );
  assert.deepEqual(clip.written(), [], 'cancelled: nothing copied');
  // This fake's repaint draws only the fixed screen: the notice's expiry repaint would erase the echo below.
  clearInterval(answer);
  await assertAlive(pane, c, 'alive-after-hints');
});
