import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pollUntil } from '../../test/helpers/poll.ts';
import { lookUpGc, MAJOR_GC_EVERY, OutputCollector, OUTPUT_GC_BYTES } from './output-gc.ts';

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
