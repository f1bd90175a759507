import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parsePastedPath } from './pasted-path.ts';

test('pasted path: one absolute path, quoted, escaped or as a file URL, decodes to the path', () => {
  const cases: Array<[string, string]> = [
    ["'/tmp/my shot.png'", '/tmp/my shot.png'],
    ['/tmp/my\\ shot.png', '/tmp/my shot.png'],
    ['"/tmp/my shot.png"', '/tmp/my shot.png'],
    ['file:///tmp/a%20b.png', '/tmp/a b.png'],
    ['file://localhost/tmp/x.png', '/tmp/x.png'],
    ['/tmp/shot.png\n', '/tmp/shot.png'],
    ['/tmp/shot.png\r\n', '/tmp/shot.png'],
    ["'/tmp/my shot.png' ", '/tmp/my shot.png'],
    ["'/tmp/it'\\''s.png'", "/tmp/it's.png"],
    ['/tmp/ünï cödé.png'.replace(' ', '\\ '), '/tmp/ünï cödé.png'],
  ];
  for (const [input, want] of cases) {
    assert.equal(parsePastedPath(Buffer.from(input)), want, JSON.stringify(input));
  }
});

test('pasted path: relative paths, several paths, prose, other hosts and odd bytes are not a path', () => {
  for (const input of [
    'relative/a.png',
    '~/a.png',
    '/tmp/a.png /tmp/b.png',
    '/tmp/a.png\n/tmp/b.png',
    'look at /tmp/a.png please',
    'hello',
    '',
    '\n',
    'file://otherhost/tmp/a.png',
    'https://example.com/a.png',
    "'/tmp/unterminated",
    '/tmp/a\x00b.png',
    'C:\\Users\\me\\a.png',
  ]) {
    assert.equal(parsePastedPath(Buffer.from(input)), null, JSON.stringify(input));
  }
  assert.equal(parsePastedPath(Buffer.from([0x2f, 0xff, 0xfe])), null, 'invalid UTF-8');
  assert.equal(parsePastedPath(Buffer.from(`/${'a'.repeat(5000)}`)), null, 'too long');
});
