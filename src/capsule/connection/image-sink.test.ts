import { test } from 'node:test';
import assert from 'node:assert/strict';
import { imageOp, isImageBody, isImageFrame, type ImageBody, type ImageFrame } from './image-sink.ts';

const sha256 = Buffer.alloc(32, 7);
const bodies: ImageBody[] = [
  { kind: 'ClipboardImage', format: 'png', bytes: Buffer.from('png') },
  { kind: 'ClipboardImageStart', transferId: 5n, format: 'jpeg', size: 9 },
  { kind: 'ClipboardImageChunk', transferId: 5n, offset: 3, bytes: Buffer.from('abc') },
  { kind: 'ClipboardImageEnd', transferId: 5n, sha256 },
  { kind: 'ClipboardImageError', message: 'no image' },
];

test('image ops: the legacy frame and the AttachControl body of each operation map to the same op', () => {
  const expected = [
    { kind: 'whole', format: 'png', bytes: Buffer.from('png') },
    { kind: 'start', transferId: 5n, format: 'jpeg', size: 9 },
    { kind: 'chunk', transferId: 5n, offset: 3, bytes: Buffer.from('abc') },
    { kind: 'end', transferId: 5n, sha256 },
    { kind: 'error', message: 'no image' },
  ];
  bodies.forEach((body, i) => {
    const { kind, ...fields } = body;
    const frame = { type: kind, ...fields } as ImageFrame;
    assert.deepEqual(imageOp(body), expected[i], `${kind} as an AttachControl body`);
    assert.deepEqual(imageOp(frame), expected[i], `${kind} as a legacy frame`);
    assert.equal(isImageBody(body), true);
    assert.equal(isImageFrame(frame), true);
  });
});

test('image ops: other frames and bodies are not image operations', () => {
  assert.equal(isImageFrame({ type: 'Detach' }), false);
  assert.equal(isImageFrame({ type: 'StageOnly', requestId: 1n }), false);
  assert.equal(isImageBody({ kind: 'Detach' }), false);
  assert.equal(isImageBody({ kind: 'FocusIn' }), false);
});
