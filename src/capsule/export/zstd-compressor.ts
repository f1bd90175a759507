/**
 * A streaming zstd compressor behind one small interface, so the directory exporter does not care which
 * implementation is underneath.
 *
 * Choice (see shared docs/dependencies.md): Node 20 has no zstd in node:zlib. `@bokuweb/zstd-wasm@0.0.27`
 * is pure WASM with no install script, so it installs offline and in any container (zstd-napi needs
 * node-gyp at install; a `zstd` subprocess needs a binary the container may not have). Its API compresses
 * whole buffers only, so it streams by compressing fixed blocks as consecutive zstd frames: the format
 * allows any number of frames back to back and `zstd -d` / GNU `tar --zstd` decode them as one stream.
 * Memory is one block plus its compressed bound. When the project moves to Node >= 22.15,
 * `zlib.createZstdCompress` can replace this behind the same interface.
 */
import { createRequire } from 'node:module';
import type * as Zstd from '@bokuweb/zstd-wasm';

// Required, not imported: a bundle would hoist an import and load it for every capsule command (scripts/bundle.mjs).
// And only at the first directory export, not at every capsule's start.
let zstdModule: typeof Zstd | undefined;
const zstd = (): typeof Zstd => (zstdModule ??= createRequire(import.meta.url)('@bokuweb/zstd-wasm') as typeof Zstd);

/** Input bytes per frame. 2 MiB is several times level 1's window, so the ratio loses little against one
 * long frame, while memory stays small (4 MiB blocks measured more peak RSS). */
export const ZSTD_BLOCK_BYTES = 1024 * 1024;
/** Level 1, zstd's fast level: on a 256 MiB tree of source text and binaries the WASM build took 0.26 s at
 * level 1 against 0.55 s at level 3, for an archive 0.04% larger. Compression was the largest part of a
 * directory export. (Compressing on worker threads instead was measured too: 0.05 s faster but 40 MiB more
 * peak RSS per export, so blocks stay on the main thread.) */
export const ZSTD_LEVEL = 1;

export interface StreamCompressor {
  /** Feed bytes; returns compressed output ready to write (possibly none). */
  push(data: Uint8Array): Uint8Array[];
  /** Flush what is buffered; the compressor is done afterwards. */
  end(): Uint8Array[];
}

let ready: Promise<void> | undefined;

export async function createZstdCompressor(level: number = ZSTD_LEVEL, blockBytes: number = ZSTD_BLOCK_BYTES): Promise<StreamCompressor> {
  ready ??= zstd().init();
  await ready;
  const block = Buffer.allocUnsafe(blockBytes);
  let used = 0;
  let ended = false;
  const flush = (): Uint8Array[] => {
    if (used === 0) return [];
    const frame = zstd().compress(block.subarray(0, used), level);
    used = 0;
    return [frame];
  };
  return {
    push(data) {
      if (ended) throw new Error('zstd compressor already ended');
      const out: Uint8Array[] = [];
      let at = 0;
      while (at < data.byteLength) {
        const n = Math.min(blockBytes - used, data.byteLength - at);
        block.set(data.subarray(at, at + n), used);
        used += n;
        at += n;
        if (used === blockBytes) out.push(...flush());
      }
      return out;
    },
    end() {
      if (ended) return [];
      ended = true;
      return flush();
    },
  };
}
