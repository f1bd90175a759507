/**
 * Directory export's zstd where the running Node has none in node:zlib (Node 20, 22.0-22.14, 23.0-23.7),
 * behind the interface of zstd-compressor.ts: `@bokuweb/zstd-wasm@0.0.27`, pure WebAssembly with no install
 * script, so it installs offline and in any container (zstd-napi needs node-gyp at install; a `zstd`
 * subprocess needs a binary the container may not have). It compresses whole buffers only, so it streams by
 * compressing fixed blocks as consecutive zstd frames: the format allows any number of frames back to back
 * and `zstd -d` / GNU `tar --zstd` decode them as one stream. Memory is one block plus its compressed bound.
 * It runs on the main thread: 0.22 s of CPU for the bench's 256 MiB tree at level 1 on Node 24 against the
 * built-in's 0.12 s (zstd-builtin.ts). So content that looks random is stored in raw blocks instead
 * (stored-runs.ts): a frame per run of it, and the rest compressed as before. The built-in does not do
 * this: it compresses off the main thread, where telling content apart would be added work on a busy
 * thread to save work on an idle one. It goes once the oldest Node `engines` admits has zstd built in.
 */
import { createRequire } from 'node:module';
import type * as Zstd from '@bokuweb/zstd-wasm';
import type { StreamCompressor } from './stream-compressor.ts';
import { splitRuns, storedFrame } from './stored-runs.ts';

// Required, not imported: a bundle would hoist an import and load it for every capsule command (scripts/bundle.mjs).
// And only at the first directory export on a Node that needs it, not at every capsule's start.
let zstdModule: typeof Zstd | undefined;
const zstd = (): typeof Zstd => (zstdModule ??= createRequire(import.meta.url)('@bokuweb/zstd-wasm') as typeof Zstd);
let initialized: Promise<void> | undefined;
const NO_DICTIONARY = new Uint8Array(0);

export function createWasmZstdCompressor(level: number, blockBytes: number): StreamCompressor {
  return new WasmZstdCompressor(level, blockBytes);
}

class WasmZstdCompressor implements StreamCompressor {
  readonly #level: number;
  readonly #blockBytes: number;
  readonly #block: Buffer;
  #ready = false;
  #used = 0;
  #frames = 0;
  #ended = false;
  #destroyed = false;
  /** The compression context (a pointer into the WebAssembly memory), made at the first frame. */
  #cctx: number | undefined;

  constructor(level: number, blockBytes: number) {
    initialized ??= zstd().init();
    this.#level = level;
    this.#blockBytes = blockBytes;
    this.#block = Buffer.allocUnsafe(blockBytes);
  }

  async push(data: Uint8Array): Promise<Uint8Array[]> {
    if (this.#ended) throw new Error(this.#destroyed ? 'zstd compressor destroyed' : 'zstd compressor already ended');
    // Copied before the first wait: the caller may reuse `data` as soon as push() returns its promise.
    if (!this.#ready) {
      const copy = Buffer.from(data);
      await this.#whenReady();
      return this.#take(copy);
    }
    return this.#take(data);
  }

  async ready(): Promise<void> {
    await this.#whenReady();
  }

  space(): Uint8Array {
    if (this.#ended) throw new Error(this.#destroyed ? 'zstd compressor destroyed' : 'zstd compressor already ended');
    return this.#block.subarray(this.#used);
  }

  async commit(n: number): Promise<Uint8Array[]> {
    if (this.#ended) throw new Error(this.#destroyed ? 'zstd compressor destroyed' : 'zstd compressor already ended');
    if (!Number.isInteger(n) || n < 0 || n > this.#blockBytes - this.#used)
      throw new RangeError(`commit(${n}) with ${this.#blockBytes - this.#used} bytes of space`);
    this.#used += n;
    if (!this.#ready) await this.#whenReady();
    return this.#used === this.#blockBytes ? this.#flush() : [];
  }

  async end(): Promise<Uint8Array[]> {
    if (this.#ended) return [];
    this.#ended = true;
    await this.#whenReady();
    try {
      const out = this.#flush();
      // Nothing pushed is still one (empty) frame, a valid zstd stream, as the built-in makes.
      if (this.#frames === 0) out.push(zstd().compress(Buffer.alloc(0), this.#level));
      return out;
    } finally {
      this.#release();
    }
  }

  release(): void {
    // Its block and the WebAssembly memory belong to this compressor and go with it.
  }

  destroy(): void {
    this.#ended = true;
    this.#destroyed = true;
    this.#release();
  }

  #flush(): Uint8Array[] {
    if (this.#used === 0) return [];
    const block = this.#block.subarray(0, this.#used);
    this.#used = 0;
    // One compression context for every frame of the stream: ZSTD_compress would make and drop one per block.
    // An empty dictionary is no dictionary; the frames are ZSTD_compress's.
    this.#cctx ??= zstd().createCCtx();
    const frames: Uint8Array[] = [];
    // A frame per run: stored content (stored-runs.ts) is copied as it is, the rest compressed.
    for (const run of splitRuns(block)) {
      const content = block.subarray(run.start, run.end);
      frames.push(run.stored ? storedFrame(content) : zstd().compressUsingDict(this.#cctx, content, NO_DICTIONARY, this.#level)); // each a copy out of the block
      this.#frames++;
    }
    return frames;
  }

  #release(): void {
    if (this.#cctx === undefined) return;
    zstd().freeCCtx(this.#cctx);
    this.#cctx = undefined;
  }

  #take(data: Uint8Array): Uint8Array[] {
    const out: Uint8Array[] = [];
    const blockBytes = this.#blockBytes;
    for (let at = 0; at < data.byteLength; ) {
      const n = Math.min(blockBytes - this.#used, data.byteLength - at);
      this.#block.set(data.subarray(at, at + n), this.#used);
      this.#used += n;
      at += n;
      if (this.#used === blockBytes) out.push(...this.#flush());
    }
    return out;
  }

  async #whenReady(): Promise<void> {
    await initialized;
    this.#ready = true;
    if (this.#destroyed) throw new Error('zstd compressor destroyed');
  }
}
