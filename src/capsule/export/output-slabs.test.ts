import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { FramePool } from '../../protocol/frame-pool.ts';
import { OutputSlabs } from './output-slabs.ts';

type Op = { readonly kind: 'copy'; readonly bytes: Uint8Array } | { readonly kind: 'handOut' };

const ops = (slab: number) =>
  fc.array(
    fc.oneof(
      fc.uint8Array({ maxLength: 3 * slab + 1 }).map((bytes): Op => ({ kind: 'copy', bytes })),
      fc.constant<Op>({ kind: 'handOut' }),
    ),
    { maxLength: 60 },
  );

test('output slabs: each hand-out is what was copied since the last, in order, and stays intact until the next hand-out returns', () => {
  fc.assert(
    fc.property(fc.integer({ min: 1, max: 64 }), fc.integer({ min: 1, max: 64 }).chain(ops), (slab, sequence) => {
      const slabs = new OutputSlabs(new FramePool(slab, 4), slab);
      let copied: Buffer[] = [];
      let previous: { views: Uint8Array[]; expected: Buffer } | undefined;
      for (const op of [...sequence, { kind: 'handOut' } as const]) {
        if (op.kind === 'copy') {
          const source = Buffer.from(op.bytes);
          slabs.copy(source);
          source.fill(0xee); // the caller's buffer may be reused at once
          copied.push(Buffer.from(op.bytes));
          // What the last hand-out gave stays what it was while copies go on.
          if (previous !== undefined) assert.deepEqual(Buffer.concat(previous.views), previous.expected);
          continue;
        }
        const views = slabs.handOut();
        if (previous !== undefined) assert.deepEqual(Buffer.concat(previous.views), previous.expected);
        const expected = Buffer.concat(copied);
        assert.deepEqual(Buffer.concat(views), expected);
        for (const v of views) assert.ok(v.byteLength > 0 && v.byteLength <= slab);
        previous = { views, expected };
        copied = [];
      }
    }),
    { numRuns: 300 },
  );
});

test('output slabs: a steady stream reuses its slabs, and release() gives them all back to the pool', () => {
  const slab = 1024;
  const pool = new FramePool(slab, 8);
  const taken = new Set<ArrayBufferLike>();
  const allocate = pool.allocate;
  pool.allocate = (n: number) => {
    const b = allocate(n);
    taken.add(b.buffer);
    return b;
  };
  const slabs = new OutputSlabs(pool, slab);
  const piece = Buffer.alloc(300, 7);
  for (let round = 0; round < 2000; round++) {
    slabs.copy(piece);
    if (round % 3 === 2) slabs.handOut();
  }
  // 600 KB went through; a hand-out covers at most 900 bytes, so the last two and the slab being filled
  // need at most four slabs of 1 KiB.
  assert.ok(taken.size <= 4, `${taken.size} slabs taken`);
  assert.ok(pool.pooled < taken.size, 'slabs in use are not in the pool');
  slabs.release();
  assert.equal(pool.pooled, taken.size, 'every slab it took is in the pool again');
});
