/**
 * Directory export's zstd where the running Node has none in node:zlib (Node 20, 22.0-22.14, 23.0-23.7),
 * behind the interface of zstd-compressor.ts: `@bokuweb/zstd-wasm@0.0.27`, pure WebAssembly with no install
 * script, so it installs offline and in any container (zstd-napi needs node-gyp at install; a `zstd`
 * subprocess needs a binary the container may not have). It compresses whole buffers only, so it streams by
 * compressing fixed blocks as consecutive zstd frames: the format allows any number of frames back to back
 * and `zstd -d` / GNU `tar --zstd` decode them as one stream. Memory is one block plus its compressed bound.
 * It runs on the main thread: 0.22 s of CPU for the bench's 256 MiB tree at level 1 on Node 24 against the
 * built-in's 0.12 s (zstd-builtin.ts). It goes once the oldest Node `engines` admits has zstd built in.
 */
import { createRequire } from 'node:module';
import type * as Zstd from '@bokuweb/zstd-wasm';
import type { StreamCompressor } from './stream-compressor.ts';

// Required, not imported: a bundle would hoist an import and load it for every capsule command (scripts/bundle.mjs).
// And only at the first directory export on a Node that needs it, not at every capsule's start.
let zstdModule: typeof Zstd | undefined;
const zstd = (): typeof Zstd => (zstdModule ??= createRequire(import.meta.url)('@bokuweb/zstd-wasm') as typeof Zstd);
let initialized: Promise<void> | undefined;

export function createWasmZstdCompressor(level: number, blockBytes: number): StreamCompressor {
  initialized ??= zstd().init();
  let ready = false;
  const block = Buffer.allocUnsafe(blockBytes);
  let used = 0;
  let frames = 0;
  let ended = false;
  let destroyed = false;
  const flush = (): Uint8Array[] => {
    if (used === 0) return [];
    const frame = zstd().compress(block.subarray(0, used), level); // a copy out of the WebAssembly memory
    used = 0;
    frames++;
    return [frame];
  };
  const take = (data: Uint8Array): Uint8Array[] => {
    const out: Uint8Array[] = [];
    for (let at = 0; at < data.byteLength; ) {
      const n = Math.min(blockBytes - used, data.byteLength - at);
      block.set(data.subarray(at, at + n), used);
      used += n;
      at += n;
      if (used === blockBytes) out.push(...flush());
    }
    return out;
  };
  const whenReady = async (): Promise<void> => {
    await initialized;
    ready = true;
    if (destroyed) throw new Error('zstd compressor destroyed');
  };
  return {
    async push(data) {
      if (ended) throw new Error(destroyed ? 'zstd compressor destroyed' : 'zstd compressor already ended');
      // Copied before the first wait: the caller may reuse `data` as soon as push() returns its promise.
      if (!ready) {
        const copy = Buffer.from(data);
        await whenReady();
        return take(copy);
      }
      return take(data);
    },
    async end() {
      if (ended) return [];
      ended = true;
      await whenReady();
      const out = flush();
      // Nothing pushed is still one (empty) frame, a valid zstd stream, as the built-in makes.
      if (frames === 0) out.push(zstd().compress(Buffer.alloc(0), level));
      return out;
    },
    destroy() {
      ended = true;
      destroyed = true;
    },
  };
}
