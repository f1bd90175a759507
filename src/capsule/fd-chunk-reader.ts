/**
 * Reads an opened file of a known size as chunks of at most 1 MiB, hashing as it goes, and refuses a file
 * that changes while it is read: a short read before the declared size (shrunk), a byte past it (grew), or
 * a different size or mtime at the end (rewritten in place). Memory stays one chunk per pending yield.
 */
import { createHash } from 'node:crypto';
import type { FileHandle } from 'node:fs/promises';
import { JackinError } from '../errors.ts';

/** Largest chunk yielded: the data part of one FileExportChunk frame (protocol.md section 5). */
export const EXPORT_CHUNK_BYTES = 1024 * 1024;

export interface ExportChunk {
  readonly offset: number;
  readonly bytes: Buffer;
}

export interface ExportDigest {
  readonly bytes: number;
  readonly sha256: Buffer;
}

export interface FdChunkReaderOptions {
  readonly handle: FileHandle;
  readonly size: number;
  /** mtime (ns) when the size was taken; undefined skips the mtime check (a file we wrote ourselves). */
  readonly mtimeNs: bigint | undefined;
  /** The path as the requester wrote it, for messages. */
  readonly shown: string;
}

function changed(shown: string, what: string): JackinError {
  return new JackinError('E_CHANGED_WHILE_READING', `${shown} changed while it was exported (${what}); export it again once it stops changing`);
}

export class FdChunkReader {
  readonly #o: FdChunkReaderOptions;
  #started = false;
  #digest: ExportDigest | undefined;

  constructor(options: FdChunkReaderOptions) {
    this.#o = options;
  }

  /** One pass over the file; throws E_CHANGED_WHILE_READING instead of finishing when the file changed. */
  async *chunks(): AsyncGenerator<ExportChunk, void, undefined> {
    if (this.#started) throw new Error('FdChunkReader.chunks() may run only once');
    this.#started = true;
    const { handle, size, shown } = this.#o;
    const hash = createHash('sha256');
    let offset = 0;
    while (offset < size) {
      const want = Math.min(EXPORT_CHUNK_BYTES, size - offset);
      // A fresh buffer per chunk: the consumer may still hold the previous one in a frame queue.
      const buf = Buffer.allocUnsafe(want);
      let filled = 0;
      while (filled < want) {
        const { bytesRead } = await handle.read(buf, filled, want - filled, offset + filled);
        if (bytesRead === 0) throw changed(shown, `shrank to ${offset + filled} of ${size} bytes`);
        filled += bytesRead;
      }
      hash.update(buf);
      yield { offset, bytes: buf };
      offset += want;
    }
    const probe = Buffer.alloc(1);
    const { bytesRead } = await handle.read(probe, 0, 1, size);
    if (bytesRead !== 0) throw changed(shown, `grew past ${size} bytes`);
    const st = await handle.stat({ bigint: true });
    if (st.size !== BigInt(size)) throw changed(shown, `size is now ${st.size}, was ${size}`);
    if (this.#o.mtimeNs !== undefined && st.mtimeNs !== this.#o.mtimeNs) throw changed(shown, 'modified');
    this.#digest = { bytes: size, sha256: hash.digest() };
  }

  /** Byte count and SHA-256 of what was yielded; only after chunks() completed. */
  digest(): ExportDigest {
    if (this.#digest === undefined) throw new Error('FdChunkReader.digest() called before chunks() completed');
    return this.#digest;
  }
}
