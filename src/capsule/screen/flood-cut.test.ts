import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { firstNotPlainOrEsc, floodCut, MAX_PEN_BYTES, sequenceEnd } from './flood-cut.ts';

// The obvious byte-by-byte definition the native scans must agree with.
// Every ASCII byte but ESC, SO and SI (flood-cut.ts says why).
const plain = (b: number): boolean => b < 0x80 && b !== 0x1b && b !== 0x0e && b !== 0x0f;

function naiveFirstNotPlainOrEsc(data: Uint8Array, from: number): number {
  for (let i = from; i < data.length; i++) if (!plain(data[i]!) && data[i] !== 0x1b) return i;
  return data.length;
}

/**
 * The cut by regular expressions over the batch as one latin1 string: an independent reading of the
 * header's rules (the code under test scans bytes with a state machine, across chunks).
 */
function naiveCut(data: Uint8Array, rows: number): { at: number; pen: string } {
  const text = Buffer.from(data).toString('latin1');
  const run = /^(?:[\x00-\x0d\x10-\x1a\x1c-\x7f]|\x1b\[[0-9;:]*m)*/.exec(text)![0].length;
  let lineFeeds = 0;
  let at = 0;
  for (let i = run - 1; i > 0; i--) {
    if (text[i] === '\n') lineFeeds++;
    else if (text[i] === '\r' && lineFeeds >= 2 * rows + 1) {
      at = i;
      break;
    }
  }
  if (at === 0) return { at: 0, pen: '' };
  const sgrs = text.slice(0, at).match(/\x1b\[[0-9;:]*m/g) ?? [];
  let first = sgrs.length - 1;
  while (first > 0 && !/^\x1b\[0*[;:m]/.test(sgrs[first]!)) first--;
  const pen = sgrs.slice(Math.max(first, 0)).join('');
  return pen.length > MAX_PEN_BYTES ? { at: 0, pen: '' } : { at, pen };
}

/** SGR sequences (resets among them, and zeros that are not resets) and escape sequences that end a run. */
const SEQUENCES = [
  '\x1b[0m',
  '\x1b[m',
  '\x1b[00;1m',
  '\x1b[;4m',
  '\x1b[0:3m',
  '\x1b[1;31m',
  '\x1b[38;5;0m',
  '\x1b[4:3m',
  '\x1b[58;2;0;0;0m',
  '\x1b[10m',
  '\x1b[01m',
  '\x1b[2J',
  '\x1b[?25l',
  '\x1b]0;t\x07',
  '\x1b(0',
  '\x1b[>4;2m',
  '\x1b[1 q',
  '\x1b[',
];

/** Bytes that are mostly text lines, often coloured, with any byte at all now and then (every value, both ends of each bound). */
const stream = fc
  .array(
    fc.oneof(
      { weight: 8, arbitrary: fc.string({ unit: fc.constantFrom(...'ab Z~!0'), maxLength: 20 }).map((t) => Buffer.from(`${t}\r\n`, 'latin1')) },
      { weight: 4, arbitrary: fc.constantFrom(...SEQUENCES).map((q) => Buffer.from(q, 'latin1')) },
      { weight: 1, arbitrary: fc.integer({ min: 0, max: 255 }).map((b) => Buffer.from([b])) },
      { weight: 1, arbitrary: fc.constantFrom(0x1f, 0x20, 0x7e, 0x7f, 0x80, 0xff, 0x00, 0x1b, 0x09, 0x0e, 0x0f, 0x0d, 0x0a).map((b) => Buffer.from([b])) },
    ),
    { maxLength: 120 },
  )
  .map((parts) => Buffer.concat(parts));

test('firstNotPlainOrEsc agrees with a byte-by-byte scan at every start, on Buffers and plain Uint8Arrays (property)', () => {
  fc.assert(
    fc.property(stream, fc.nat(3), fc.nat(40), (bytes, shift, from) => {
      // Copied at an offset into a bigger buffer, so every alignment of the word loop is exercised.
      const backing = new Uint8Array(bytes.length + 8);
      backing.set(bytes, shift);
      const data = backing.subarray(shift, shift + bytes.length);
      const start = Math.min(from, data.length);
      assert.equal(firstNotPlainOrEsc(data, start), naiveFirstNotPlainOrEsc(data, start));
      assert.equal(firstNotPlainOrEsc(Buffer.from(data), start), naiveFirstNotPlainOrEsc(data, start));
    }),
    { numRuns: 3000 },
  );
});

test('firstNotPlainOrEsc finds each byte value that is neither plain nor ESC, in every position', () => {
  for (let b = 0; b < 256; b++) {
    for (let pos = 0; pos < 12; pos++) {
      const data = Buffer.alloc(16, 0x41);
      data[pos] = b;
      assert.equal(firstNotPlainOrEsc(data), plain(b) || b === 0x1b ? 16 : pos, `byte 0x${b.toString(16)} at ${pos}`);
    }
  }
});

test('floodCut over chunks equals the regular-expression cut of their concatenation, however the batch is split (property)', () => {
  let cuts = 0;
  let pens = 0;
  fc.assert(
    fc.property(stream, fc.array(fc.nat(), { maxLength: 8 }), fc.integer({ min: 1, max: 6 }), (bytes, splits, rows) => {
      const points = [...new Set(splits.map((s) => (bytes.length === 0 ? 0 : s % bytes.length)))].sort((a, b) => a - b);
      const chunks: Uint8Array[] = [];
      let at = 0;
      for (const p of [...points, bytes.length]) {
        chunks.push(bytes.subarray(at, p));
        at = p;
      }
      const got = floodCut(chunks, rows);
      const want = naiveCut(bytes, rows);
      assert.deepEqual({ at: got.at, pen: got.pen.toString('latin1') }, want);
      if (got.at > 0) cuts++;
      if (got.pen.length > 0) pens++;
    }),
    { numRuns: 3000 },
  );
  assert.ok(cuts >= 100 && pens >= 30, `${cuts} cuts, ${pens} with a pen: the property would not test them`);
});

test('floodCut: the pen starts at the last reset before the cut, skips SGRs after the cut, and a pen too long is no cut', () => {
  const lines = (n: number, colour: string) => Array.from({ length: n }, (_, i) => `${colour}line ${i}\x1b[0m\r\n`).join('');
  const batch = Buffer.from(`\x1b[1m\x1b[0;32mx\x1b[4m\r\n${lines(20, '\x1b[31m')}`, 'latin1');
  const cut = floodCut([batch], 3);
  // The last 7 line feeds stay parsed; the cut is at the CR before them, and the pen is the reset
  // ending the line before, the last SGR ahead of the cut.
  assert.equal(batch.subarray(cut.at).toString('latin1').split('\n').length - 1, 7);
  assert.equal(cut.pen.toString('latin1'), '\x1b[0m');
  // No reset before the cut: every SGR before it, in order.
  const noReset = Buffer.from(`\x1b[1m\x1b[32mx\r\n${'plain\r\n'.repeat(20)}`, 'latin1');
  assert.equal(floodCut([noReset], 3).pen.toString('latin1'), '\x1b[1m\x1b[32m');
  // SGRs without a reset that add up to more than MAX_PEN_BYTES: parsed in full.
  const many = Buffer.from(`${'\x1b[31mx\x1b[32m\r\n'.repeat(MAX_PEN_BYTES / 8)}${'plain\r\n'.repeat(20)}`, 'latin1');
  assert.equal(floodCut([many], 3).at, 0);
  // Any other sequence ends the run: nothing before it can be cut past it.
  const moved = Buffer.from(`${lines(20, '\x1b[31m')}\x1b[H${lines(3, '')}`, 'latin1');
  assert.equal(batch.length > 0 && floodCut([moved], 3).at < moved.indexOf('\x1b[H'), true);
});

test('sequenceEnd: the end of the ESC or CSI sequence a batch starts inside, across chunks; -1 where it cannot tell', () => {
  const b = (s: string) => Buffer.from(s, 'latin1');
  // xterm's states: 1 after ESC, 2 after an intermediate, 3-6 inside a CSI, 8 in an OSC string.
  assert.equal(sequenceEnd([b('1;3'), b('1mtext')], 4), 5);
  assert.equal(sequenceEnd([b('m')], 3), 1);
  assert.equal(sequenceEnd([b('[?25'), b('l')], 1), 5);
  assert.equal(sequenceEnd([b('(0abc')], 1), 2);
  assert.equal(sequenceEnd([b('0abc')], 2), 1);
  assert.equal(sequenceEnd([b('7')], 1), 1);
  // After an intermediate `[` ends the sequence (ESC ( [ designates a charset), it does not start a CSI.
  assert.equal(sequenceEnd([b('[abc')], 2), 1);
  assert.equal(sequenceEnd([b('(['), b('abc')], 1), 2);
  for (const [bytes, state] of [
    ['0;title\x07', 8],
    [']0;t\x07', 1],
    ['P1$r\x1b\\', 1],
    ['1;\x1b[m', 4],
    ['1\x18m', 4],
    ['1\xc3\xa9m', 4],
    ['12;', 4],
    ['\r7', 1],
  ] as const) {
    assert.equal(sequenceEnd([b(bytes)], state), -1, JSON.stringify([bytes, state]));
  }
});
