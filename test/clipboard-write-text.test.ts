// Copy offers put text on the host clipboard: a real X11 clipboard (Xvfb + xclip), a `command:` backend
// (a real script), the OSC 52 fallback, and the exact argv of the backends that cannot run here.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hasCode } from '../src/errors.ts';
import { createTextWriter, osc52Write, textWriteCommand } from '../src/host/platform/clipboard/write-text.ts';
import { ownClipboard, startXvfb, type Xvfb } from './helpers/xvfb.ts';
import { pollUntil } from './helpers/poll.ts';

const TEXT = 'copied \u00e9\u4e2d\n\tsecond line\r\n';
let x: Xvfb;
let dir: string;

before(async () => {
  x = await startXvfb();
  dir = mkdtempSync(join(tmpdir(), 'jackin-write-text-'));
});
after(async () => {
  await x.stop();
  rmSync(dir, { recursive: true, force: true });
});

test('clipboard text writer: xclip puts exactly the text on a real X11 clipboard', async () => {
  const w = createTextWriter({ kind: 'xclip' }, 'test', x.env, () => assert.fail('no terminal write expected'));
  await w.write(TEXT);
  const read = () => spawnSync('xclip', ['-selection', 'clipboard', '-o'], { env: x.env }).stdout.toString('utf8');
  await pollUntil('the X11 clipboard to hold the text', () => read() === TEXT);
  // Take the selection back with an owner we stop, so the xclip that served the copy exits.
  const owner = await ownClipboard(x, 'text/plain', Buffer.from('other'));
  await owner.stop();
});

test('clipboard text writer: command: backends get the text on stdin and JACKIN_CLIPBOARD_OP=write-text', async () => {
  const script = join(dir, 'clip.sh');
  const out = join(dir, 'out.txt');
  writeFileSync(script, `#!/bin/sh\n[ "$JACKIN_CLIPBOARD_OP" = write-text ] || exit 3\ncat > "$1"\n`);
  chmodSync(script, 0o700);
  await createTextWriter({ kind: 'command', argv: [script, out] }, 'test', process.env, () => {}).write(TEXT);
  assert.equal(readFileSync(out, 'utf8'), TEXT);
  const failing = createTextWriter({ kind: 'command', argv: ['sh', '-c', 'exit 4'] }, 'test', process.env, () => {});
  await assert.rejects(failing.write('x'), (e) => hasCode(e, 'E_CLIPBOARD_WRITE_FAILED'));
  const missing = createTextWriter({ kind: 'command', argv: [join(dir, 'nope')] }, 'test', process.env, () => {});
  await assert.rejects(missing.write('x'), (e) => hasCode(e, 'E_CLIPBOARD_BACKEND_MISSING'));
});

test('clipboard text writer: without a reachable clipboard jackin writes OSC 52 to its own terminal', async () => {
  const written: Buffer[] = [];
  const w = createTextWriter({ kind: 'unavailable' }, 'no display', {}, (b) => written.push(b));
  await w.write(TEXT);
  assert.deepEqual(written, [osc52Write(TEXT)]);
  assert.equal(written[0]!.toString('latin1'), `\x1b]52;c;${Buffer.from(TEXT).toString('base64')}\x1b\\`);
  await assert.rejects(createTextWriter({ kind: 'none' }, 'JACKIN_CLIPBOARD=none', {}, () => {}).write('x'), (e) => hasCode(e, 'E_CLIPBOARD_BACKEND_MISSING'));
});

test('clipboard text writer: exact commands of the backends that cannot run here', () => {
  assert.deepEqual(textWriteCommand({ kind: 'macos' })?.cmd, { file: 'pbcopy', args: [] });
  assert.deepEqual(textWriteCommand({ kind: 'windows', wsl: true })?.cmd, { file: 'clip.exe', args: [] });
  assert.equal(textWriteCommand({ kind: 'windows', wsl: false })?.encoding, 'utf16le-bom');
  assert.deepEqual(textWriteCommand({ kind: 'wl-paste' })?.cmd, { file: 'wl-copy', args: ['--type', 'text/plain;charset=utf-8'] });
  assert.deepEqual(textWriteCommand({ kind: 'xclip' })?.cmd, { file: 'xclip', args: ['-selection', 'clipboard', '-in'] });
});
