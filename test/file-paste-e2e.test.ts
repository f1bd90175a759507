// End-to-end: host files pasted or dropped into `jackin run -- bash` in tmux (the operator's terminal),
// with a real X11 clipboard (Xvfb + xclip) for Ctrl+V over a copied file list. Bash's own printf reads back
// what was typed, so each test checks that the container paths arrive quoted the way the host paths were.
// Debian packages: xvfb, xclip, tmux.
import { after, before, test } from 'node:test';
import { spawnSync } from 'node:child_process';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { runDir } from './helpers/capsules.ts';
import { confirmOnScreen, paneFor, startSession, JACKIN_BIN } from './helpers/jackin-cli.ts';
import { pollUntil } from './helpers/poll.ts';
import type { TmuxPane } from './helpers/tmux.ts';
import { ownClipboard, startXvfb, type Xvfb } from './helpers/xvfb.ts';

const NAME = 'fpaste';
/** The session's cap (JACKIN_STAGE_MAX_BYTES) on one file and on one paste. */
const CAP = 64 * 1024;

let x: Xvfb;
let files: string;

before(async () => {
  x = await startXvfb();
  files = mkdtempSync(join(tmpdir(), 'jackin-file-paste-'));
});
after(async () => {
  await x.stop();
  rmSync(files, { recursive: true, force: true });
});

/** Every staged file as <random>/<name>. */
function staged(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .flatMap((d) => (statSync(join(dir, d)).isDirectory() ? readdirSync(join(dir, d)).map((f) => `${d}/${f}`) : [d]))
    .sort();
}

function hostFile(name: string, bytes: Buffer | string): string {
  const p = join(files, name);
  writeFileSync(p, bytes);
  return p;
}

/** The command line after the last `in$ ` prompt (wrapped rows joined: staged paths are long under a long TMPDIR). */
async function commandLine(pane: TmuxPane): Promise<string> {
  const lines = (await pane.capture({ joined: true })).split('\n').filter((l) => l.startsWith('in$'));
  return (lines.at(-1) ?? '').replace(/^in\$ ?/, '');
}

/**
 * Types `printf '<tag>%s\n' `, pastes `text` (bracketed), runs `between` (answers a prompt), waits for
 * `typed` on the command line (nothing ran: no Enter was sent with the paste), then presses Enter and
 * returns the words bash received.
 */
async function pasteThroughPrintf(
  pane: TmuxPane,
  tag: string,
  text: string,
  typed: (line: string) => boolean,
  between?: () => Promise<void>,
): Promise<string[]> {
  const prefix = `printf '${tag}%s\\n' `;
  await pane.type(prefix);
  await pane.sendBytes(Buffer.from(`\x1b[200~${text}\x1b[201~`, 'utf8'));
  await between?.();
  let last = '';
  await pollUntil(
    'the pasted text on the command line',
    async () => {
      last = await commandLine(pane);
      return last.startsWith(prefix) && typed(last.slice(prefix.length));
    },
    { timeoutMs: 30_000, last: () => last },
  );
  assert.doesNotMatch(await pane.capture({ joined: true }), new RegExp(`^${tag}`, 'm'), 'nothing ran before Enter');
  await pane.sendKeys('Enter');
  // All of printf's lines and bash's next prompt after them: the screen may be read between printf's lines.
  const screen = await pane.waitForText(new RegExp(`^${tag}.*(?:\\n${tag}.*)*\\nin\\$`, 'm'), { joined: true });
  return screen
    .split('\n')
    .filter((l) => l.startsWith(tag))
    .map((l) => l.slice(tag.length));
}

/** The host action log of the pane's JACKIN_HOME, one record a line. */
function logged(pane: { jackinHome: string }): Array<{ action: string; target: string; result: string; detail?: string }> {
  const file = join(pane.jackinHome, 'log', 'actions.jsonl');
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as { action: string; target: string; result: string; detail?: string });
}

test('pasted and dropped host files end to end (jackin run -- bash in tmux, X11 clipboard)', async (t) => {
  const pane = await paneFor(t, { cols: 400, env: { DISPLAY: x.display, JACKIN_PASTE_KEY: 'ctrl+v', JACKIN_STAGE_MAX_BYTES: String(CAP) } });
  await startSession(pane, NAME);
  const dir = join(runDir(pane.jackinHome, NAME), 'files');
  const stagedPath = new RegExp(`^${dir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/[0-9a-f]{16}/`);

  await t.test('one path with spaces and quotes, single-quoted: the container path, same quoting, same bytes', async () => {
    const bytes = Buffer.from('%PDF-1.4 report\n');
    const host = hostFile(`it's my "report".pdf`, bytes);
    const quoted = `'${host.replace(/'/g, "'\\''")}' `;
    const [got, ...rest] = await pasteThroughPrintf(pane, 'ONE', quoted, (l) => l.includes('/files/') && l.startsWith("'"));
    assert.deepEqual(rest, []);
    assert.match(got!, stagedPath);
    assert.equal(got!.split('/').at(-1), `it's my "report".pdf`);
    assert.deepEqual(readFileSync(got!), bytes);
    assert.equal(statSync(got!).mode & 0o777, 0o600);
    assert.equal(statSync(join(got!, '..')).mode & 0o777, 0o700);
    await pane.waitForText(/Staged .*report.*\.pdf as /);
    await pollUntil('the stage in the host action log', () =>
      logged(pane).some((r) => r.action === 'stage' && r.result === 'ok' && r.target === host && r.detail?.startsWith(got!) === true),
    );
  });

  await t.test('a symlink is staged under the pasted name only once the operator confirmed the file it leads to, named by the host', async () => {
    const target = hostFile('real-target.log', 'target bytes\n');
    const link = join(files, 'latest.log');
    symlinkSync(target, link);
    const [got] = await pasteThroughPrintf(
      pane,
      'LINK',
      link,
      (l) => l.includes('/files/'),
      async () => {
        const prompt = await pane.waitForText(/Send this host file into the container\?/);
        assert.match(prompt, /real-target\.log/, 'the prompt names the file the symlink leads to');
        assert.match(prompt, /latest\.log/, 'and the path that was pasted');
        await confirmOnScreen(pane);
      },
    );
    assert.equal(got!.split('/').at(-1), 'latest.log');
    assert.equal(readFileSync(got!, 'utf8'), 'target bytes\n');
    await pane.waitForText(/symlink to .*real-target\.log/);
  });

  await t.test('a symlink the operator does not confirm (Esc) is not read: the host path is pasted, with a notice and a record', async () => {
    const target = hostFile('private-notes.txt', 'private\n');
    const link = join(files, 'notes.txt');
    symlinkSync(target, link);
    const before = staged(dir).length;
    const [got] = await pasteThroughPrintf(
      pane,
      'NOLINK',
      link,
      (l) => l === link,
      async () => {
        await pane.waitForText(/Send this host file into the container\?/);
        await pane.sendKeys('Escape');
      },
    );
    assert.equal(got, link);
    await pane.waitForText(/Not staged, pasted as the host path: .*notes\.txt leads to .*private-notes\.txt/);
    assert.equal(staged(dir).length, before, 'nothing was staged');
    await pollUntil('the refusal in the host action log', () =>
      logged(pane).some((r) => r.action === 'stage' && r.result === 'refused' && r.target === link && r.detail?.startsWith('E_SYMLINK_DECLINED') === true),
    );
  });

  await t.test('three paths (escaped, double-quoted, single-quoted) become three container paths in order', async () => {
    const a = hostFile('a b.csv', 'a,b\n1,2\n');
    const b = hostFile('say "hi" $HOME.txt', 'hi\n');
    const c = hostFile('plain.log', 'log line\n');
    const text = `${a.replace(/ /g, '\\ ')} "${b.replace(/["\\$`]/g, '\\$&')}" '${c}'`;
    const got = await pasteThroughPrintf(pane, 'THREE', text, (l) => l.split('/files/').length === 4 && l.includes('\\ ') && l.includes('"'));
    assert.equal(got.length, 3);
    for (const [p, host] of [
      [got[0], a],
      [got[1], b],
      [got[2], c],
    ] as const) {
      assert.match(p!, stagedPath);
      assert.deepEqual(readFileSync(p!), readFileSync(host));
      assert.equal(p!.split('/').at(-1), host.split('/').at(-1));
    }
  });

  await t.test('a file:// URI becomes the container path as a file:// URI', async () => {
    const host = hostFile('uri target.txt', 'by uri\n');
    const got = await pasteThroughPrintf(pane, 'URI', pathToFileURL(host).href, (l) => l.startsWith('file://') && l.includes('/files/'));
    assert.equal(got.length, 1);
    const path = fileURLToPath(got[0]!);
    assert.match(path, stagedPath);
    assert.equal(readFileSync(path, 'utf8'), 'by uri\n');
  });

  await t.test('a secret path is pasted unchanged with a notice; a missing path and prose are plain text', async () => {
    mkdirSync(join(files, '.ssh'), { recursive: true });
    const secret = hostFile('.ssh/id_test', 'PRIVATE\n');
    const before = staged(dir);
    const got = await pasteThroughPrintf(pane, 'SECRET', secret, (l) => l === secret);
    assert.deepEqual(got, [secret]);
    await pane.waitForText(/Not staged.*credentials directory/);
    await pollUntil('the refusal in the host action log', () =>
      logged(pane).some((r) => r.action === 'stage' && r.result === 'refused' && r.target === secret),
    );
    const missing = join(files, 'no such file.txt').replace(/ /g, '\\ ');
    assert.deepEqual(await pasteThroughPrintf(pane, 'MISSING', missing, (l) => l === missing), [join(files, 'no such file.txt')]);
    const sub = join(files, 'a directory');
    mkdirSync(sub, { recursive: true });
    const escaped = sub.replace(/ /g, '\\ ');
    assert.deepEqual(await pasteThroughPrintf(pane, 'DIR', escaped, (l) => l === escaped), [sub]);
    await pane.waitForText(/Not staged.*is a directory/);
    const prose = `see ${hostFile('x.txt', 'x')}`;
    assert.deepEqual(await pasteThroughPrintf(pane, 'PROSE', prose, (l) => l === prose), ['see', join(files, 'x.txt')]);
    assert.deepEqual(staged(dir), before, 'nothing staged');
  });

  await t.test('the caps: a file over JACKIN_STAGE_MAX_BYTES, and two files over it together, stay host paths', async () => {
    const before = staged(dir);
    const big = hostFile('big.bin', Buffer.alloc(CAP + 1));
    assert.deepEqual(await pasteThroughPrintf(pane, 'BIG', big, (l) => l === big), [big]);
    await pane.waitForText(/Not staged.*over the cap/);
    const h1 = hostFile('half1.bin', Buffer.alloc(CAP / 2 + 1));
    const h2 = hostFile('half2.bin', Buffer.alloc(CAP / 2 + 1));
    assert.deepEqual(await pasteThroughPrintf(pane, 'PAIR', `${h1} ${h2}`, (l) => l === `${h1} ${h2}`), [h1, h2]);
    assert.deepEqual(staged(dir), before, 'nothing staged');
  });

  await t.test('jackin stage while someone is attached: the file is staged and the attached operator is told', async () => {
    const host = hostFile('from the cli.txt', 'cli\n');
    const r = spawnSync(process.execPath, [JACKIN_BIN, 'stage', '--to', NAME, '--json', host], {
      env: { ...process.env, JACKIN_HOME: pane.jackinHome },
      encoding: 'utf8',
    });
    assert.equal(r.status, 0, r.stderr);
    const line = JSON.parse(r.stdout.trim()) as { ok: boolean; destination: string };
    assert.equal(line.ok, true);
    assert.match(line.destination, stagedPath);
    assert.equal(readFileSync(line.destination, 'utf8'), 'cli\n');
    await pane.waitForText(/Host file staged: .*from the cli\.txt/);
  });

  await t.test('Ctrl+V over a copied file list (X11 text/uri-list) types the container paths', async () => {
    const a = hostFile('copied one.txt', 'one\n');
    const b = hostFile('copied-two.md', '# two\n');
    const owner = await ownClipboard(x, 'text/uri-list', Buffer.from(`${pathToFileURL(a).href}\r\n${pathToFileURL(b).href}\r\n`));
    try {
      const prefix = `printf 'CLIP%s\\n' `;
      await pane.type(prefix);
      await pane.sendKeys('C-v');
      await pollUntil('two staged paths on the command line', async () => (await commandLine(pane)).split('/files/').length === 3, { timeoutMs: 30_000 });
      await pane.sendKeys('Enter');
      // Both lines whole (each ends with its file's name): the screen may be read between printf's two lines.
      const screen = await pane.waitForText(/^CLIP.*copied one\.txt\nCLIP.*copied-two\.md$/m, { joined: true });
      const got = screen
        .split('\n')
        .filter((l) => l.startsWith('CLIP'))
        .map((l) => l.slice(4));
      assert.equal(got.length, 2);
      assert.equal(readFileSync(got[0]!, 'utf8'), 'one\n');
      assert.equal(readFileSync(got[1]!, 'utf8'), '# two\n');
      assert.match(got[0]!, stagedPath);
      assert.equal(got[0]!.split('/').at(-1), 'copied one.txt');
    } finally {
      await owner.stop();
    }
  });

  await t.test('Ctrl+V over a GNOME copy (x-special/gnome-copied-files) types the container paths', async () => {
    const a = hostFile('gnome copied.txt', 'gnome\n');
    const owner = await ownClipboard(x, 'x-special/gnome-copied-files', Buffer.from(`copy\n${pathToFileURL(a).href}`));
    try {
      await pane.type(`printf 'GNOME%s\\n' `);
      await pane.sendKeys('C-v');
      await pollUntil('a staged path on the command line', async () => (await commandLine(pane)).includes('/files/'), { timeoutMs: 30_000 });
      await pane.sendKeys('Enter');
      const screen = await pane.waitForText(/^GNOME.*gnome copied\.txt$/m, { joined: true });
      const got = screen
        .split('\n')
        .filter((l) => l.startsWith('GNOME'))
        .map((l) => l.slice(5));
      assert.equal(got.length, 1);
      assert.equal(readFileSync(got[0]!, 'utf8'), 'gnome\n');
    } finally {
      await owner.stop();
    }
  });
});
