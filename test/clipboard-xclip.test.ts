// Real X11 clipboard: Xvfb + xclip as the owner (Debian: xvfb, xclip).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ownClipboard, startXvfb, type Xvfb } from './helpers/xvfb.ts';
import { hasCode } from '../src/errors.ts';
import { acquireClipboardImage } from '../src/host/platform/clipboard/acquire.ts';
import { createReader } from '../src/host/platform/clipboard/select.ts';
import type { ClipboardReader } from '../src/host/platform/clipboard/types.ts';
import { bigPng } from './helpers/png.mjs';

const fixture = (name: string): Buffer => readFileSync(new URL(`./fixtures/images/${name}`, import.meta.url));
const MAX = 64 * 1024 * 1024;

let x: Xvfb;
let dir: string;
let reader: ClipboardReader;

before(async () => {
  x = await startXvfb();
  dir = mkdtempSync(join(tmpdir(), 'jackin-xclip-test-'));
  reader = createReader({ kind: 'xclip' }, 'test', x.env, { timeoutMs: 10_000, maxBytes: MAX });
});
after(async () => {
  await x.stop();
  rmSync(dir, { recursive: true, force: true });
});

async function withClipboard<T>(type: string, data: Buffer, fn: () => Promise<T>): Promise<T> {
  const owner = await ownClipboard(x, type, data);
  try {
    return await fn();
  } finally {
    await owner.stop();
  }
}

for (const [type, name, format] of [
  ['image/png', 'sample.png', 'png'],
  ['image/jpeg', 'sample.jpg', 'jpeg'],
  ['image/gif', 'sample.gif', 'gif'],
  ['image/webp', 'sample.webp', 'webp'],
  ['image/tiff', 'sample.tiff', 'tiff'],
] as const) {
  test(`xclip reader: a ${type}-only clipboard yields byte-identical bytes detected as ${format}`, async () => {
    const data = fixture(name);
    await withClipboard(type, data, async () => {
      const got = await reader.readImage();
      assert.equal(got?.kind, 'image');
      assert.ok(got?.kind === 'image');
      assert.ok(got.bytes.equals(data), 'bytes differ from the file given to xclip');
      assert.equal(got.mimeType, type);
      assert.ok(got.offered.includes(type));
      const img = await acquireClipboardImage(reader, MAX);
      assert.equal(img?.format, format);
      assert.ok(img?.bytes.equals(data));
    });
  });
}

test('xclip reader: a 6 MiB PNG (INCR transfer) arrives byte-identical', async () => {
  const data = bigPng(6 * 1024 * 1024);
  await withClipboard('image/png', data, async () => {
    const img = await acquireClipboardImage(reader, MAX);
    assert.equal(img?.format, 'png');
    assert.ok(img?.bytes.equals(data));
  });
});

test('xclip reader: an image over the cap is refused with E_IMAGE_TOO_LARGE', async () => {
  const data = fixture('sample.png');
  const small = createReader({ kind: 'xclip' }, 'test', x.env, { timeoutMs: 10_000, maxBytes: data.length - 1 });
  await withClipboard('image/png', data, async () => {
    await assert.rejects(small.readImage(), (e) => hasCode(e, 'E_IMAGE_TOO_LARGE'));
  });
});

test('xclip reader: a text/uri-list clipboard names the file, and acquiring reads that file', async () => {
  const file = join(dir, 'my shot.png');
  writeFileSync(file, fixture('sample.png'));
  const list = Buffer.from(`# copied by a test\r\n${pathToFileURL(file).href}\r\n`);
  await withClipboard('text/uri-list', list, async () => {
    assert.deepEqual(await reader.readImage(), { kind: 'file', path: file, paths: [file], offered: ['TARGETS', 'text/uri-list'] });
    const img = await acquireClipboardImage(reader, MAX);
    assert.deepEqual(img?.origin, { kind: 'file', backend: 'xclip', path: file });
    assert.ok(img?.bytes.equals(fixture('sample.png')));
    assert.equal(await reader.readPath(), file);
  });
});

test('xclip reader: an x-special/gnome-copied-files clipboard names the file', async () => {
  const file = join(dir, 'copied.jpg');
  writeFileSync(file, fixture('sample.jpg'));
  await withClipboard('x-special/gnome-copied-files', Buffer.from(`copy\n${pathToFileURL(file).href}`), async () => {
    const img = await acquireClipboardImage(reader, MAX);
    assert.equal(img?.format, 'jpeg');
    assert.equal(img?.origin.kind, 'file');
  });
});

test('xclip reader: a copied file that is not an image is refused by validation', async () => {
  const file = join(dir, 'notes.txt');
  writeFileSync(file, 'just notes\n');
  await withClipboard('text/uri-list', Buffer.from(pathToFileURL(file).href), async () => {
    await assert.rejects(acquireClipboardImage(reader, MAX), (e) => hasCode(e, 'E_UNSUPPORTED_IMAGE'));
  });
});

test('xclip reader: a text-only clipboard is no image (null), and its text is read only as a path', async () => {
  await withClipboard('UTF8_STRING', Buffer.from('hello world'), async () => {
    assert.equal(await reader.readImage(), null);
    assert.equal(await reader.readPath(), null);
  });
  await withClipboard('UTF8_STRING', Buffer.from("'/tmp/my shot.png'\n"), async () => {
    assert.equal(await reader.readPath(), '/tmp/my shot.png');
  });
});

test('xclip reader: an empty clipboard (no owner) is no image', async () => {
  assert.equal(await reader.readImage(), null);
});

test('xclip reader: image/png that serves text is refused by validation', async () => {
  await withClipboard('image/png', Buffer.from('definitely not a png\n'), async () => {
    const got = await reader.readImage();
    assert.equal(got?.kind, 'image');
    await assert.rejects(acquireClipboardImage(reader, MAX), (e) => hasCode(e, 'E_UNSUPPORTED_IMAGE'));
  });
});

test('xclip reader: an svg clipboard is refused, offered as image/svg+xml or disguised as image/png', async () => {
  const svg = fixture('sample.svg');
  await withClipboard('image/svg+xml', svg, async () => {
    await assert.rejects(reader.readImage(), (e) => hasCode(e, 'E_UNSUPPORTED_IMAGE') && /svg/.test((e as Error).message));
  });
  await withClipboard('image/png', svg, async () => {
    await assert.rejects(acquireClipboardImage(reader, MAX), (e) => hasCode(e, 'E_UNSUPPORTED_IMAGE'));
  });
});

test('xclip reader: a truncated PNG is refused', async () => {
  await withClipboard('image/png', fixture('sample.png').subarray(0, 16), async () => {
    await assert.rejects(acquireClipboardImage(reader, MAX), (e) => hasCode(e, 'E_UNSUPPORTED_IMAGE'));
  });
});

test('xclip reader: a display that cannot be opened is E_CLIPBOARD_READ_FAILED, not "no image"', async () => {
  const broken = createReader({ kind: 'xclip' }, 'test', { ...x.env, DISPLAY: ':1999' }, { timeoutMs: 10_000, maxBytes: MAX });
  await assert.rejects(broken.readImage(), (e) => hasCode(e, 'E_CLIPBOARD_READ_FAILED') && /:1999/.test((e as Error).message));
});

test('xclip reader: a missing xclip is E_CLIPBOARD_BACKEND_MISSING naming the install command', async () => {
  const noTools = createReader({ kind: 'xclip' }, 'test', { ...x.env, PATH: dir }, { timeoutMs: 10_000, maxBytes: MAX });
  await assert.rejects(noTools.readImage(), (e) => hasCode(e, 'E_CLIPBOARD_BACKEND_MISSING') && /apt-get install xclip/.test((e as Error).message));
});
