/**
 * A streaming zstd compressor behind one small interface, so the directory exporter does not care which
 * implementation is underneath. Picked at each export (the first loads node:zlib) by what the running Node has:
 *
 * - Node's own `zlib.createZstdCompress` (zstd-builtin.ts) wherever it exists (Node 22.15+, 23.8+, 24): on
 *   the thread pool, one frame, about half the CPU of the other.
 * - `@bokuweb/zstd-wasm` (zstd-wasm.ts) on the Nodes `engines` admits without it (20, 22.0-22.14,
 *   23.0-23.7): Node 20 stays admitted because it is what many machines ship, this project's among them.
 *
 * Both make a stream `zstd -d` and GNU `tar --zstd` read (archive-bound.ts bounds either).
 */
import { builtinZstdAvailable, createBuiltinZstdCompressor } from './zstd-builtin.ts';
import { createWasmZstdCompressor } from './zstd-wasm.ts';
import type { StreamCompressor } from './stream-compressor.ts';

/** Level 1, zstd's fast level: on a 256 MiB tree of source text and binaries, level 3 took about twice the
 * time for an archive 0.04% smaller. Compression was the largest part of a directory export. */
export const ZSTD_LEVEL = 1;
/** Input is gathered into blocks of this size (file content read straight into them, headers copied in):
 * each one write to the built-in compressor (each write is a trip to the thread pool, and a header is 512
 * bytes), or one to eight frames of the WebAssembly one (stored-runs.ts). */
export const ZSTD_BLOCK_BYTES = 1024 * 1024;

export type { StreamCompressor } from './stream-compressor.ts';

export type ZstdImplementation = 'node:zlib' | 'zstd-wasm';

/** The implementation directory export uses on this Node (asked at the first export, not at start: it loads
 * node:zlib). */
export function zstdImplementation(): ZstdImplementation {
  return builtinZstdAvailable() ? 'node:zlib' : 'zstd-wasm';
}

export const ZSTD_COMPRESSORS: Readonly<Record<ZstdImplementation, (level: number, blockBytes: number) => StreamCompressor>> = {
  'node:zlib': createBuiltinZstdCompressor,
  'zstd-wasm': createWasmZstdCompressor,
};

export function createZstdCompressor(level: number = ZSTD_LEVEL, blockBytes: number = ZSTD_BLOCK_BYTES): StreamCompressor {
  return ZSTD_COMPRESSORS[zstdImplementation()](level, blockBytes);
}
