import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { toDisposable } from '../../disposable.ts';
import { MAX_OUTPUT_FRAME_BYTES, OUTPUT_COALESCE_BYTES, OUTPUT_COALESCE_MS, OUTPUT_FLOOD_READ_BYTES, OutputCoalescer } from './output-coalescer.ts';

function setup(t: TestContext, writeResult = true) {
  t.mock.timers.enable({ apis: ['setTimeout'] });
  const log = { frames: [] as number[], holds: 0, releases: 0, flushes: 0, drain: null as (() => void) | null, relaying: true };
  const c = new OutputCoalescer({
    writeOutput: (bytes) => {
      log.frames.push(Buffer.isBuffer(bytes) ? bytes.length : bytes.reduce((n, b) => n + b.length, 0));
      return writeResult;
    },
    onceDrain: (fn) => {
      log.drain = fn;
      return toDisposable(() => {
        log.drain = null;
      });
    },
    holdPty: () => log.holds++,
    releasePty: () => log.releases++,
    afterFlush: () => log.flushes++,
    relaying: () => log.relaying,
  });
  return { c, log, tick: (ms: number) => t.mock.timers.tick(ms) };
}

test('output coalescer: a small read goes out at once', (t) => {
  const { c, log } = setup(t);
  c.push(Buffer.alloc(10));
  assert.deepEqual(log.frames, [10]);
  assert.equal(c.hasPending, false);
});

test('output coalescer: flood reads are gathered for OUTPUT_COALESCE_MS into one frame', (t) => {
  const { c, log, tick } = setup(t);
  c.push(Buffer.alloc(OUTPUT_FLOOD_READ_BYTES));
  c.push(Buffer.alloc(OUTPUT_FLOOD_READ_BYTES));
  c.push(Buffer.alloc(5)); // a small read behind a flood waits with it, keeping the order
  assert.deepEqual(log.frames, []);
  tick(OUTPUT_COALESCE_MS);
  assert.deepEqual(log.frames, [2 * OUTPUT_FLOOD_READ_BYTES + 5]);
  assert.equal(log.flushes, 1);
});

test('output coalescer: OUTPUT_COALESCE_BYTES gathered go out without waiting, in frames of at most MAX_OUTPUT_FRAME_BYTES', (t) => {
  const { c, log } = setup(t);
  c.push(Buffer.alloc(OUTPUT_COALESCE_BYTES + MAX_OUTPUT_FRAME_BYTES + 1));
  assert.deepEqual(log.frames, [MAX_OUTPUT_FRAME_BYTES, MAX_OUTPUT_FRAME_BYTES, OUTPUT_COALESCE_BYTES - MAX_OUTPUT_FRAME_BYTES + 1]);
});

test('output coalescer: a flood goes out in whole reads, never a frame past MAX_OUTPUT_FRAME_BYTES and never re-copied', (t) => {
  const { c, log, tick } = setup(t);
  const parts: number[] = [];
  const read = 4095; // what a PTY read hands over during a flood
  const perFrame = Math.floor(MAX_OUTPUT_FRAME_BYTES / read);
  const c2 = new OutputCoalescer({
    writeOutput: (bytes) => {
      assert.ok(!Buffer.isBuffer(bytes), 'gathered reads reach the frame as parts, not concatenated first');
      parts.push(bytes.length);
      log.frames.push(bytes.reduce((n, b) => n + b.length, 0));
      return true;
    },
    onceDrain: () => toDisposable(() => {}),
    holdPty: () => {},
    releasePty: () => {},
    afterFlush: () => {},
    relaying: () => true,
  });
  c.dispose();
  for (let i = 0; i < 2 * perFrame + 5; i++) c2.push(Buffer.alloc(read));
  assert.deepEqual(log.frames, [perFrame * read, perFrame * read]);
  tick(OUTPUT_COALESCE_MS);
  assert.deepEqual(log.frames, [perFrame * read, perFrame * read, 5 * read]);
  assert.deepEqual(parts, [perFrame, perFrame, 5]);
});

test('output coalescer: a socket that does not drain holds the PTY once, until drain', (t) => {
  const { c, log } = setup(t, false);
  c.push(Buffer.alloc(1));
  c.push(Buffer.alloc(1));
  assert.equal(log.holds, 1);
  assert.equal(log.releases, 0);
  log.drain?.();
  assert.equal(log.releases, 1);
});

test('output coalescer: dispose drops pending output and releases a drain hold', (t) => {
  const { c, log, tick } = setup(t, false);
  c.push(Buffer.alloc(1));
  c.push(Buffer.alloc(OUTPUT_FLOOD_READ_BYTES));
  c.dispose();
  tick(OUTPUT_COALESCE_MS);
  assert.deepEqual(log.frames, [1]);
  assert.equal(log.releases, 1);
  assert.equal(log.drain, null, 'the wait for drain was cancelled');
});

test('output coalescer: no hold once the connection stopped relaying', (t) => {
  const { c, log } = setup(t, false);
  log.relaying = false;
  c.push(Buffer.alloc(1));
  assert.equal(log.holds, 0);
});
