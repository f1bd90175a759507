/**
 * Reads an opened file of a known size as chunks of at most 1 MiB, hashing as it goes, and refuses a file
 * that changes while it is read: a short read before the declared size (shrunk), a byte past it (grew), or
 * a different size or mtime at the end (rewritten in place). Memory stays one chunk per pending yield plus
 * one read ahead: the next chunk is read (in libuv's thread pool) while the current one is hashed and
 * sent, so the disk and the hash overlap instead of taking turns.
 */
import type { FileHandle } from 'node:fs/promises';
import { JackinError } from '../../errors.ts';
import { TransferHash } from '../../protocol/transfer-hash.ts';

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
  /** Compute the SHA-256 (default true). A tar entry needs only the change checks, not a digest. */
  readonly hash?: boolean;
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

  /** One pass over the file; throws E_CHANGED_WHILE_READING instead of finishing when the file changed.
   * `allocate` supplies the chunk buffers (default: a fresh buffer each). A sender that knows when the
   * socket is done with a chunk recycles buffers through it, so a long export makes no garbage for the GC
   * to find late (unreclaimed 1 MiB buffers were most of the capsule's peak RSS). */
  async *chunks(allocate?: (bytes: number) => Buffer): AsyncGenerator<ExportChunk, void, undefined> {
    if (this.#started) throw new Error('FdChunkReader.chunks() may run only once');
    this.#started = true;
    const { handle, size, shown } = this.#o;
    const hash = this.#o.hash === false ? undefined : new TransferHash();
    const alloc = allocate ?? ((n: number) => Buffer.allocUnsafe(n));
    const readAt = async (at: number): Promise<Buffer> => {
      const want = Math.min(EXPORT_CHUNK_BYTES, size - at);
      // A fresh (or recycled) buffer per chunk: the consumer may still hold the previous one in a queue.
      const buf = alloc(want);
      let filled = 0;
      while (filled < want) {
        const { bytesRead } = await handle.read(buf, filled, want - filled, at + filled);
        if (bytesRead === 0) throw changed(shown, `shrank to ${at + filled} of ${size} bytes`);
        filled += bytesRead;
      }
      return buf;
    };
    let offset = 0;
    let next: Promise<Buffer> | undefined = size > 0 ? readAt(0) : undefined;
    try {
      while (next !== undefined) {
        const buf = await next;
        const at = offset;
        offset += buf.length;
        next = offset < size ? readAt(offset) : undefined;
        // A consumer that stops early never awaits the read ahead; its failure must not go unhandled.
        next?.catch(() => undefined);
        yield { offset: at, bytes: buf };
        // Hashed after the consumer queued the chunk, in slices, so its socket flushes meanwhile.
        await hash?.update(buf);
      }
    } finally {
      // Leave no read running on the handle the caller is about to close.
      if (next !== undefined) await next.catch(() => undefined);
    }
    const probe = Buffer.alloc(1);
    const { bytesRead } = await handle.read(probe, 0, 1, size);
    if (bytesRead !== 0) throw changed(shown, `grew past ${size} bytes`);
    const st = await handle.stat({ bigint: true });
    if (st.size !== BigInt(size)) throw changed(shown, `size is now ${st.size}, was ${size}`);
    if (this.#o.mtimeNs !== undefined && st.mtimeNs !== this.#o.mtimeNs) throw changed(shown, 'modified');
    this.#digest = { bytes: size, sha256: hash === undefined ? Buffer.alloc(0) : await hash.digest() };
  }

  /** Byte count and SHA-256 of what was yielded; only after chunks() completed. */
  digest(): ExportDigest {
    if (this.#digest === undefined) throw new Error('FdChunkReader.digest() called before chunks() completed');
    if (this.#o.hash === false) throw new Error('FdChunkReader.digest(): created with hash: false');
    return this.#digest;
  }
}
