/**
 * A streaming zstd compressor behind one small interface, so the directory exporter does not care which
 * implementation is underneath.
 *
 * Choice: Node's own `zlib.createZstdCompress` (every Node `engines` admits has it: 22.15 and later). It
 * compresses on libuv's thread pool, so the event loop goes on reading and packing the tree (and serving
 * the session) while a block is compressed, and the archive is one zstd frame. Measured in one process on
 * the bench's 256 MiB tree as a tar stream in memory, level 1, best of 5 (CPU of the whole process, the
 * pool's thread included): this stream in 1 MiB writes 0.12 s on Node 24.22.3 (0.13 on 22.23.5);
 * `zstdCompressSync` on 1 MiB frames 0.15 s; `@bokuweb/zstd-wasm@0.0.27` (the WebAssembly package used
 * while Node 20, which has no zstd, was supported) 0.22 s (0.32 on 22), all on the main thread but the
 * first; GNU `zstd -3` about 0.3 s. Writes of tar-stream's own chunks (a 512-byte header per entry, each
 * write a trip to the pool) took about a third more CPU than copying them into 1 MiB blocks first; output
 * chunks of 256 KiB rather than zlib's 16 KiB make a quarter of the sink calls (each a write to the host).
 */
import { constants, createZstdCompress, type ZstdCompress } from 'node:zlib';

/** Level 1, zstd's fast level: on a 256 MiB tree of source text and binaries, level 3 took about twice the
 * time for an archive 0.04% smaller. Compression was the largest part of a directory export. */
export const ZSTD_LEVEL = 1;
/** Bytes of compressed output per chunk handed to the sink. */
export const ZSTD_OUTPUT_CHUNK_BYTES = 256 * 1024;
/** Input is copied into blocks of this size, each one write to the compressor: tar-stream's output comes
 * in many small chunks (a 512-byte header per entry), and each write is a trip to the thread pool. */
export const ZSTD_BLOCK_BYTES = 1024 * 1024;
/** Blocks written and not yet compressed before push() waits (backpressure): the pool's thread has the
 * next block while the event loop fills the one after. */
export const ZSTD_BLOCKS_AHEAD = 2;

export interface StreamCompressor {
  /** Feed bytes (copied: `data` may be reused once this returns); resolves, once the compressor can take
   * more, with the compressed output ready so far (possibly none). */
  push(data: Uint8Array): Promise<Uint8Array[]>;
  /** Compress what is buffered and end the frame; resolves with the rest of the output. */
  end(): Promise<Uint8Array[]>;
  /** Drop everything (after a failure elsewhere); later calls reject. */
  destroy(): void;
}

export function createZstdCompressor(level: number = ZSTD_LEVEL, blockBytes: number = ZSTD_BLOCK_BYTES): StreamCompressor {
  const z: ZstdCompress = createZstdCompress({ params: { [constants.ZSTD_c_compressionLevel]: level }, chunkSize: ZSTD_OUTPUT_CHUNK_BYTES });
  let ready: Uint8Array[] = [];
  let failure: Error | undefined;
  let finished = false;
  /** Blocks written and not yet read by the native compressor. */
  let inFlight = 0;
  /** Blocks the compressor has read, for the next ones (at most ZSTD_BLOCKS_AHEAD + 1 exist at a time). */
  const spare: Buffer[] = [];
  /** The one waiter: push() waiting for a block to be read, or end() for the last output. */
  let wake: (() => void) | undefined;
  const rouse = (): void => {
    const w = wake;
    wake = undefined;
    w?.();
  };
  z.on('data', (chunk: Buffer) => ready.push(chunk));
  z.on('error', (e: Error) => {
    failure = e;
    rouse();
  });
  z.on('end', () => {
    finished = true;
    rouse();
  });
  let block: Buffer = Buffer.allocUnsafeSlow(blockBytes);
  let used = 0;
  const submit = (): void => {
    if (used === 0) return;
    const full = block;
    inFlight++;
    // The callback runs once the native compressor has read the block (it copies what it keeps into its
    // own window), so the block can be filled again; after an error it runs too, and nothing reads it then.
    z.write(full.subarray(0, used), () => {
      inFlight--;
      spare.push(full);
      rouse();
    });
    block = spare.pop() ?? Buffer.allocUnsafeSlow(blockBytes);
    used = 0;
  };
  const take = (): Uint8Array[] => {
    if (failure !== undefined) throw failure;
    const out = ready;
    ready = [];
    return out;
  };
  const waitWhile = async (busy: () => boolean): Promise<void> => {
    while (busy() && failure === undefined) await new Promise<void>((resolve) => (wake = resolve));
  };
  let ended = false;
  return {
    async push(data) {
      if (ended) throw new Error('zstd compressor already ended');
      if (failure !== undefined) throw failure;
      for (let at = 0; at < data.byteLength; ) {
        const n = Math.min(blockBytes - used, data.byteLength - at);
        block.set(data.subarray(at, at + n), used);
        used += n;
        at += n;
        if (used === blockBytes) submit();
      }
      await waitWhile(() => inFlight > ZSTD_BLOCKS_AHEAD);
      return take();
    },
    async end() {
      if (ended) return [];
      ended = true;
      submit();
      z.end();
      await waitWhile(() => !finished);
      return take();
    },
    destroy() {
      ended = true;
      failure ??= new Error('zstd compressor destroyed');
      z.destroy();
    },
  };
}
