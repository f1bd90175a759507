import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { GiB, MiB, parseSize } from './size.ts';

const MULTIPLE: Readonly<Record<string, number>> = { b: 1, k: 1024, m: MiB, g: GiB, t: 1024 * GiB };

test("parseSize reads docker's short forms beside the ones it read before", () => {
  assert.equal(parseSize('16g'), 16 * GiB);
  assert.equal(parseSize('512m'), 512 * MiB);
  assert.equal(parseSize('1024k'), MiB);
  assert.equal(parseSize('2G'), 2 * GiB);
  assert.equal(parseSize('100b'), 100);
  assert.equal(parseSize('1.5g'), 1.5 * GiB);
  assert.equal(parseSize(' 8 M '), 8 * MiB);
  assert.equal(parseSize('8 GiB'), 8 * GiB);
  for (const bad of ['1 MB', '16gb', 'g', '16x', '-1g', '1e3k', '16 g g', '0x10m', '']) assert.equal(parseSize(bad), undefined, bad);
});

test('property: an integer and a docker unit letter, either case, are that many bytes times the unit; the long form agrees', () => {
  fc.assert(
    fc.property(fc.nat({ max: 2 ** 20 }), fc.constantFrom('b', 'k', 'm', 'g', 't'), fc.boolean(), fc.constantFrom('', ' '), (n, unit, upper, gap) => {
      const expected = n * MULTIPLE[unit]!;
      const got = parseSize(`${n}${gap}${upper ? unit.toUpperCase() : unit}`);
      if (!Number.isSafeInteger(expected)) return got === undefined;
      const long = { b: 'B', k: 'KiB', m: 'MiB', g: 'GiB', t: 'TiB' }[unit]!;
      return got === expected && parseSize(`${n} ${long}`) === expected;
    }),
  );
});

test('property: parseSize never throws, and what it returns is a safe non-negative integer', () => {
  fc.assert(
    fc.property(fc.oneof(fc.string(), fc.stringMatching(/^[0-9.]{0,12} ?[bkmgtBKMGTi]{0,3}$/)), (s) => {
      const n = parseSize(s);
      return n === undefined || (Number.isSafeInteger(n) && n >= 0);
    }),
  );
});
