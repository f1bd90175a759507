/**
 * What directory export needs of a streaming compressor (zstd-compressor.ts picks the implementation).
 * The output a call resolves with stays valid until the caller's next call resolves: the built-in compressor
 * reuses the memory behind it (output-slabs.ts), so a caller copies what it keeps longer.
 */
export interface StreamCompressor {
  /** Feed bytes (copied: `data` may be reused once this returns); resolves, once the compressor can take
   * more, with the compressed output ready so far (possibly none). */
  push(data: Uint8Array): Promise<Uint8Array[]>;
  /** Resolves once space() may be called (the WebAssembly one compiles its module first). */
  ready(): Promise<void>;
  /** The unfilled rest of the block being gathered (never empty), for the caller to fill in place (read a
   * file straight into it) and then commit(); valid until the next call. */
  space(): Uint8Array;
  /** The first `n` bytes of space() were filled: push() of them without the copy. */
  commit(n: number): Promise<Uint8Array[]>;
  /** Compress what is buffered and end the stream; resolves with the rest of the output. */
  end(): Promise<Uint8Array[]>;
  /** After end() resolved and its output was used: the compressor's memory goes back to be reused by the
   * next one. Nothing may be called after it. */
  release(): void;
  /** Drop everything (after a failure elsewhere); later calls reject. */
  destroy(): void;
}
