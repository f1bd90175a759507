import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { truncateUtf8 } from './text.ts';

test('truncateUtf8 keeps what fits, marks a cut with …, or cuts plainly with an empty mark', () => {
  assert.equal(truncateUtf8('abc', 3), 'abc');
  assert.equal(truncateUtf8('abcdef', 5), 'ab…');
  assert.equal(truncateUtf8('abcdef', 5, ''), 'abcde');
  assert.equal(truncateUtf8('日本語', 7, ''), '日本', 'never half a character');
  assert.equal(truncateUtf8('日本語', 7), '日…');
  assert.equal(truncateUtf8('abcdef', 2), 'ab', 'no room for the mark: a plain cut, still within the limit');
});

test('property: the result fits, is a prefix of whole code points, and is the input when it fit', () => {
  fc.assert(
    fc.property(fc.string({ unit: 'binary', maxLength: 60 }), fc.integer({ min: 0, max: 80 }), fc.constantFrom('…', '', '...'), (s, max, mark) => {
      const out = truncateUtf8(s, max, mark);
      assert.ok(Buffer.byteLength(out) <= max, `${Buffer.byteLength(out)} > ${max}`);
      if (Buffer.byteLength(s) <= max) return assert.equal(out, s);
      const kept = mark !== '' && out.endsWith(mark) ? out.slice(0, out.length - mark.length) : out;
      assert.ok(s.startsWith(kept));
      assert.equal([...kept].length, [...s].slice(0, [...kept].length).length);
      assert.equal(Buffer.from(kept).toString(), kept, 'no lone surrogate created');
    }),
  );
});
