/**
 * The SHA-256 of a transfer (FileExportEnd, ImageEnd), computed chunk by chunk in slices that give the event
 * loop a turn between them.
 *
 * Why: hashing a 1 MiB chunk takes about a millisecond of synchronous CPU, while a Unix socket's kernel
 * buffer holds about 200 KiB. With one whole-chunk update per frame, the sender's socket ran dry while it
 * hashed and the receiver's reads stopped while it hashed, so the two processes took turns instead of
 * overlapping (an export ran at a third of the disk's speed with both sides mostly idle). Slices of 64 KiB
 * let libuv flush or read the socket, and forward terminal traffic, between them.
 */
import type { Hash } from 'node:crypto';
import { nodeCrypto } from '../lazy-builtins.ts';

/** Bytes hashed between two turns of the event loop. */
export const TRANSFER_HASH_SLICE_BYTES = 64 * 1024;

const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

export class TransferHash {
  readonly #hash: Hash = nodeCrypto().createHash('sha256');
  #queue: Promise<void> = Promise.resolve();
  #bytes = 0;
  #done = false;

  /** Bytes hashed so far (chunks whose update() promise resolved). */
  get bytes(): number {
    return this.#bytes;
  }

  /**
   * Queue `chunk` (hashed after every chunk queued before it). Resolves once it is hashed; the caller must
   * not change `chunk` until then.
   */
  update(chunk: Uint8Array): Promise<void> {
    if (this.#done) return Promise.reject(new Error('TransferHash.update() after digest()'));
    const run = async (): Promise<void> => {
      for (let at = 0; at < chunk.byteLength; at += TRANSFER_HASH_SLICE_BYTES) {
        if (at > 0) await turn();
        this.#hash.update(chunk.subarray(at, at + TRANSFER_HASH_SLICE_BYTES));
      }
      this.#bytes += chunk.byteLength;
    };
    const next = this.#queue.then(run);
    this.#queue = next;
    return next;
  }

  /** Waits for every queued chunk, then returns the 32-byte digest. */
  async digest(): Promise<Buffer> {
    await this.#queue;
    this.#done = true;
    return this.#hash.digest();
  }
}
