import { test } from 'node:test';
import assert from 'node:assert/strict';
import { hasCode } from '../../errors.ts';
import { createRateLimiter } from './rate-limiter.ts';

test('rate limiter allows max uses per sliding window', () => {
  let now = 0;
  const l = createRateLimiter({ max: 3, windowMs: 5000, now: () => now });
  assert.deepEqual([l.tryTake(), l.tryTake(), l.tryTake(), l.tryTake()], [true, true, true, false]);
  now = 4999;
  assert.equal(l.tryTake(), false);
  now = 5000;
  assert.equal(l.tryTake(), true);
  assert.equal(l.tryTake(), true);
  assert.equal(l.tryTake(), true);
  assert.equal(l.tryTake(), false);
  assert.throws(
    () => l.take('https://example.com'),
    (e: unknown) => hasCode(e, 'E_RATE_LIMITED'),
  );
});

test('rate limiter refuses nonsense limits', () => {
  assert.throws(() => createRateLimiter({ max: 0, windowMs: 1000 }), RangeError);
  assert.throws(() => createRateLimiter({ max: 1, windowMs: 0 }), RangeError);
});
