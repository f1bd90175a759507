/**
 * Stored runs (stored-runs.ts): the frames of raw blocks decode, through the zstd program GNU tar --zstd
 * uses, to exactly their content, alone and between compressed frames; a block is cut into runs that cover
 * it in order; and only content that looks random is stored.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { looksIncompressible, SEGMENT_BYTES, splitRuns, storedFrame, storedFrameBound } from './stored-runs.ts';

function unzstd(packed: Uint8Array): Buffer {
  const r = spawnSync('zstd', ['-dc'], { input: packed, maxBuffer: 64 << 20 });
  assert.equal(r.status, 0, String(r.stderr));
  return r.stdout;
}

function zstd(content: Uint8Array): Buffer {
  const r = spawnSync('zstd', ['-c', '-1'], { input: content, maxBuffer: 64 << 20 });
  assert.equal(r.status, 0, String(r.stderr));
  return r.stdout;
}

const TEXT = Buffer.from('export const value = "some fairly repetitive source text";\n'.repeat(8000));
const text = (n: number): Buffer => TEXT.subarray(0, n);

test('stored runs: a stored frame of any content decodes to it, alone and between compressed frames', () => {
  fc.assert(
    fc.property(
      fc.oneof(
        fc.integer({ min: 1, max: 2 * SEGMENT_BYTES + 5 }),
        fc.constantFrom(1, SEGMENT_BYTES - 1, SEGMENT_BYTES, SEGMENT_BYTES + 1, 2 * SEGMENT_BYTES, 8 * SEGMENT_BYTES),
      ),
      fc.nat(),
      (n, seed) => {
        const content = Buffer.alloc(n);
        for (let i = 0; i < n; i++) content[i] = (seed + i * 2654435761) >>> 24;
        const frame = storedFrame(content);
        assert.equal(frame.length, storedFrameBound(n), 'the bound is the frame length');
        assert.equal(frame.length, n + 9 + 3 * Math.ceil(n / SEGMENT_BYTES));
        assert.deepEqual(unzstd(frame), content);
        const before = text(1000);
        const after = randomBytes(77);
        assert.deepEqual(unzstd(Buffer.concat([zstd(before), frame, zstd(after), frame])), Buffer.concat([before, content, after, content]));
      },
    ),
    { numRuns: 40 },
  );
});

test('stored runs: an empty stored frame is refused', () => {
  assert.throws(() => storedFrame(new Uint8Array(0)), RangeError);
});

test('stored runs: any block is cut into non-empty runs that cover it in order, stored and compressed alternating', () => {
  const parts = fc.array(fc.tuple(fc.constantFrom('random', 'text', 'zeros'), fc.integer({ min: 1, max: 3 * SEGMENT_BYTES })), { minLength: 0, maxLength: 6 });
  fc.assert(
    fc.property(parts, (spec) => {
      const block = Buffer.concat(
        spec.map(([kind, n]) => (kind === 'random' ? randomBytes(n) : kind === 'text' ? Buffer.concat([TEXT, TEXT, TEXT]).subarray(0, n) : Buffer.alloc(n))),
      );
      const runs = splitRuns(block);
      let at = 0;
      for (const [i, run] of runs.entries()) {
        assert.equal(run.start, at);
        assert.ok(run.end > run.start, 'no empty run');
        if (i > 0) assert.notEqual(run.stored, runs[i - 1]!.stored, 'neighbouring runs differ');
        assert.equal(run.start % SEGMENT_BYTES, 0, 'runs start on a segment');
        at = run.end;
      }
      assert.equal(at, block.byteLength);
      // Every segment of a stored run looks incompressible, every one of a compressed run does not.
      for (const run of runs)
        for (let s = run.start; s < run.end; s += SEGMENT_BYTES)
          assert.equal(looksIncompressible(block.subarray(s, Math.min(s + SEGMENT_BYTES, block.byteLength))), run.stored);
    }),
    { numRuns: 60 },
  );
});

test('stored runs: random and already-compressed content is stored; text, zeros, short segments and patterned data are compressed', () => {
  assert.equal(looksIncompressible(randomBytes(SEGMENT_BYTES)), true, 'random bytes');
  const compressed = gzipSync(
    randomBytes(64 * 1024)
      .toString('base64')
      .repeat(3),
    { level: 9 },
  );
  assert.ok(compressed.length >= SEGMENT_BYTES / 2);
  assert.equal(looksIncompressible(compressed.subarray(0, SEGMENT_BYTES)), true, 'gzip output');
  assert.equal(looksIncompressible(text(SEGMENT_BYTES)), false, 'source text');
  assert.equal(looksIncompressible(Buffer.alloc(SEGMENT_BYTES)), false, 'zeros');
  assert.equal(looksIncompressible(randomBytes(SEGMENT_BYTES / 2 - 1)), false, 'too short to judge');
  assert.equal(looksIncompressible(Buffer.from(randomBytes(SEGMENT_BYTES).toString('base64').slice(0, SEGMENT_BYTES))), false, 'base64 text');
  // 16-byte records, one random byte each: a sampler with a stride of 16 would see only the random bytes.
  const records = Buffer.alloc(SEGMENT_BYTES);
  for (let i = 0; i < SEGMENT_BYTES; i += 16) records[i] = Math.floor(Math.random() * 256);
  assert.equal(looksIncompressible(records), false, 'records');
  // Random content with 20 KiB of text somewhere in it: some window lands in the text.
  for (const at of [0, 40_000, SEGMENT_BYTES - 20_480]) {
    const mixed = randomBytes(SEGMENT_BYTES);
    text(20_480).copy(mixed, at);
    assert.equal(looksIncompressible(mixed), false, `text at ${at}`);
  }
});
