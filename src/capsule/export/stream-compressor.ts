/** What directory export needs of a streaming compressor (zstd-compressor.ts picks the implementation). */
export interface StreamCompressor {
  /** Feed bytes (copied: `data` may be reused once this returns); resolves, once the compressor can take
   * more, with the compressed output ready so far (possibly none). */
  push(data: Uint8Array): Promise<Uint8Array[]>;
  /** Compress what is buffered and end the stream; resolves with the rest of the output. */
  end(): Promise<Uint8Array[]>;
  /** Drop everything (after a failure elsewhere); later calls reject. */
  destroy(): void;
}
