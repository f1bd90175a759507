import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { BufferPool } from './buffer-pool.ts';
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
      const slabs = new OutputSlabs(new BufferPool(slab, 4));
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
  const pool = new BufferPool(slab, 8);
  const taken = new Set<Buffer>();
  const take = pool.take.bind(pool);
  pool.take = () => {
    const b = take();
    taken.add(b);
    return b;
  };
  const slabs = new OutputSlabs(pool);
  const piece = Buffer.alloc(300, 7);
  for (let round = 0; round < 2000; round++) {
    slabs.copy(piece);
    if (round % 3 === 2) slabs.handOut();
  }
  // 600 KB went through; a hand-out covers at most 900 bytes, so the last two and the slab being filled
  // need at most four slabs of 1 KiB.
  assert.ok(taken.size <= 4, `${taken.size} slabs taken`);
  slabs.release();
  const back = new Set(Array.from({ length: taken.size }, () => take()));
  assert.deepEqual(back, taken, 'every slab it took is in the pool again');
});

test('buffer pool: buffers of its size come back, up to its cap; others are left to the collector', () => {
  const pool = new BufferPool(64, 2);
  const [a, b, c] = [pool.take(), pool.take(), pool.take()];
  assert.equal(a.byteLength, 64);
  pool.give(a);
  pool.give(Buffer.alloc(32));
  pool.give(b);
  pool.give(c);
  const again = new Set([pool.take(), pool.take()]);
  assert.deepEqual(again, new Set([a, b]));
  const fresh = pool.take();
  assert.ok(fresh !== a && fresh !== b && fresh !== c, 'past the cap, c was not kept');
});
