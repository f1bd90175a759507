import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import { hasCode } from '../errors.ts';
import { ControlMessageDecoder, encodeControlMessage } from '../protocol/index.ts';
import { ControlMethods } from '../capsule/session/control-methods.ts';
import { registerClipboardMethod } from '../capsule/images/clipboard-method.ts';
import { PasteScanner } from '../capsule/connection/paste-scanner.ts';
import { ImageStaging, type StagedImage } from '../capsule/session/staging.ts';
import { TerminalFilter } from '../host/terminal/terminal-filter/filter.ts';
import type { FilterEvent } from '../host/terminal/terminal-filter/context.ts';
import { MAX_COPY_TEXT_BYTES } from './copy-command.ts';
import { clipboardCommand } from './clipboard-command.ts';
import type { ClipboardTool } from './clipboard-tools.ts';

const fixture = (name: string): Buffer => readFileSync(new URL(`../../test/fixtures/images/${name}`, import.meta.url));

function runDir(t: TestContext): string {
  const dir = mkdtempSync(join(tmpdir(), 'jackin-clip-cmd-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** A control socket at `<dir>/jackin.sock` answering each request with `answer(request)`. */
async function capsuleSocket(t: TestContext, dir: string, answer: (request: unknown, socket: Socket) => Promise<unknown>): Promise<void> {
  const server = createServer((socket) => {
    const decoder = new ControlMessageDecoder();
    socket.on('data', (chunk: Buffer) => {
      for (const request of decoder.push(chunk)) void answer(request, socket).then((reply) => socket.end(encodeControlMessage(reply)));
    });
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(join(dir, 'jackin.sock'), resolve));
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
}

/** The real `clipboard-image` method, answering from `source.lastPasted`. */
async function capsule(t: TestContext, dir: string): Promise<{ lastPasted: StagedImage | null }> {
  const source: { lastPasted: StagedImage | null } = { lastPasted: null };
  const control = new ControlMethods();
  registerClipboardMethod(control, source);
  await capsuleSocket(t, dir, async (request, socket) => (await control.dispatch(request, socket)).reply);
  return source;
}

interface Ran {
  status: number;
  stdout: Buffer;
  stderr: string;
}

async function run(tool: ClipboardTool, args: string[], dir: string, stdin: Buffer = Buffer.alloc(0), ttyPath = join(dir, 'tty')): Promise<Ran> {
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  const sink = (into: Buffer[]) => new Writable({ write: (chunk: Buffer, _enc, cb) => (into.push(Buffer.from(chunk)), cb()) });
  const status = await clipboardCommand(tool, args, { stdin: Readable.from([stdin]), stdout: sink(out), stderr: sink(err), runDir: dir, ttyPath });
  return { status, stdout: Buffer.concat(out), stderr: Buffer.concat(err).toString('utf8') };
}

/** The copy offers the host's filter finds in what was written to the terminal. */
function offers(ttyPath: string): string[] {
  const events: FilterEvent[] = [];
  new TerminalFilter({ onEvent: (e) => events.push(e) }).push(readFileSync(ttyPath));
  return events.flatMap((e) => (e.type === 'copy-offer' ? [e.text] : []));
}

test('clipboard shims: writes are the copy offer the host filter sees, from stdin, arguments or files', async (t) => {
  const dir = runDir(t);
  const tty = join(dir, 'tty');
  const cases: Array<[ClipboardTool, string[], string, string, string]> = [
    ['xclip', ['-selection', 'clipboard'], 'from xclip\n', 'from xclip\n', ''],
    ['xclip', ['-selection', 'clipboard', '-rmlastnl', '-filter'], 'trimmed\n', 'trimmed', 'trimmed'],
    ['xsel', ['-bi'], 'from xsel', 'from xsel', ''],
    ['wl-copy', ['two', 'words'], '', 'two words', ''],
    ['wl-copy', ['-n'], 'no newline\n', 'no newline', ''],
    ['pbcopy', [], 'caf\u00e9', 'caf\u00e9', ''],
  ];
  for (const [tool, args, stdin, offered, echoed] of cases) {
    writeFileSync(tty, '');
    const r = await run(tool, args, dir, Buffer.from(stdin));
    assert.equal(r.status, 0, `${tool} ${args.join(' ')}`);
    assert.deepEqual(offers(tty), [offered], `${tool} ${args.join(' ')}`);
    assert.equal(r.stdout.toString('utf8'), echoed);
  }
  writeFileSync(join(dir, 'a.txt'), 'file a ');
  writeFileSync(join(dir, 'b.txt'), 'file b');
  writeFileSync(tty, '');
  assert.equal((await run('xclip', ['-selection', 'clipboard', join(dir, 'a.txt'), join(dir, 'b.txt')], dir)).status, 0);
  assert.deepEqual(offers(tty), ['file a file b']);
});

test('clipboard shims: a write over 1 MiB or not UTF-8 is refused and offers nothing; an unreadable file is a usage error', async (t) => {
  const dir = runDir(t);
  const tty = join(dir, 'tty');
  writeFileSync(tty, '');
  await assert.rejects(run('pbcopy', [], dir, Buffer.alloc(MAX_COPY_TEXT_BYTES + 1, 0x61)), (e) => hasCode(e, 'E_COPY_TOO_LARGE'));
  await assert.rejects(run('xclip', ['-selection', 'clipboard'], dir, Buffer.alloc(4 * MAX_COPY_TEXT_BYTES, 0x61)), (e) => hasCode(e, 'E_COPY_TOO_LARGE'));
  await assert.rejects(run('wl-copy', [], dir, Buffer.from([0xff, 0xfe])), (e) => hasCode(e, 'E_COPY_NOT_UTF8'));
  await assert.rejects(run('xclip', [join(dir, 'missing.txt')], dir), (e) => hasCode(e, 'E_USAGE'));
  assert.deepEqual(readFileSync(tty), Buffer.alloc(0));
  // Exactly 1 MiB plus the newline -rmlastnl drops is still one offer.
  assert.equal((await run('xclip', ['-rmlastnl'], dir, Buffer.concat([Buffer.alloc(MAX_COPY_TEXT_BYTES, 0x61), Buffer.from('\n')]))).status, 0);
  assert.equal(offers(tty)[0]?.length, MAX_COPY_TEXT_BYTES);
});

test('clipboard shims: before any paste a read answers as an empty clipboard; after one, image reads get its bytes and text reads nothing', async (t) => {
  const dir = runDir(t);
  const source = await capsule(t, dir);
  assert.deepEqual(await run('xclip', ['-selection', 'clipboard', '-t', 'TARGETS', '-o'], dir), {
    status: 1,
    stdout: Buffer.alloc(0),
    stderr: 'Error: target TARGETS not available\n',
  });
  assert.deepEqual(await run('wl-paste', ['--type', 'image/png'], dir), { status: 1, stdout: Buffer.alloc(0), stderr: 'Nothing is copied\n' });
  assert.deepEqual(await run('pbpaste', [], dir), { status: 0, stdout: Buffer.alloc(0), stderr: '' });

  const png = fixture('sample.png');
  source.lastPasted = await new ImageStaging(dir).stage(png);
  assert.deepEqual(await run('xclip', ['-selection', 'clipboard', '-t', 'TARGETS', '-o'], dir), {
    status: 0,
    stdout: Buffer.from('TARGETS\nimage/png\n'),
    stderr: '',
  });
  assert.deepEqual(await run('wl-paste', ['-l'], dir), { status: 0, stdout: Buffer.from('image/png\n'), stderr: '' });
  for (const [tool, args] of [
    ['xclip', ['-selection', 'clipboard', '-o', '-t', 'image/png']],
    ['wl-paste', ['--type', 'image/png']],
  ] as const) {
    const r = await run(tool, [...args], dir);
    assert.equal(r.status, 0);
    assert.deepEqual(r.stdout, png, `${tool} gives the pasted bytes`);
  }
  // Another image type, the primary selection, and text: nothing.
  assert.deepEqual(await run('xclip', ['-selection', 'clipboard', '-o', '-t', 'image/jpeg'], dir), {
    status: 1,
    stdout: Buffer.alloc(0),
    stderr: 'Error: target image/jpeg not available\n',
  });
  assert.deepEqual(await run('xclip', ['-o', '-t', 'image/png'], dir), {
    status: 1,
    stdout: Buffer.alloc(0),
    stderr: 'Error: target image/png not available\n',
  });
  assert.deepEqual(await run('xclip', ['-selection', 'clipboard', '-o'], dir), {
    status: 1,
    stdout: Buffer.alloc(0),
    stderr: 'Error: target UTF8_STRING not available\n',
  });
  assert.deepEqual(await run('wl-paste', [], dir), { status: 1, stdout: Buffer.alloc(0), stderr: 'No suitable type of content copied\n' });
  assert.deepEqual(await run('xsel', ['-bo'], dir), { status: 0, stdout: Buffer.alloc(0), stderr: '' });

  // The newest paste wins.
  const jpeg = fixture('sample.jpg');
  source.lastPasted = await new ImageStaging(dir).stage(jpeg);
  assert.deepEqual((await run('wl-paste', ['-t', 'image/jpeg'], dir)).stdout, jpeg);
  assert.deepEqual((await run('wl-paste', ['-l'], dir)).stdout, Buffer.from('image/jpeg\n'));
});

test('clipboard shims: after a bracketed text paste, text reads answer exactly it and the type lists show text', async (t) => {
  const dir = runDir(t);
  const images: { lastPasted: StagedImage | null } = { lastPasted: null };
  const pasted = new PasteScanner();
  const control = new ControlMethods();
  registerClipboardMethod(control, images, pasted);
  await capsuleSocket(t, dir, async (request, socket) => (await control.dispatch(request, socket)).reply);
  // Typed text is not pasted text.
  pasted.push(Buffer.from('typed\r'));
  assert.deepEqual(await run('xclip', ['-selection', 'clipboard', '-o'], dir), {
    status: 1,
    stdout: Buffer.alloc(0),
    stderr: 'Error: target UTF8_STRING not available\n',
  });
  const text = 'caf\u00e9\n\x1b[31mline two\t';
  pasted.push(Buffer.from(`\x1b[200~${text.slice(0, 3)}`));
  pasted.push(Buffer.from(`${text.slice(3)}\x1b[20`));
  pasted.push(Buffer.from('1~'));
  const want = { status: 0, stdout: Buffer.from(text, 'utf8'), stderr: '' };
  assert.deepEqual(await run('xclip', ['-selection', 'clipboard', '-o'], dir), want);
  assert.deepEqual(await run('xclip', ['-selection', 'clipboard', '-o', '-t', 'text/plain'], dir), want);
  assert.deepEqual(await run('wl-paste', [], dir), want);
  assert.deepEqual(await run('xsel', ['-bo'], dir), want);
  assert.deepEqual(await run('pbpaste', [], dir), want);
  assert.deepEqual(await run('xclip', ['-selection', 'clipboard', '-t', 'TARGETS', '-o'], dir), {
    status: 0,
    stdout: Buffer.from('TARGETS\nUTF8_STRING\ntext/plain\n'),
    stderr: '',
  });
  // An image type is still not there; with an image pasted too, both are listed.
  assert.deepEqual(await run('wl-paste', ['-t', 'image/png'], dir), { status: 1, stdout: Buffer.alloc(0), stderr: 'No suitable type of content copied\n' });
  images.lastPasted = await new ImageStaging(dir).stage(fixture('sample.png'));
  assert.deepEqual(await run('wl-paste', ['-l'], dir), { status: 0, stdout: Buffer.from('UTF8_STRING\ntext/plain\nimage/png\n'), stderr: '' });
  // The primary selection holds nothing.
  assert.deepEqual(await run('xclip', ['-o'], dir), { status: 1, stdout: Buffer.alloc(0), stderr: 'Error: target UTF8_STRING not available\n' });
});

test('clipboard shims: pasted text in a capsule reply that is not base64 of at most 1 MiB of UTF-8 is refused', async (t) => {
  const dir = runDir(t);
  const replies: unknown[] = [
    { ok: true, name: null, type: null, text: 'not base64!' },
    { ok: true, name: null, type: null, text: 42 },
    { ok: true, name: null, type: null, text: Buffer.from([0xff, 0xfe]).toString('base64') },
    { ok: true, name: null, type: null, text: Buffer.alloc(MAX_COPY_TEXT_BYTES + 3, 0x61).toString('base64') },
  ];
  let next = 0;
  await capsuleSocket(t, dir, async () => replies[next++]);
  for (let i = 0; i < replies.length; i++) {
    await assert.rejects(run('pbpaste', [], dir), (e) => hasCode(e, 'E_CONTROL_REPLY'), `reply ${i}`);
  }
});

test('clipboard shims: a capsule reply naming anything but a staged file is refused; no capsule is E_NO_CAPSULE', async (t) => {
  const dir = runDir(t);
  writeFileSync(join(dir, 'secret'), 'not an image');
  const replies: unknown[] = [
    { ok: true, name: '../secret', type: 'image/png' },
    { ok: true, name: 'clip-20260101-000000-0123456789abcdef.png/../../secret', type: 'image/png' },
    { ok: true, name: 'clip-20260101-000000-0123456789abcdef.png', type: 'text/plain\nx' },
    { ok: true, name: 42, type: 'image/png' },
  ];
  let next = 0;
  await capsuleSocket(t, dir, async () => replies[next++]);
  for (let i = 0; i < replies.length; i++) {
    await assert.rejects(
      run('xclip', ['-selection', 'clipboard', '-o', '-t', 'image/png'], dir),
      (e) => hasCode(e, 'E_CONTROL_REPLY'),
      JSON.stringify(replies[i]),
    );
  }
  const none = runDir(t);
  await assert.rejects(run('wl-paste', ['-t', 'image/png'], none), (e) => hasCode(e, 'E_NO_CAPSULE'));
});
