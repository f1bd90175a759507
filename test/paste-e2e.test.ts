// End-to-end: pasting screenshots (issue 5 acceptance) with a real X11 clipboard (Xvfb + xclip owning
// the CLIPBOARD selection) and `jackin run -- bash` in tmux as the operator's terminal.
// Debian packages: xvfb, xclip, tmux.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { runDir } from './helpers/capsules.ts';
import { paneFor, startSession } from './helpers/jackin-cli.ts';
import { pollUntil } from './helpers/poll.ts';
import type { TmuxPane } from './helpers/tmux.ts';
import { ownClipboard, startXvfb, type Xvfb } from './helpers/xvfb.ts';
import { bigPng } from './helpers/png.mjs';

const fixture = (name: string): Buffer => readFileSync(new URL(`./fixtures/images/${name}`, import.meta.url));
const PALETTE_KEY = [0x1c];
const NAME = 'paste';

let x: Xvfb;
let files: string;

before(async () => {
  x = await startXvfb();
  files = mkdtempSync(join(tmpdir(), 'jackin-paste-e2e-'));
});
after(async () => {
  await x.stop();
  rmSync(files, { recursive: true, force: true });
});

/** One session for the whole file: starting node twice per scenario would dominate the run. */
async function session(t: Parameters<typeof paneFor>[0]): Promise<{ pane: TmuxPane; staging: string }> {
  // The pane has DISPLAY (our Xvfb) and the real trigger (jackin-cli's default disables it). Wide enough
  // for a staged path under a long temporary directory and the keys typed after it on one line.
  const pane = await paneFor(t, { cols: 200, env: { DISPLAY: x.display, JACKIN_PASTE_KEY: 'ctrl+v' } });
  await startSession(pane, NAME);
  return { pane, staging: join(runDir(pane.jackinHome, NAME), 'clipboard') };
}

const staged = (dir: string): string[] => (existsSync(dir) ? readdirSync(dir).sort() : []);

/** The text after the last `in$ ` prompt on the screen (the command line being edited). */
async function commandLine(pane: TmuxPane): Promise<string> {
  const lines = (await pane.capture()).split('\n').filter((l) => l.startsWith('in$'));
  return (lines.at(-1) ?? '').replace(/^in\$ ?/, '');
}

async function waitForLine(pane: TmuxPane, probe: (line: string) => boolean, what: string, timeoutMs = 15_000): Promise<string> {
  let last = '';
  return pollUntil(
    what,
    async () => {
      last = await commandLine(pane);
      return probe(last) ? last : undefined;
    },
    { timeoutMs, last: () => last },
  );
}

/** Clears bash's command line (Ctrl+U) and waits for an empty prompt. */
async function clearLine(pane: TmuxPane): Promise<void> {
  await pane.sendKeys('C-u');
  await waitForLine(pane, (l) => l === '', 'an empty command line');
}

const STAGED_PATH = (ext: string) => new RegExp(`^(/\\S+/clipboard/clip-\\d{8}-\\d{6}-[0-9a-f]{16}\\.${ext})$`);

/** Ctrl+V with `data` served as `type`: the staged path lands on the command line; returns it. */
async function pasteAndCheck(pane: TmuxPane, staging: string, type: string, data: Buffer, ext: string, expect: Buffer = data): Promise<void> {
  const owner = await ownClipboard(x, type, data);
  try {
    const before = staged(staging);
    await pane.sendKeys('C-v');
    const line = await waitForLine(pane, (l) => STAGED_PATH(ext).test(l), `a staged .${ext} path on the command line`, 60_000);
    assert.ok(line.startsWith(`${staging}/`), `${line} is under ${staging}`);
    const now = staged(staging);
    assert.equal(now.length, before.length + 1);
    assert.deepEqual(readFileSync(line), expect, 'the staged file is byte-identical');
    assert.equal(statSync(line).mode & 0o777, 0o600);
    assert.equal(statSync(staging).mode & 0o777, 0o700);
    // No Enter: the path is still being edited (bash did not run it, so no "Permission denied").
    assert.doesNotMatch(await pane.capture(), /Permission denied|command not found/);
    await clearLine(pane);
  } finally {
    await owner.stop();
  }
}

/** Ctrl+V over a clipboard that must be refused: a notice matching `notice`, nothing staged. */
async function pasteRefused(pane: TmuxPane, staging: string, type: string, data: Buffer, notice: RegExp): Promise<void> {
  const owner = await ownClipboard(x, type, data);
  try {
    const before = staged(staging);
    await pane.sendKeys('C-v');
    await pane.waitForText(notice, { timeoutMs: 60_000 });
    assert.deepEqual(staged(staging), before, 'nothing staged');
    // The notice is drawn over the last row; once it is gone the command line must still be empty.
    await pane.waitForScreen('the notice to go', (s) => !s.includes('Image not pasted'), { timeoutMs: 15_000 });
    assert.equal(await commandLine(pane), '', 'nothing typed');
  } finally {
    await owner.stop();
  }
}

test('paste screenshots end to end (X11 clipboard, jackin run -- bash in tmux)', async (t) => {
  const { pane, staging } = await session(t);

  await t.test('Ctrl+V with a PNG puts a …/clipboard/<name>.png path on the command line, no Enter', async () => {
    await pasteAndCheck(pane, staging, 'image/png', fixture('sample.png'), 'png');
  });

  for (const [type, name, ext] of [
    ['image/jpeg', 'sample.jpg', 'jpg'],
    ['image/gif', 'sample.gif', 'gif'],
    ['image/webp', 'sample.webp', 'webp'],
    ['image/tiff', 'sample.tiff', 'tiff'],
  ] as const) {
    await t.test(`a ${type}-only clipboard is staged as .${ext}`, async () => {
      await pasteAndCheck(pane, staging, type, fixture(name), ext);
    });
  }

  await t.test('a copied file (text/uri-list) stages the file it names', async () => {
    const file = join(files, 'copied shot.png');
    writeFileSync(file, fixture('sample.png'));
    await pasteAndCheck(pane, staging, 'text/uri-list', Buffer.from(`${pathToFileURL(file).href}\r\n`), 'png', fixture('sample.png'));
  });

  await t.test('a text-only clipboard: Ctrl+V reaches bash as 0x16 (quoted-insert), nothing staged', async () => {
    const owner = await ownClipboard(x, 'UTF8_STRING', Buffer.from('just text'));
    try {
      const before = staged(staging);
      await pane.sendKeys('C-v');
      // Only after quoted-insert (0x16) does Ctrl+A appear as ^A instead of moving the cursor.
      await pane.sendKeys('C-a');
      await waitForLine(pane, (l) => l === '^A', 'bash to show the quoted ^A');
      assert.deepEqual(staged(staging), before);
      await clearLine(pane);
    } finally {
      await owner.stop();
    }
  });

  await t.test('image/png serving text, an svg, a truncated PNG and an over-cap image are refused with a notice', async () => {
    await pasteRefused(pane, staging, 'image/png', Buffer.from('this is not a png\n'), /Image not pasted: unsupported image/);
    await pasteRefused(pane, staging, 'image/svg+xml', fixture('sample.svg'), /Image not pasted: the clipboard offers only image\/svg/);
    await pasteRefused(pane, staging, 'image/png', fixture('sample.png').subarray(0, 40), /Image not pasted: .*truncated png/);
    await pasteRefused(pane, staging, 'image/png', bigPng(64 * 1024 * 1024 + 4096), /Image not pasted: .*more than the cap/);
  });

  await t.test('a 40 MiB PNG goes chunked and arrives byte-identical; keys typed meanwhile follow the path', async () => {
    const big = bigPng(40 * 1024 * 1024);
    const owner = await ownClipboard(x, 'image/png', big);
    try {
      await pane.sendKeys('C-v');
      await pane.type(' typed-during');
      const line = await waitForLine(pane, (l) => / typed-during$/.test(l) && l.includes('/clipboard/'), 'the path then the typed keys', 60_000);
      const path = line.replace(/ typed-during$/, '');
      assert.match(path, STAGED_PATH('png'));
      assert.ok(readFileSync(path).equals(big), 'byte-identical after the chunked transfer');
      await clearLine(pane);
      // Still responsive: a command runs and prints.
      await pane.typeLine('echo after-big-$((6*7))');
      await pane.waitForText(/^after-big-42$/m);
    } finally {
      await owner.stop();
    }
  });

  await t.test("pasting '/tmp/…/my shot.png' stages it; a relative path and a missing file pass unchanged", async () => {
    const shot = join(files, 'my shot.png');
    writeFileSync(shot, fixture('sample.png'));
    // Other existing files are staged too now (test/file-paste-e2e.test.ts); a missing one is only text.
    const notes = join(files, 'missing notes.txt').replace(/ /g, '\\ ');
    const paste = (text: string) => pane.sendBytes(Buffer.from(`\x1b[200~${text}\x1b[201~`, 'utf8'));
    const before = staged(staging);
    await paste(`'${shot}'`);
    const line = await waitForLine(pane, (l) => STAGED_PATH('png').test(l), 'the container path instead of the host path');
    assert.deepEqual(readFileSync(line), fixture('sample.png'));
    await clearLine(pane);
    for (const text of [notes, 'relative/a.png']) {
      await paste(text);
      await waitForLine(pane, (l) => l === text, `${text} unchanged on the command line`);
      await clearLine(pane);
    }
    assert.equal(staged(staging).length, before.length + 1);
  });

  await t.test('palette: paste (v) types the path; stage (s) and stage from clipboard path (p) type nothing', async () => {
    const owner = await ownClipboard(x, 'image/png', fixture('sample.png'));
    try {
      await pane.sendBytes(PALETTE_KEY);
      await pane.waitForText('Paste image from host clipboard');
      await pane.type('v');
      await waitForLine(pane, (l) => STAGED_PATH('png').test(l), 'the palette paste to type the path');
      await clearLine(pane);

      const before = staged(staging);
      await pane.sendBytes(PALETTE_KEY);
      await pane.waitForText('Stage image without pasting');
      await pane.type('s');
      await pane.waitForText(/Image staged, not pasted/);
      assert.equal(staged(staging).length, before.length + 1);
      await pane.waitForScreen('the notice to go', (s) => !s.includes('Image staged'), { timeoutMs: 15_000 });
      assert.equal(await commandLine(pane), '', 'stage-only types nothing');
    } finally {
      await owner.stop();
    }
    const file = join(files, 'from-path.gif');
    writeFileSync(file, fixture('sample.gif'));
    const text = await ownClipboard(x, 'UTF8_STRING', Buffer.from(file));
    try {
      const before = staged(staging);
      await pane.sendBytes(PALETTE_KEY);
      await pane.waitForText('Stage image from clipboard path');
      await pane.type('p');
      await pane.waitForText(/Image staged, not pasted/);
      const added = staged(staging).filter((n) => !before.includes(n));
      assert.equal(added.length, 1);
      assert.deepEqual(readFileSync(join(staging, added[0]!)), fixture('sample.gif'));
      await pane.waitForScreen('the notice to go', (s) => !s.includes('Image staged'), { timeoutMs: 15_000 });
      assert.equal(await commandLine(pane), '');
    } finally {
      await text.stop();
    }
  });

  await t.test('the staging directory is removed when the capsule exits', async () => {
    assert.ok(existsSync(staging));
    await pane.typeLine('exit');
    await pollUntil('the staging directory to be removed', () => !existsSync(staging), { timeoutMs: 15_000 });
  });
});
