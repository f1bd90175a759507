import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FramePool } from './frame-pool.ts';

test('FramePool reuses only its own chunk-sized buffers, and only after release', () => {
  const pool = new FramePool(1024 * 1024 + 16, 2);
  const a = pool.allocate(1024 * 1024 + 16);
  assert.equal(a.length, 1024 * 1024 + 16);
  const b = pool.allocate(700 * 1024);
  assert.ok(a.buffer !== b.buffer, 'a buffer still in use is never handed out again');
  pool.release(a.subarray(17));
  assert.ok(pool.allocate(600 * 1024).buffer === a.buffer, 'a released buffer comes back');
  // A payload under half the pooled size gets a buffer of its own size, never a whole pooled one.
  assert.equal(pool.allocate(300 * 1024).buffer.byteLength, 300 * 1024);
  assert.ok(pool.allocate(1024 * 1024 + 17).buffer.byteLength === 1024 * 1024 + 17, 'over the largest frame: not pooled');
  // Small payloads and foreign buffers stay with the garbage collector.
  assert.equal(pool.allocate(100).buffer.byteLength >= 100, true);
  pool.release(Buffer.alloc(a.buffer.byteLength));
  assert.equal(pool.pooled, 0);
  pool.release(b);
  pool.release(pool.allocate(700 * 1024));
  pool.release(pool.allocate(700 * 1024));
  assert.ok(pool.pooled <= 2, 'the free list is bounded');
});

test('FramePool keeps a buffer given back twice once, so two holders never get the same buffer, and counts what it made', () => {
  const pool = new FramePool(1024, 4);
  const a = pool.allocate(1024);
  const b = pool.allocate(600);
  assert.equal(pool.made, 2);
  pool.release(a);
  pool.release(a.subarray(10)); // the same memory again, through another view
  pool.release(b);
  assert.equal(pool.pooled, 2, 'a buffer given back twice is on the free list once');
  const x = pool.allocate(1024);
  const y = pool.allocate(1024);
  assert.notEqual(x.buffer, y.buffer, 'two holders at once get two buffers');
  assert.equal(pool.made, 2, 'both came from the free list');
  pool.allocate(1024);
  assert.equal(pool.made, 3);
  assert.equal(pool.fits(512), true);
  assert.equal(pool.fits(511), false);
  assert.equal(pool.fits(1025), false);
});
