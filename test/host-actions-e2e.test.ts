// Trustworthy host actions, end to end: a real `jackin` in tmux against a capsule that lies (the scripted
// fake of test/helpers/fake-capsule.ts) or our own capsule running a hostile program, with a recording
// opener (JACKIN_OPENER), a private download directory and a clipboard command that prints a real PNG.
// - one palette key answered with an open, an export and a clipboard read: exactly one happens;
// - without --allow-upstream-requests none happens, each refusal is drawn by the host, nothing goes back
//   to the capsule;
// - a program that set a scroll region and origin mode cannot move the palette;
// - keys in the same read after a paste's end are typed bytes, never the palette key.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readActions } from '../src/host/instances/action-log.ts';
import { startFakeCapsule, welcomeFrame, type FakeConnection } from './helpers/fake-capsule.ts';
import { fixtureCommand, JACKIN, paneFor, REPO_ROOT, startSession, START_TIMEOUT_MS } from './helpers/jackin-cli.ts';
import { pollUntil } from './helpers/poll.ts';
import { recordingOpener } from './helpers/recording-opener.ts';
import { pipePaneOutput, shellQuote, type TmuxPane } from './helpers/tmux.ts';

const WAIT = { timeoutMs: 20_000 };
const PNG = join(REPO_ROOT, 'test', 'fixtures', 'images', 'sample.png');

interface HostSide {
  env: Record<string, string>;
  downloads: string;
  opened(): string[];
}

function hostSide(t: TestContext): HostSide {
  const root = mkdtempSync(join(tmpdir(), 'jackin-host-actions-'));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  const downloads = join(root, 'downloads');
  mkdirSync(downloads);
  const rec = recordingOpener(t);
  return {
    env: { ...rec.env, JACKIN_DOWNLOAD_DIR: downloads, JACKIN_CLIPBOARD: `command:cat ${PNG}`, JACKIN_PASTE_KEY: 'ctrl+v' },
    downloads,
    opened: rec.opened,
  };
}

/** An upstream capsule that answers every palette key with three host requests at once. */
async function greedyCapsule(t: TestContext, pane: TmuxPane, name: string, flags: string): Promise<FakeConnection> {
  const fake = await startFakeCapsule(t, { home: pane.jackinHome, name, welcome: () => welcomeFrame(null) });
  let n = 0;
  await pane.typeLine(`clear; ${JACKIN} attach ${shellQuote(name)} ${flags}; echo "rc=$?"`);
  const c = await fake.connection(0, START_TIMEOUT_MS);
  await pane.waitForText('FAKE-READY-0', WAIT);
  c.onInput((bytes) => {
    if (!bytes.includes(0x1c)) return;
    const id = BigInt(++n);
    const payload = Buffer.from('planted\n');
    c.send({ type: 'HostOpenUrl', url: `https://example.com/open-${id}` });
    c.send({ type: 'FileExportStart', exportId: id, size: payload.length, source: '/workspace/planted.txt', name: 'planted.txt', reveal: false, open: false });
    c.send({ type: 'FileExportChunk', exportId: id, offset: 0, bytes: payload });
    c.send({ type: 'FileExportEnd', exportId: id, sha256: createHash('sha256').update(payload).digest() });
    c.send({ type: 'HostPasteImageFromClipboard' });
  });
  return c;
}

const imagesSent = (c: FakeConnection): number => c.received.filter((f) => f.type.startsWith('ClipboardImage')).length;

test('one palette key answered with an open, an export and a clipboard read: exactly one happens, the others are refused and logged', async (t) => {
  const host = hostSide(t);
  const pane = await paneFor(t, { rows: 30, cols: 160, env: host.env });
  const c = await greedyCapsule(t, pane, 'greedy', '--allow-upstream-requests');
  // Everything drawn from here on: the host's notices take turns in one corner, so the open's may already
  // be covered by a refusal's when the screen is read.
  const written = await pipePaneOutput(t, pane, 'utf8');
  await pane.sendBytes([0x1c]);
  const log = await pollUntil(
    'the three requests to be decided',
    async () => {
      const l = await readActions(pane.jackinHome, 'greedy');
      return l.length >= 3 ? l : undefined;
    },
    WAIT,
  );
  const seen = (): string => JSON.stringify({ log, opened: host.opened(), written: readdirSync(host.downloads), images: imagesSent(c) });
  // The open came first and took the gesture; its entry is written when the opener has run, so under load it
  // may land before or after the two refusals: the set is what counts.
  const byAction = (rows: readonly { action: string; result: string }[]): string[][] => rows.map((r) => [r.action, r.result]).sort();
  assert.deepEqual(
    byAction(log),
    [
      ['export', 'refused'],
      ['open-url', 'ok'],
      ['paste-image', 'refused'],
    ],
    seen(),
  );
  assert.deepEqual(host.opened(), ['https://example.com/open-1'], seen());
  // The outcome is drawn by the host itself, over an upstream capsule too.
  await pollUntil("the host to draw the open's outcome", () => written().includes('Opened https://example.com'), {
    ...WAIT,
    last: () => JSON.stringify(written()),
  });
  assert.deepEqual(readdirSync(host.downloads), [], 'the export was not written');
  assert.equal(imagesSent(c), 0, 'the clipboard was not sent');
  assert.deepEqual(c.notices(), [], 'nothing (no host path) was sent to the capsule');

  // The next palette key is one more gesture: again exactly one request goes through.
  await pane.sendBytes([0x1c]);
  await pollUntil('the second open', () => host.opened().length === 2, WAIT);
  assert.deepEqual(readdirSync(host.downloads), []);
  assert.equal(imagesSent(c), 0);
});

test("without --allow-upstream-requests an upstream capsule's requests are refused with host-drawn notices, even after a palette key", async (t) => {
  const host = hostSide(t);
  const pane = await paneFor(t, { rows: 30, cols: 160, env: host.env });
  const c = await greedyCapsule(t, pane, 'refused', '');
  await pane.sendBytes([0x1c]);
  await pane.waitForText(/Refused a request from the capsule \((export|paste-image|open-url)/, WAIT);
  const log = await pollUntil(
    'the three refusals',
    async () => {
      const l = await readActions(pane.jackinHome, 'refused');
      return l.length >= 3 ? l : undefined;
    },
    WAIT,
  );
  assert.deepEqual(
    log.map((r) => [r.action, r.result]),
    [
      ['open-url', 'refused'],
      ['export', 'refused'],
      ['paste-image', 'refused'],
    ],
  );
  assert.match(log[0]?.detail ?? '', /--allow-upstream-requests/);
  assert.deepEqual(host.opened(), []);
  assert.deepEqual(readdirSync(host.downloads), []);
  assert.equal(imagesSent(c), 0);
  assert.deepEqual(c.notices(), []);
});

test('a program that sets a scroll region and origin mode cannot move the palette: it is drawn whole at its place', async (t) => {
  const pane = await paneFor(t, { rows: 40, cols: 120 });
  // The marker is built at run time: the command line's echo must not show it (see startSession).
  const program = `sh -c ${shellQuote("printf 'HOSTILE-%s' READY; printf '\\033[39;40r\\033[?6h'; exec cat >/dev/null")}`;
  await startSession(pane, 'regions', 'HOSTILE-READY', program);
  // The region and origin mode are in force on the operator's terminal before the palette key.
  await pollUntil('origin mode on the pane', async () => (await pane.modes()).origin, WAIT);
  await pane.sendBytes([0x1c]);
  // The whole box: tmux can show the palette's first rows before its bottom border is drawn.
  const screen = await pane.waitForText(/Detach \(the program keeps running\)[\s\S]*Esc close[^\n]*\n[^\n]*└/u, WAIT);
  const lines = screen.split('\n');
  const top = lines.findIndex((l) => l.includes('┌─ jackin '));
  const bottom = lines.findIndex((l, i) => i > top && l.includes('└'));
  assert.ok(top > 0 && bottom > top, screen);
  // Every row between the borders is a row of the box, and the box is centred on the 40 rows.
  for (let i = top + 1; i < bottom; i++) assert.match(lines[i] ?? '', /│.*│/u, `row ${i}:\n${screen}`);
  assert.ok(Math.abs(top + (bottom - top + 1) / 2 - 20) <= 1, `box at rows ${top}..${bottom}:\n${screen}`);
  for (const title of ['Detach (the program keeps running)', 'Paste image from host clipboard', 'Open offered link', 'Pull offered file']) {
    assert.ok(screen.includes(title), `${title} missing:\n${screen}`);
  }
  await pane.sendKeys('Escape');
});

test("keys in the same read right after a paste's end are typed bytes: a pasted ESC[201~ followed by Ctrl+\\ u opens nothing", async (t) => {
  const host = hostSide(t);
  const pane = await paneFor(t, { rows: 30, cols: 120, env: host.env });
  const out = join(pane.jackinHome, 'recorded.bin');
  await startSession(pane, 'pasted', 'RAW-RECORDER-READY', fixtureCommand('raw-recorder.mjs', out));
  await pane.sendBytes(Buffer.from('\x1b[200~see docs\x1b[201~\x1cu', 'latin1'));
  // The program did not ask for bracketed paste, so the paste reaches it without its markers; the keys
  // after it arrive as typed bytes.
  const expected = Buffer.from('see docs\x1cu', 'latin1');
  await pollUntil('the recorder to receive the paste and the keys', () => readFileSync(out).equals(expected), {
    ...WAIT,
    last: () => readFileSync(out).toString('latin1'),
  });
  const screen = await pane.capture();
  assert.ok(!screen.includes('Detach (the program keeps running)'), `the palette opened:\n${screen}`);
  assert.ok(!screen.includes('No link has been offered'), screen);
  assert.deepEqual(host.opened(), []);
  // The same key in a read of its own is the palette key.
  await pane.sendBytes([0x1c]);
  await pane.waitForText('Detach (the program keeps running)', WAIT);
  await pane.sendKeys('Escape');
});

test('a program rewriting row 1 every 5 ms cannot hide a host notice', async (t) => {
  const pane = await paneFor(t, { rows: 30, cols: 120 });
  // Row 1 rewritten with a full line of X every 5 ms, for ever.
  const program = `${shellQuote(process.execPath)} -e ${shellQuote("setInterval(() => process.stdout.write('\\x1b7\\x1b[1;1H' + 'X'.repeat(120) + '\\x1b8'), 5)")}`;
  await startSession(pane, 'row1', /^X{120}$/m, program);
  // A host notice: the outcome of an export of a path that does not exist.
  await pane.sendBytes([0x1c]);
  await pane.waitForText('Export file…', WAIT);
  await pane.sendKeys('e');
  await pane.waitForText('Container path to export', WAIT);
  await pane.type('/no/such/file.txt');
  await pane.sendKeys('Enter');
  await pane.waitForText(/Export of \/no\/such\/file\.txt failed/, WAIT);
  // Sampled while it is up: the program's writes never keep it away for long.
  let seen = 0;
  for (let i = 0; i < 10; i++) if (/Export of \/no\/such\/file\.txt failed/.test((await pane.screenLines())[0] ?? '')) seen++;
  assert.ok(seen >= 3, `the notice was on row 1 in ${seen} of 10 samples`);
});
