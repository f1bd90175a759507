/**
 * Directory export's zstd on Node's own `zlib.createZstdCompress` (Node 22.15+, 23.8+, 24), behind the
 * interface of zstd-compressor.ts, which picks it wherever the running Node has it.
 *
 * It compresses on libuv's thread pool, so the event loop goes on reading and packing the tree (and serving
 * the session) while a block is compressed, and the archive is one zstd frame. It takes the least CPU of the
 * compressors tried, fed in 1 MiB blocks, each compressed in one trip to the pool (outputChunkBytes)
 * (measurements: bench/RESULTS.md, Export, notes). It takes no new memory after the first export: its
 * blocks and output slabs are pooled for the next one, and zlib writes each output over the last once it is
 * copied out (rewindOutput), instead of a fresh 1 MiB buffer per MiB of archive (bench/RESULTS.md, the
 * seventh pass).
 */
import type { Transform } from 'node:stream';
import type * as NodeZlib from 'node:zlib';
import { nodeZlib } from '../../lazy-builtins.ts';
import { transferBuffers } from '../session/transfer-buffers.ts';
import { OutputSlabs } from './output-slabs.ts';
import type { StreamCompressor } from './stream-compressor.ts';

// @types/node is pinned to the oldest Node line engines admits (20), which has no zstd: the built-in is
// reached through this narrow, optional view of node:zlib, so code that forgets to test for it fails the
// type check instead of throwing on Node 20. node:zlib loads at the first directory export (lazy-builtins.ts).
type ZlibWithZstd = typeof NodeZlib & {
  readonly createZstdCompress?: (options: { params: Record<number, number>; chunkSize: number }) => Transform;
  readonly constants: typeof NodeZlib.constants & { readonly ZSTD_c_compressionLevel?: number };
};
const zlib = (): ZlibWithZstd => nodeZlib() as ZlibWithZstd;

/**
 * zlib's output buffer for blocks of `blockBytes`: more than a block can compress to (zstd's bound for
 * 1 MiB is 1 MiB + 4 KiB), so a block is compressed in one trip to the pool. Each time the buffer fills,
 * the pool's thread stops until the event loop has taken the output and written the rest of the block
 * again, and the event loop is busy reading files in slices of a few milliseconds: with 256 KiB, a block of
 * incompressible content took four trips, and the archiver spent about 300 ms of a 500 ms export waiting
 * for the compressor (about 200 ms with this size; bench/RESULTS.md, the directory export's fifth pass).
 */
const outputChunkBytes = (blockBytes: number): number => Math.max(64 * 1024, blockBytes + blockBytes / 16);
/** Blocks written and not yet compressed before push() waits (backpressure): the pool's thread has the
 * next block while the event loop fills the one after. */
const ZSTD_BLOCKS_AHEAD = 2;

/** Slabs the output is copied into (output-slabs.ts), about one block's output each, from the pool every
 * transfer of the process shares (session/transfer-buffers.ts). */
const OUTPUT_SLAB_BYTES = 1024 * 1024;
/** The fields of node:zlib's stream that hold its output buffer and how much of it is written (lib/zlib.js;
 * its write completion, processCallback, uses them alike in Node 20 and 24): `_outBuffer`, `_outOffset`. */
interface ZlibOutputState {
  _outBuffer?: unknown;
  _outOffset?: unknown;
}

/**
 * Lets zlib write its next output over the output it just gave in `chunk`, once that is copied, instead of
 * taking a fresh buffer each time its 1 MiB output buffer is used up. zlib emits `chunk` from its write's
 * completion, after it moved `_outOffset` past it and before it starts its next write, which reads
 * `_outOffset` then: this stream flows into a `data` listener from the start and is never paused, so nothing
 * is ever buffered and every `data` event comes from there. Checked, not assumed: the offset moves back only
 * when `chunk` is exactly what the buffer holds before `_outOffset` and nothing is buffered; a Node whose
 * stream lacks these fields (or keeps them otherwise) gets fresh buffers, as before.
 */
export function rewindOutput(z: Transform, chunk: Buffer): void {
  const state = z as unknown as ZlibOutputState;
  const out = state._outBuffer;
  const at = state._outOffset;
  if (!Buffer.isBuffer(out) || typeof at !== 'number' || z.readableLength !== 0) return;
  if (chunk.buffer !== out.buffer || chunk.byteOffset + chunk.byteLength !== out.byteOffset + at) return;
  state._outOffset = at - chunk.byteLength;
}

/** Whether this Node has its own streaming zstd compressor (not 20, 22.0-22.14, 23.0-23.7). */
export function builtinZstdAvailable(): boolean {
  const z = zlib();
  return typeof z.createZstdCompress === 'function' && z.constants.ZSTD_c_compressionLevel !== undefined;
}

export function createBuiltinZstdCompressor(level: number, blockBytes: number): StreamCompressor {
  return new BuiltinZstdCompressor(level, blockBytes);
}

class BuiltinZstdCompressor implements StreamCompressor {
  readonly #blockBytes: number;
  readonly #z: Transform;
  /** The output, copied out of zlib's buffer as it comes (zlib then reuses that buffer: rewindOutput). */
  readonly #out = new OutputSlabs(transferBuffers, OUTPUT_SLAB_BYTES);
  #failure: Error | undefined;
  #finished = false;
  #released = false;
  #ended = false;
  /** Blocks written and not yet read by the native compressor. */
  #inFlight = 0;
  /** Blocks the compressor has read, for the next ones (at most ZSTD_BLOCKS_AHEAD + 1 exist at a time). */
  readonly #spare: Buffer[] = [];
  /** The one waiter: push() waiting for a block to be read, or end() for the last output. */
  #wake: (() => void) | undefined;
  /** The block being filled. Blocks come from the pool too, and go back to it at release(), for the next
   * transfer; a block of a size the pool does not hold (only tests choose one) is a buffer of its own, left to
   * the collector. */
  #block: Buffer;
  #used = 0;

  constructor(level: number, blockBytes: number) {
    const create = zlib().createZstdCompress;
    const levelParam = zlib().constants.ZSTD_c_compressionLevel;
    if (create === undefined || levelParam === undefined) throw new Error(`Node ${process.version} has no zlib.createZstdCompress`);
    this.#blockBytes = blockBytes;
    const z: Transform = create({ params: { [levelParam]: level }, chunkSize: Math.ceil(outputChunkBytes(blockBytes)) });
    this.#z = z;
    z.on('data', (chunk: Buffer) => {
      this.#out.copy(chunk);
      rewindOutput(z, chunk);
    });
    z.on('error', (e: Error) => {
      this.#failure = e;
      this.#rouse();
    });
    z.on('end', () => {
      this.#finished = true;
      this.#rouse();
    });
    this.#block = transferBuffers.allocate(blockBytes);
  }

  async push(data: Uint8Array): Promise<Uint8Array[]> {
    if (this.#ended) throw new Error('zstd compressor already ended');
    if (this.#failure !== undefined) throw this.#failure;
    const blockBytes = this.#blockBytes;
    for (let at = 0; at < data.byteLength; ) {
      const n = Math.min(blockBytes - this.#used, data.byteLength - at);
      this.#block.set(data.subarray(at, at + n), this.#used);
      this.#used += n;
      at += n;
      if (this.#used === blockBytes) this.#submit();
    }
    await this.#waitWhile(() => this.#inFlight > ZSTD_BLOCKS_AHEAD);
    return this.#take();
  }

  ready(): Promise<void> {
    return Promise.resolve();
  }

  space(): Uint8Array {
    if (this.#ended) throw new Error('zstd compressor already ended');
    return this.#block.subarray(this.#used);
  }

  async commit(n: number): Promise<Uint8Array[]> {
    if (this.#ended) throw new Error('zstd compressor already ended');
    if (this.#failure !== undefined) throw this.#failure;
    if (!Number.isInteger(n) || n < 0 || n > this.#blockBytes - this.#used)
      throw new RangeError(`commit(${n}) with ${this.#blockBytes - this.#used} bytes of space`);
    this.#used += n;
    if (this.#used === this.#blockBytes) this.#submit();
    await this.#waitWhile(() => this.#inFlight > ZSTD_BLOCKS_AHEAD);
    return this.#take();
  }

  async end(): Promise<Uint8Array[]> {
    if (this.#ended) return [];
    this.#ended = true;
    this.#submit();
    this.#z.end();
    await this.#waitWhile(() => !this.#finished);
    return this.#take();
  }

  release(): void {
    if (!this.#finished) throw new Error('zstd compressor released before its end');
    if (this.#released) return; // given back twice, a buffer would serve two exports at once
    this.#released = true;
    this.#out.release();
    for (const b of [this.#block, ...this.#spare.splice(0)]) transferBuffers.release(b);
  }

  destroy(): void {
    this.#ended = true;
    this.#failure ??= new Error('zstd compressor destroyed');
    this.#z.destroy();
  }

  #rouse(): void {
    const w = this.#wake;
    this.#wake = undefined;
    w?.();
  }

  #submit(): void {
    if (this.#used === 0) return;
    const full = this.#block;
    this.#inFlight++;
    // The callback runs once the native compressor has read the block (it copies what it keeps into its
    // own window), so the block can be filled again; after an error it runs too, and nothing reads it then.
    this.#z.write(full.subarray(0, this.#used), () => {
      this.#inFlight--;
      this.#spare.push(full);
      this.#rouse();
    });
    this.#block = this.#spare.pop() ?? transferBuffers.allocate(this.#blockBytes);
    this.#used = 0;
  }

  #take(): Uint8Array[] {
    if (this.#failure !== undefined) throw this.#failure;
    return this.#out.handOut();
  }

  async #waitWhile(busy: () => boolean): Promise<void> {
    while (busy() && this.#failure === undefined) await new Promise<void>((resolve) => (this.#wake = resolve));
  }
}
