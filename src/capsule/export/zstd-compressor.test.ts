/**
 * Both zstd compressors (zstd-compressor.ts) round-trip, each through the zstd program GNU tar --zstd uses;
 * and the one picked is the one the running Node should use. The WebAssembly one is tested on every Node;
 * Node's own only where it exists (CI's Node 24 run): on a Node without it, the cases check it is refused.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { createZstdCompressor, ZSTD_BLOCK_BYTES, ZSTD_COMPRESSORS, zstdImplementation, ZSTD_LEVEL, type ZstdImplementation } from './zstd-compressor.ts';

const [major, minor] = process.versions.node.split('.').map(Number) as [number, number];
/** Node's zlib has zstd from 22.15 on the 22 line, 23.8 on 23, and in every 24 and later. */
const nodeHasZstd = major >= 24 || (major === 23 && minor >= 8) || (major === 22 && minor >= 15);

/** Source text, as the bench's tree has: compresses to almost nothing. */
const sourceText = (bytes: number): Buffer =>
  Buffer.from('export const value = "some fairly repetitive source text";\n'.repeat(Math.ceil(bytes / 59) + 1)).subarray(0, bytes);

function unzstd(packed: Uint8Array): Buffer {
  const r = spawnSync('zstd', ['-dc'], { input: packed, maxBuffer: 64 << 20 });
  assert.equal(r.status, 0, String(r.stderr));
  return r.stdout;
}

/** Pushes `chunks` in order, overwriting each chunk after push() returned (push copies: a caller reuses its buffers). */
async function compress(impl: ZstdImplementation, chunks: readonly Uint8Array[], blockBytes: number = ZSTD_BLOCK_BYTES): Promise<Buffer> {
  const c = ZSTD_COMPRESSORS[impl](ZSTD_LEVEL, blockBytes);
  const out: Uint8Array[] = [];
  for (const chunk of chunks) {
    const copy = Buffer.from(chunk);
    const ready = c.push(copy);
    copy.fill(0xee);
    out.push(...(await ready));
  }
  out.push(...(await c.end()));
  return Buffer.concat(out);
}

test(`zstd: on Node ${process.version} directory export uses ${nodeHasZstd ? "Node's own zstd" : 'the WebAssembly fallback'}`, () => {
  assert.equal(zstdImplementation(), nodeHasZstd ? 'node:zlib' : 'zstd-wasm');
});

for (const impl of ['zstd-wasm', 'node:zlib'] as const) {
  if (impl === 'node:zlib' && !nodeHasZstd) {
    test(`zstd (${impl}): on Node ${process.version}, which has none, it is refused at once (its round trips run on Node 24)`, () => {
      assert.throws(() => ZSTD_COMPRESSORS[impl](ZSTD_LEVEL, ZSTD_BLOCK_BYTES), /has no zlib\.createZstdCompress/);
    });
    continue;
  }

  test(`zstd (${impl}): any split of any input compresses to one stream that decompresses to the input, with pushed buffers reused at once`, async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.uint8Array({ maxLength: 3000 }), { maxLength: 12 }), fc.integer({ min: 1, max: 4096 }), async (chunks, blockBytes) => {
        const packed = await compress(impl, chunks, blockBytes);
        assert.deepEqual(unzstd(packed), Buffer.concat(chunks));
      }),
      { numRuns: 100 },
    );
  });

  test(`zstd (${impl}): bytes written in place (space() then commit()) and pushed, in any mix, make one stream of them in order`, async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(fc.boolean(), fc.uint8Array({ maxLength: 3000 })), { maxLength: 12 }),
        fc.integer({ min: 1, max: 4096 }),
        async (steps, blockBytes) => {
          const c = ZSTD_COMPRESSORS[impl](ZSTD_LEVEL, blockBytes);
          await c.ready();
          const out: Uint8Array[] = [];
          for (const [inPlace, bytes] of steps) {
            if (!inPlace) {
              out.push(...(await c.push(bytes)));
              continue;
            }
            for (let at = 0; at < bytes.byteLength; ) {
              const space = c.space();
              assert.ok(space.byteLength > 0, 'space() is never empty');
              const n = Math.min(space.byteLength, bytes.byteLength - at);
              space.set(bytes.subarray(at, at + n));
              at += n;
              out.push(...(await c.commit(n)));
            }
          }
          out.push(...(await c.end()));
          assert.deepEqual(unzstd(Buffer.concat(out)), Buffer.concat(steps.map(([, b]) => b)));
        },
      ),
      { numRuns: 100 },
    );
  });

  test(`zstd (${impl}): commit() of more than space() held is refused, and so is space() after end()`, async () => {
    const c = ZSTD_COMPRESSORS[impl](ZSTD_LEVEL, 64);
    await c.ready();
    await assert.rejects(c.commit(65), RangeError);
    c.space().fill(1, 0, 10);
    await c.commit(10);
    await assert.rejects(c.commit(55), RangeError);
    assert.deepEqual(unzstd(Buffer.concat(await c.end())), Buffer.alloc(10, 1));
    assert.throws(() => c.space(), /already ended/);
  });

  test(`zstd (${impl}): several blocks of mixed data round-trip through the zstd program, as GNU tar --zstd reads them`, async () => {
    const text = sourceText(40_000 * 59);
    const chunks = [text.subarray(0, 512), randomBytes(3 * ZSTD_BLOCK_BYTES + 17), text, Buffer.alloc(0), randomBytes(100)];
    const packed = await compress(impl, chunks);
    const input = Buffer.concat(chunks);
    assert.ok(packed.length < input.length, 'the text compressed');
    assert.ok(Buffer.compare(unzstd(packed), input) === 0, 'zstd -dc gives the input back');
  });

  test(`zstd (${impl}): nothing pushed is an empty stream; end() twice and push() after end() are refused or empty`, async () => {
    const c = ZSTD_COMPRESSORS[impl](ZSTD_LEVEL, ZSTD_BLOCK_BYTES);
    const packed = Buffer.concat(await c.end());
    assert.ok(packed.length > 0, 'one empty frame');
    assert.equal(unzstd(packed).length, 0);
    assert.deepEqual(await c.end(), []);
    await assert.rejects(c.push(Buffer.from('late')), /already ended/);
  });

  test(`zstd (${impl}): a destroyed compressor refuses more input (an export that failed elsewhere)`, async () => {
    const c = ZSTD_COMPRESSORS[impl](ZSTD_LEVEL, ZSTD_BLOCK_BYTES);
    await c.push(randomBytes(10_000));
    c.destroy();
    await assert.rejects(c.push(Buffer.from('more')), /already ended|destroyed/);
  });
}

test('zstd (zstd-wasm): random content is stored in raw blocks, not compressed; text beside it still is (stored-runs.ts)', async () => {
  const random = randomBytes(ZSTD_BLOCK_BYTES);
  // One block of random bytes: one frame of eight raw 128 KiB blocks (a 9-byte frame header, 3 bytes a block).
  assert.equal((await compress('zstd-wasm', [random])).length, ZSTD_BLOCK_BYTES + 9 + 8 * 3);
  // Half text, half random: the text compresses to almost nothing, the random half is stored.
  const text = sourceText(ZSTD_BLOCK_BYTES / 2);
  const input = Buffer.concat([text, random.subarray(0, ZSTD_BLOCK_BYTES / 2)]);
  const packed = await compress('zstd-wasm', [input]);
  assert.ok(packed.length < ZSTD_BLOCK_BYTES / 2 + 4096, `${packed.length} bytes`);
  assert.ok(packed.length >= ZSTD_BLOCK_BYTES / 2 + 9 + 4 * 3);
  assert.ok(Buffer.compare(unzstd(packed), input) === 0);
});

test('zstd (zstd-wasm): a block of alternating stored and compressed segments stays within the bound archive-bound.ts declares', async () => {
  // The most frames a block can make: eight 128 KiB segments, random and text by turns, each run its own frame.
  const text = sourceText(128 * 1024);
  const blocks = 3;
  const input = Buffer.concat(Array.from({ length: 8 * blocks }, (_, i) => (i % 2 === 0 ? randomBytes(128 * 1024) : text)));
  const packed = await compress('zstd-wasm', [input]);
  assert.ok(packed.length <= input.length + Math.ceil(input.length / 256) + (blocks + 1) * 1024, `${packed.length} bytes for ${input.length}`);
  assert.ok(packed.length > input.length / 2, 'the random half was stored');
  assert.ok(Buffer.compare(unzstd(packed), input) === 0);
});

test('zstd: createZstdCompressor() is the picked implementation, and its stream round-trips', async () => {
  const c = createZstdCompressor();
  const input = Buffer.from('picked '.repeat(1000));
  const packed = Buffer.concat([...(await c.push(input)), ...(await c.end())]);
  assert.deepEqual(unzstd(packed), input);
});
