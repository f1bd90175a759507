import { test } from 'node:test';
import assert from 'node:assert/strict';
import { constants, performance, PerformanceObserver, type PerformanceEntry } from 'node:perf_hooks';
import { pollUntil } from '../../../test/helpers/poll.ts';
import { collectGarbage, lookUpGc, MAJOR_GC_EVERY, OutputCollector, OUTPUT_GC_BYTES } from './output-gc.ts';

const MIB = 1024 * 1024;

test('output gc: one collection per OUTPUT_GC_BYTES of output, none before, every MAJOR_GC_EVERY-th a full one', () => {
  const kinds: string[] = [];
  const c = new OutputCollector((kind) => kinds.push(kind));
  c.count(OUTPUT_GC_BYTES - 1);
  assert.deepEqual(kinds, []);
  c.count(1);
  assert.deepEqual(kinds, ['minor']);
  for (let i = 0; i < 8; i++) c.count(OUTPUT_GC_BYTES / 4);
  assert.deepEqual(kinds, ['minor', 'minor', 'minor']);
  c.count(3 * OUTPUT_GC_BYTES);
  assert.equal(kinds.length, 4, 'a chunk larger than the step is one collection, not several');
  assert.equal(MAJOR_GC_EVERY, 4);
  assert.deepEqual(kinds, ['minor', 'minor', 'minor', 'major']);
});

test('output gc: the gc function is found without --expose-gc and frees dropped buffers', async () => {
  // This test process runs without the flag, as a capsule started by an image's own entrypoint may.
  const gc = lookUpGc();
  assert.equal(typeof gc, 'function');
  assert.equal((globalThis as { gc?: unknown }).gc, undefined, 'the process global stays without gc');
  const before = process.memoryUsage().arrayBuffers;
  for (let i = 0; i < 16; i++) Buffer.allocUnsafeSlow(MIB).fill(1);
  const grown = process.memoryUsage().arrayBuffers;
  assert.ok(grown - before >= 15 * MIB, `the dropped buffers are still counted (${grown - before} bytes)`);
  gc!({ type: 'minor' });
  await pollUntil('the dropped buffers to be freed', () => process.memoryUsage().arrayBuffers < grown - 12 * MIB, {
    timeoutMs: 2000,
    last: () => process.memoryUsage().arrayBuffers,
  });
});

/** Allocates `mib` MiB of buffers, keeps them across two minor collections (so they are promoted), then drops them. */
function promoteAndDrop(mib: number): void {
  const held: Buffer[] = [];
  for (let i = 0; i < mib; i++) held.push(Buffer.allocUnsafeSlow(MIB).fill(2));
  collectGarbage('minor');
  collectGarbage('minor');
  held.length = 0;
}

/** The full collections V8 ran while `during` ran (its own, started by external-memory pressure), counted once the observer has reported. */
async function fullCollectionsDuring(during: () => void): Promise<number> {
  const full: PerformanceEntry[] = [];
  const observer = new PerformanceObserver((list) => {
    for (const e of list.getEntries())
      if ((e as PerformanceEntry & { detail?: { kind?: number } }).detail?.kind !== constants.NODE_PERFORMANCE_GC_MINOR) full.push(e);
  });
  observer.observe({ entryTypes: ['gc'] });
  const start = performance.now();
  during();
  const end = performance.now();
  // GC entries are queued and delivered on a later turn.
  await new Promise((resolve) => setTimeout(resolve, 50));
  observer.disconnect();
  return full.filter((e) => e.startTime >= start && e.startTime <= end).length;
}

test('output gc: a full collection frees promoted buffers, which minor collections leave alone', async () => {
  // Chunks still held at a minor collection (in the model's batch, in the socket's queue) are promoted and die
  // in the old generation: the reason every MAJOR_GC_EVERY-th collection is a full one. V8 may start a full
  // collection of its own while the test allocates (external memory grew by 16 MiB since its last one, after
  // the tests before this one): each attempt starts from a full collection, and one during which V8 ran its
  // own anyway shows nothing about minor ones and is made again, at most five times.
  for (let attempt = 1; ; attempt++) {
    collectGarbage('major');
    await new Promise((resolve) => setTimeout(resolve, 20));
    const before = process.memoryUsage().arrayBuffers;
    let afterMinor = 0;
    const own = await fullCollectionsDuring(() => {
      promoteAndDrop(16);
      collectGarbage('minor');
      collectGarbage('minor');
      afterMinor = process.memoryUsage().arrayBuffers;
    });
    if (own > 0 && attempt < 5) continue;
    assert.equal(own, 0, 'V8 ran a full collection of its own during each of five attempts');
    assert.ok(
      afterMinor - before >= 12 * MIB,
      `minor collections freed promoted buffers (${afterMinor - before} bytes left): this test no longer shows why full ones are needed`,
    );
    collectGarbage('major');
    await pollUntil('the promoted buffers to be freed', () => process.memoryUsage().arrayBuffers < afterMinor - 12 * MIB, {
      timeoutMs: 2000,
      last: () => process.memoryUsage().arrayBuffers,
    });
    return;
  }
});
