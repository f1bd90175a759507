import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { PasteScanner } from './paste-scanner.ts';

const START = '\x1b[200~';
const END = '\x1b[201~';

function scan(chunks: readonly Buffer[], maxBytes?: number): string | null {
  const s = new PasteScanner(maxBytes === undefined ? {} : { maxBytes });
  for (const c of chunks) s.push(c);
  return s.lastPasted;
}

/** `bytes` cut at the given offsets. */
function split(bytes: Buffer, cuts: readonly number[]): Buffer[] {
  const at = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
  const out: Buffer[] = [];
  let prev = 0;
  for (const c of [...at, bytes.length]) {
    out.push(bytes.subarray(prev, c));
    prev = c;
  }
  return out;
}

test('paste scanner: remembers exactly the text between the brackets of the last paste', () => {
  assert.equal(scan([Buffer.from('typed')]), null);
  assert.equal(scan([Buffer.from(`ls${START}hello\nworld${END}\r`)]), 'hello\nworld');
  assert.equal(scan([Buffer.from(`${START}one${END}x${START}caf\u00e9 \x1b[A \x1b[20 ${START}${END}`)]), `caf\u00e9 \x1b[A \x1b[20 ${START}`);
  assert.equal(scan([Buffer.from(`${START}${END}`)]), '');
  // An unfinished paste leaves the last complete one.
  assert.equal(scan([Buffer.from(`${START}first${END}${START}second`)]), 'first');
  // Not UTF-8, or over the bound: dropped, and the paste before is forgotten.
  assert.equal(scan([Buffer.from(`${START}a${END}${START}`), Buffer.from([0xff]), Buffer.from(END)]), null);
  assert.equal(scan([Buffer.from(`${START}abcd${END}`)], 4), 'abcd');
  assert.equal(scan([Buffer.from(`${START}abcd${END}${START}abcde${END}`)], 4), null);
  assert.equal(scan([Buffer.from(`${START}abcde${END}${START}ok${END}`)], 4), 'ok');
});

test('paste scanner: any split of the input into frames remembers the same text (property)', () => {
  const piece = fc.oneof(
    fc.constantFrom(START, END, '\x1b', '\x1b[', '\x1b[20', '\x1b[200', '\x1b[201', '~', 'a', '\u00e9', '\n'),
    fc.string({ maxLength: 8 }),
  );
  fc.assert(
    fc.property(fc.array(piece, { maxLength: 24 }), fc.array(fc.nat(), { maxLength: 12 }), fc.integer({ min: 1, max: 40 }), (pieces, cuts, max) => {
      const bytes = Buffer.from(pieces.join(''), 'utf8');
      assert.equal(scan(split(bytes, cuts), max), scan([bytes], max));
      // Byte by byte too.
      assert.equal(
        scan(
          [...bytes].map((b) => Buffer.from([b])),
          max,
        ),
        scan([bytes], max),
      );
    }),
    { numRuns: 500 },
  );
});

test('paste scanner: the whole-input answer matches a simple model (property)', () => {
  const piece = fc.oneof(fc.constantFrom(START, END, '\x1b', '\x1b[20', 'x'), fc.string({ maxLength: 6 }));
  fc.assert(
    fc.property(fc.array(piece, { maxLength: 16 }), (pieces) => {
      const text = pieces.join('');
      // Model: the last START...END pair found scanning left to right.
      let last: string | null = null;
      let i = 0;
      for (;;) {
        const s = text.indexOf(START, i);
        if (s === -1) break;
        const e = text.indexOf(END, s + START.length);
        if (e === -1) break;
        last = text.slice(s + START.length, e);
        i = e + END.length;
      }
      assert.equal(scan([Buffer.from(text, 'utf8')]), last);
    }),
    { numRuns: 500 },
  );
});
