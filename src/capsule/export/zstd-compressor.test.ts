/**
 * Both zstd compressors (zstd-compressor.ts) round-trip, each through the zstd program GNU tar --zstd uses;
 * and the one picked is the one the running Node should use. The WebAssembly one is tested on every Node;
 * Node's own only where it exists (CI's Node 24 run): on a Node without it, the cases check it is refused.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import type { Transform } from 'node:stream';
import fc from 'fast-check';
import { rewindOutput } from './zstd-builtin.ts';
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

/**
 * Keeps a compressor's output as its interface allows (stream-compressor.ts): each call's output copied at
 * once, and checked to be still what it was when the next call resolves. `buffers` are the memory behind it.
 */
function outputCollector() {
  const copies: Buffer[] = [];
  const buffers = new Set<ArrayBufferLike>();
  let last: { views: readonly Uint8Array[]; copy: Buffer } | undefined;
  return {
    take(views: readonly Uint8Array[]): void {
      if (last !== undefined) assert.ok(Buffer.concat(last.views).equals(last.copy), "the last call's output changed before the next call resolved");
      const copy = Buffer.concat(views);
      copies.push(copy);
      for (const v of views) buffers.add(v.buffer);
      last = { views, copy };
    },
    bytes: (): Buffer => Buffer.concat(copies),
    buffers,
  };
}

/** Pushes `chunks` in order, overwriting each chunk after push() returned (push copies: a caller reuses its buffers). */
async function compressed(impl: ZstdImplementation, chunks: readonly Uint8Array[], blockBytes: number = ZSTD_BLOCK_BYTES) {
  const c = ZSTD_COMPRESSORS[impl](ZSTD_LEVEL, blockBytes);
  const out = outputCollector();
  for (const chunk of chunks) {
    const copy = Buffer.from(chunk);
    const ready = c.push(copy);
    copy.fill(0xee);
    out.take(await ready);
  }
  out.take(await c.end());
  return { packed: out.bytes(), buffers: out.buffers };
}

const compress = async (impl: ZstdImplementation, chunks: readonly Uint8Array[], blockBytes?: number): Promise<Buffer> =>
  (await compressed(impl, chunks, blockBytes)).packed;

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
          const out = outputCollector();
          for (const [inPlace, bytes] of steps) {
            if (!inPlace) {
              out.take(await c.push(bytes));
              continue;
            }
            for (let at = 0; at < bytes.byteLength; ) {
              const space = c.space();
              assert.ok(space.byteLength > 0, 'space() is never empty');
              const n = Math.min(space.byteLength, bytes.byteLength - at);
              space.set(bytes.subarray(at, at + n));
              at += n;
              out.take(await c.commit(n));
            }
          }
          out.take(await c.end());
          assert.deepEqual(unzstd(out.bytes()), Buffer.concat(steps.map(([, b]) => b)));
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

  test(`zstd (${impl}): 48 MiB of mixed content, each call's output kept as the interface allows, round-trips`, async () => {
    const text = sourceText(ZSTD_BLOCK_BYTES);
    const chunks = Array.from({ length: 48 }, (_, i) => (i % 3 === 0 ? randomBytes(ZSTD_BLOCK_BYTES) : text));
    // node:zlib takes its output buffers with Buffer.allocUnsafe: count those of a MiB or more.
    const allocUnsafe = Buffer.allocUnsafe;
    let large = 0;
    Buffer.allocUnsafe = (size: number) => {
      if (size >= ZSTD_BLOCK_BYTES) large++;
      return allocUnsafe(size);
    };
    const { packed, buffers } = await compressed(impl, chunks).finally(() => {
      Buffer.allocUnsafe = allocUnsafe;
    });
    assert.ok(Buffer.compare(unzstd(packed), Buffer.concat(chunks)) === 0, 'zstd -dc gives the input back');
    if (impl === 'node:zlib') {
      // 16 MiB of random content went through: zlib wrote it all into the buffer it started with
      // (rewindOutput), and the output was handed out from a few reused slabs (output-slabs.ts).
      assert.ok(large <= 1, `${large} buffers of a MiB or more taken`);
      assert.ok(buffers.size <= 10, `${buffers.size} buffers behind ${packed.length} bytes of output`);
    }
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

if (nodeHasZstd) {
  const zstdStream = async (): Promise<Transform> => {
    const zlib = (await import('node:zlib')) as unknown as { createZstdCompress: (o: { chunkSize: number }) => Transform };
    return zlib.createZstdCompress({ chunkSize: 256 * 1024 });
  };

  test('zstd (node:zlib): once its output is copied, zlib writes the next over it instead of taking a fresh buffer (rewindOutput)', async () => {
    const z = await zstdStream();
    const buffers = new Set<ArrayBufferLike>();
    const copies: Buffer[] = [];
    z.on('data', (chunk: Buffer) => {
      buffers.add(chunk.buffer);
      copies.push(Buffer.from(chunk));
      rewindOutput(z, chunk);
    });
    const ended = once(z, 'end');
    const input = randomBytes(4 * 1024 * 1024);
    // Each write's output fits the 256 KiB buffer: without the rewind, a fresh one every four writes or so.
    for (let at = 0; at < input.length; at += 64 * 1024) z.write(input.subarray(at, at + 64 * 1024));
    z.end();
    await ended;
    assert.equal(buffers.size, 1);
    assert.ok(Buffer.compare(unzstd(Buffer.concat(copies)), input) === 0);
  });

  test("zstd (node:zlib): rewindOutput leaves zlib's buffer alone for anything but its last output with nothing buffered", async () => {
    const z = await zstdStream();
    const state = z as unknown as { _outBuffer: Buffer; _outOffset: number };
    // No data listener: the output waits in the stream, as it would if the stream were paused (less of it
    // than the stream's high-water mark, or the flush would wait for a reader).
    z.write(randomBytes(4 * 1024));
    await new Promise<void>((resolve) => (z as unknown as { flush: (done: () => void) => void }).flush(resolve));
    const at = state._outOffset;
    assert.ok(at > 0 && z.readableLength > 0);
    rewindOutput(z, state._outBuffer.subarray(at - 100, at));
    assert.equal(state._outOffset, at, 'output still buffered in the stream');
    z.read();
    assert.equal(z.readableLength, 0);
    rewindOutput(z, Buffer.from(state._outBuffer.subarray(at - 100, at)));
    assert.equal(state._outOffset, at, "a copy of the bytes, not zlib's own");
    rewindOutput(z, state._outBuffer.subarray(at - 200, at - 100));
    assert.equal(state._outOffset, at, 'not its last output');
    rewindOutput(z, state._outBuffer.subarray(at - 100, at));
    assert.equal(state._outOffset, at - 100, 'its last output, nothing buffered');
    z.destroy();
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
  const out = outputCollector();
  out.take(await c.push(input));
  out.take(await c.end());
  assert.deepEqual(unzstd(out.bytes()), input);
});
