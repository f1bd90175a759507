import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileTypeFromBuffer } from 'file-type';
import fc from 'fast-check';
import { checkImageSize, crc32, detectImageFormat, inspectImage, validateImage, DEFAULT_MAX_IMAGE_BYTES } from './image-signature.ts';
import { hasCode } from '../errors.ts';
import type { ImageFormat } from '../protocol/frames.ts';

const fixture = (name: string): Buffer => readFileSync(new URL(`../../test/fixtures/images/${name}`, import.meta.url));

/** Fixtures made by ImageMagick 6.9 (`convert -size 16x12 gradient:red-blue -strip ...`). */
const SAMPLES: ReadonlyArray<[string, ImageFormat]> = [
  ['sample.png', 'png'],
  ['sample.jpg', 'jpeg'],
  ['sample-progressive.jpg', 'jpeg'],
  ['sample.gif', 'gif'],
  ['sample.webp', 'webp'],
  ['sample-lossless.webp', 'webp'],
  ['sample.tiff', 'tiff'],
  ['sample-msb.tiff', 'tiff'],
];

/** file-type's extension for each of our formats. */
const FILE_TYPE_EXT: Record<ImageFormat, string> = { png: 'png', jpeg: 'jpg', gif: 'gif', webp: 'webp', tiff: 'tif' };

test('image-signature: detects every real sample by its bytes', () => {
  for (const [name, format] of SAMPLES) assert.equal(validateImage(fixture(name)), format, name);
});

test('image-signature: file-type agrees with our detection on every real sample', async () => {
  for (const [name, format] of SAMPLES) {
    const ft = await fileTypeFromBuffer(fixture(name));
    assert.equal(ft?.ext, FILE_TYPE_EXT[format], name);
  }
});

test('image-signature: svg, bmp, text and empty input are refused with E_UNSUPPORTED_IMAGE or E_NO_CLIPBOARD_IMAGE', async () => {
  const svg = fixture('sample.svg');
  assert.throws(
    () => validateImage(svg),
    (e) => hasCode(e, 'E_UNSUPPORTED_IMAGE') && /SVG/.test((e as Error).message),
  );
  assert.notEqual((await fileTypeFromBuffer(svg))?.mime.startsWith('image/'), true, 'file-type sees no image in svg either');
  const bmp = fixture('sample.bmp');
  assert.equal((await fileTypeFromBuffer(bmp))?.ext, 'bmp', 'file-type knows bmp, we refuse it');
  assert.throws(
    () => validateImage(bmp),
    (e) => hasCode(e, 'E_UNSUPPORTED_IMAGE') && /BMP/.test((e as Error).message),
  );
  assert.throws(
    () => validateImage(Buffer.from('hello, this is text\n')),
    (e) => hasCode(e, 'E_UNSUPPORTED_IMAGE'),
  );
  assert.throws(
    () => validateImage(Buffer.alloc(0)),
    (e) => hasCode(e, 'E_NO_CLIPBOARD_IMAGE'),
  );
});

test('image-signature: a PNG cut to 16 bytes reads as png to file-type but is refused here', async () => {
  const cut = fixture('sample.png').subarray(0, 16);
  assert.equal((await fileTypeFromBuffer(cut))?.ext, 'png');
  const r = inspectImage(cut);
  assert.equal(r.ok, false);
  assert.equal(r.ok ? null : r.claimed, 'png');
  assert.throws(
    () => validateImage(cut),
    (e) => hasCode(e, 'E_UNSUPPORTED_IMAGE') && /truncated png/.test((e as Error).message),
  );
});

test('image-signature: every truncation of a sample (before its required structure ends) is refused', () => {
  for (const [name] of SAMPLES) {
    const full = fixture(name);
    // TIFF pixel data is referenced from the IFD; we only require the IFD itself, which sample*.tiff end at 1346.
    const required = name.endsWith('.tiff') ? 1346 : full.length;
    for (let n = 0; n < required; n++) {
      assert.equal(detectImageFormat(full.subarray(0, n)), null, `${name} cut to ${n} bytes`);
    }
  }
});

test('image-signature: broken structures are refused', () => {
  const png = Buffer.from(fixture('sample.png'));
  png[20] = png[20]! ^ 0xff; // IHDR width byte: checksum no longer matches
  assert.match(String((inspectImage(png) as { reason: string }).reason), /checksum/);

  const riff = Buffer.from(fixture('sample.webp'));
  riff.writeUInt32LE(riff.length, 4); // RIFF claims 8 bytes more than the file has
  assert.equal(detectImageFormat(riff), null);

  const tiff = Buffer.from(fixture('sample.tiff'));
  tiff.writeUInt32LE(tiff.length + 10, 4); // IFD offset outside the file
  assert.equal(detectImageFormat(tiff), null);

  const gif = Buffer.from(fixture('sample.gif'));
  gif[gif.length - 1] = 0x00; // trailer replaced
  assert.equal(detectImageFormat(gif), null);

  const jpegNoFrame = Buffer.from([0xff, 0xd8, 0xff, 0xda, 0x00, 0x02, 0x00, 0xff, 0xd9]);
  assert.equal(detectImageFormat(jpegNoFrame), null);
});

test('image-signature: the size cap refuses one byte over and accepts the cap itself', () => {
  assert.doesNotThrow(() => checkImageSize(DEFAULT_MAX_IMAGE_BYTES));
  assert.throws(
    () => checkImageSize(DEFAULT_MAX_IMAGE_BYTES + 1),
    (e) => hasCode(e, 'E_IMAGE_TOO_LARGE'),
  );
  const png = fixture('sample.png');
  assert.throws(
    () => validateImage(png, { maxBytes: png.length - 1 }),
    (e) => hasCode(e, 'E_IMAGE_TOO_LARGE'),
  );
  assert.equal(validateImage(png, { maxBytes: png.length }), 'png');
});

test('image-signature: crc32 matches the standard check value', () => {
  assert.equal(crc32(Buffer.from('123456789')), 0xcbf43926);
});

test('image-signature: arbitrary bytes and signature-prefixed garbage never crash and never pass unless file-type agrees', async () => {
  const prefixes = [
    [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a],
    [0xff, 0xd8, 0xff],
    [...Buffer.from('GIF89a')],
    [...Buffer.from('RIFF'), 0x10, 0, 0, 0, ...Buffer.from('WEBP')],
    [0x49, 0x49, 0x2a, 0x00],
    [],
  ];
  await fc.assert(
    fc.asyncProperty(fc.constantFrom(...prefixes), fc.uint8Array({ maxLength: 300 }), async (prefix, rest) => {
      const b = Buffer.concat([Buffer.from(prefix), rest]);
      const f = detectImageFormat(b);
      if (f !== null) assert.equal((await fileTypeFromBuffer(b))?.ext, FILE_TYPE_EXT[f]);
    }),
    { numRuns: 2000 },
  );
});
