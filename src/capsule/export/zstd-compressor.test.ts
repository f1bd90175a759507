import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { zstdDecompressSync } from 'node:zlib';
import fc from 'fast-check';
import { createZstdCompressor, ZSTD_BLOCK_BYTES } from './zstd-compressor.ts';

/** Pushes `chunks` in order, overwriting each chunk after push() returned (push copies: a caller reuses its buffers). */
async function compress(chunks: readonly Uint8Array[], blockBytes?: number): Promise<Buffer> {
  const c = createZstdCompressor(undefined, blockBytes);
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

test('zstd: any split of any input compresses to one stream that decompresses to the input, with pushed buffers reused at once', async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(fc.uint8Array({ maxLength: 3000 }), { maxLength: 12 }), fc.integer({ min: 1, max: 4096 }), async (chunks, blockBytes) => {
      const input = Buffer.concat(chunks);
      const packed = await compress(chunks, blockBytes);
      assert.deepEqual(zstdDecompressSync(packed), input);
    }),
    { numRuns: 150 },
  );
});

test('zstd: several blocks of mixed data round-trip through the zstd program, as GNU tar --zstd reads them', async () => {
  const text = Buffer.from('export const value = "some fairly repetitive source text";\n'.repeat(40_000));
  const chunks = [text.subarray(0, 512), randomBytes(3 * ZSTD_BLOCK_BYTES + 17), text, Buffer.alloc(0), randomBytes(100)];
  const packed = await compress(chunks);
  const input = Buffer.concat(chunks);
  assert.ok(packed.length < input.length, 'the text compressed');
  const r = spawnSync('zstd', ['-dc'], { input: packed, maxBuffer: 64 << 20 });
  assert.equal(r.status, 0, String(r.stderr));
  assert.ok(Buffer.compare(r.stdout, input) === 0, 'zstd -dc gives the input back');
});

test('zstd: nothing pushed is an empty stream; end() twice and push() after end() are refused or empty', async () => {
  const c = createZstdCompressor();
  const packed = Buffer.concat(await c.end());
  assert.equal(zstdDecompressSync(packed).length, 0);
  assert.deepEqual(await c.end(), []);
  await assert.rejects(c.push(Buffer.from('late')), /already ended/);
});

test('zstd: a destroyed compressor refuses more input (an export that failed elsewhere)', async () => {
  const c = createZstdCompressor();
  await c.push(randomBytes(10_000));
  c.destroy();
  await assert.rejects(c.push(Buffer.from('more')), /already ended|destroyed/);
});
