import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseFileList, pickFileListType, pickImageType, pickTextType, unacceptedImageTypes } from './mime.ts';

test('mime: the best image type is png > jpeg > gif > webp > tiff, spelled as offered', () => {
  assert.equal(pickImageType(['image/tiff', 'image/webp', 'image/gif', 'image/jpeg', 'image/png']), 'image/png');
  assert.equal(pickImageType(['TARGETS', 'image/tiff', 'image/JPEG']), 'image/JPEG');
  assert.equal(pickImageType(['image/tiff', 'image/webp', 'image/gif']), 'image/gif');
  assert.equal(pickImageType(['image/tiff', 'image/webp']), 'image/webp');
  assert.equal(pickImageType(['image/tiff']), 'image/tiff');
  assert.equal(pickImageType(['image/svg+xml', 'image/bmp', 'UTF8_STRING']), null);
  assert.deepEqual(unacceptedImageTypes(['image/svg+xml', 'image/bmp', 'UTF8_STRING']), ['image/svg+xml', 'image/bmp']);
});

test('mime: file lists and text types are recognised', () => {
  assert.equal(pickFileListType(['text/uri-list', 'x-special/gnome-copied-files']), 'x-special/gnome-copied-files');
  assert.equal(pickFileListType(['image/png']), null);
  assert.equal(pickTextType(['TARGETS', 'STRING', 'UTF8_STRING']), 'UTF8_STRING');
});

test('mime: file lists yield local paths only, decoded', () => {
  assert.deepEqual(parseFileList('copy\nfile:///home/me/a%20b.png\nfile:///tmp/c.png'), ['/home/me/a b.png', '/tmp/c.png']);
  assert.deepEqual(parseFileList('# comment\r\nhttps://example.com/x.png\r\nfile://otherhost/x.png\r\nfile://localhost/tmp/y.png\r\n'), ['/tmp/y.png']);
  assert.deepEqual(parseFileList(''), []);
});
