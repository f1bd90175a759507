import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { firstNotPlain, plainTextCut } from './plain-text-cut.ts';

// The obvious byte-by-byte definitions the native scans must agree with.
// Every ASCII byte but ESC, SO and SI (plain-text-cut.ts says why).
const plain = (b: number): boolean => b < 0x80 && b !== 0x1b && b !== 0x0e && b !== 0x0f;

function naiveFirstNotPlain(data: Uint8Array, from: number): number {
  for (let i = from; i < data.length; i++) if (!plain(data[i]!)) return i;
  return data.length;
}

function naiveCut(data: Uint8Array, rows: number): number {
  const plainEnd = naiveFirstNotPlain(data, 0);
  let lineFeeds = 0;
  for (let i = plainEnd - 1; i > 0; i--) {
    if (data[i] === 0x0a) lineFeeds++;
    else if (data[i] === 0x0d && lineFeeds >= 2 * rows + 1) return i;
  }
  return 0;
}

/** Bytes that are mostly text lines, with any byte at all now and then (every value, both ends of each bound). */
const stream = fc
  .array(
    fc.oneof(
      { weight: 8, arbitrary: fc.string({ unit: fc.constantFrom(...'ab Z~!0'), maxLength: 20 }).map((t) => Buffer.from(`${t}\r\n`, 'latin1')) },
      { weight: 1, arbitrary: fc.integer({ min: 0, max: 255 }).map((b) => Buffer.from([b])) },
      { weight: 1, arbitrary: fc.constantFrom(0x1f, 0x20, 0x7e, 0x7f, 0x80, 0xff, 0x00, 0x1b, 0x09, 0x0e, 0x0f, 0x0d, 0x0a).map((b) => Buffer.from([b])) },
    ),
    { maxLength: 120 },
  )
  .map((parts) => Buffer.concat(parts));

test('firstNotPlain agrees with a byte-by-byte scan at every start, on Buffers and plain Uint8Arrays (property)', () => {
  fc.assert(
    fc.property(stream, fc.nat(3), fc.nat(40), (bytes, shift, from) => {
      // Copied at an offset into a bigger buffer, so every alignment of the word loop is exercised.
      const backing = new Uint8Array(bytes.length + 8);
      backing.set(bytes, shift);
      const data = backing.subarray(shift, shift + bytes.length);
      const start = Math.min(from, data.length);
      assert.equal(firstNotPlain(data, start), naiveFirstNotPlain(data, start));
      assert.equal(firstNotPlain(Buffer.from(data), start), naiveFirstNotPlain(data, start));
    }),
    { numRuns: 3000 },
  );
});

test('firstNotPlain finds each non-plain byte value in every position of a word', () => {
  for (let b = 0; b < 256; b++) {
    for (let pos = 0; pos < 12; pos++) {
      const data = Buffer.alloc(16, 0x41);
      data[pos] = b;
      assert.equal(firstNotPlain(data), plain(b) ? 16 : pos, `byte 0x${b.toString(16)} at ${pos}`);
    }
  }
});

test('plainTextCut over chunks equals the cut of their concatenation, however the batch is split (property)', () => {
  fc.assert(
    fc.property(stream, fc.array(fc.nat(), { maxLength: 8 }), fc.integer({ min: 1, max: 6 }), (bytes, splits, rows) => {
      const points = [...new Set(splits.map((s) => (bytes.length === 0 ? 0 : s % bytes.length)))].sort((a, b) => a - b);
      const chunks: Uint8Array[] = [];
      let at = 0;
      for (const p of [...points, bytes.length]) {
        chunks.push(bytes.subarray(at, p));
        at = p;
      }
      assert.equal(plainTextCut(chunks, rows), naiveCut(bytes, rows));
    }),
    { numRuns: 3000 },
  );
});
