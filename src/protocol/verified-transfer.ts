/**
 * The checks of every verified chunked transfer, whatever its destination: the host's export sink (a
 * temporary file), the capsule's file staging (a partial file) and image transfers (memory). The receiver
 * keeps its destination and publishes only once verify() has resolved; this class holds the rules and the
 * one error vocabulary:
 *
 * - chunks come at consecutive offsets from 0 (E_TRANSFER_OFFSET),
 * - each is 1 .. maxChunkBytes bytes (E_TRANSFER_CHUNK_SIZE),
 * - none ends past the declared size, and the end has every declared byte, or, for a transfer whose declared
 *   size was an upper bound, exactly the size settled afterwards (E_TRANSFER_SIZE_MISMATCH),
 * - the SHA-256 of the bytes in order equals the sender's (E_DIGEST_MISMATCH).
 *
 * Hashing is TransferHash's (sliced, so a socket is read or flushed between slices).
 */
import { JackinError } from '../errors.ts';
import { MAX_CHUNK_BYTES, SHA256_BYTES } from './limits.ts';
import { TransferHash } from './transfer-hash.ts';

export interface VerifiedTransferOptions {
  /** Declared size: exact, or an upper bound when settleSize() will give the exact one. */
  readonly size: number;
  /** Names the transfer at the start of every message (a file name, `image transfer 7`). */
  readonly label: string;
  /** Largest chunk; default MAX_CHUNK_BYTES. */
  readonly maxChunkBytes?: number;
  /** Said after a digest mismatch: what was (not) done and the fix, e.g. `nothing was saved, export it again`. */
  readonly hint?: string;
}

export class VerifiedTransfer {
  readonly #size: number;
  readonly #label: string;
  readonly #maxChunk: number;
  readonly #hint: string;
  readonly #hash = new TransferHash();
  #received = 0;
  #exact: number | undefined;

  /** Throws E_TRANSFER_SIZE_MISMATCH for a declared size that is no byte count. */
  constructor(o: VerifiedTransferOptions) {
    if (!Number.isSafeInteger(o.size) || o.size < 0) {
      throw new JackinError('E_TRANSFER_SIZE_MISMATCH', `${o.label} declares an invalid size ${o.size}`);
    }
    this.#size = o.size;
    this.#label = o.label;
    this.#maxChunk = o.maxChunkBytes ?? MAX_CHUNK_BYTES;
    this.#hint = o.hint === undefined ? '' : `; ${o.hint}`;
  }

  /** The declared size (exact, or the bound). */
  get size(): number {
    return this.#size;
  }

  /** Bytes accepted so far: the offset the next chunk must have. */
  get received(): number {
    return this.#received;
  }

  /**
   * Checks one chunk and queues it for hashing. Throws, synchronously, E_TRANSFER_OFFSET,
   * E_TRANSFER_CHUNK_SIZE or E_TRANSFER_SIZE_MISMATCH (the transfer is then over: the caller drops it).
   * Otherwise returns a promise that resolves once the chunk is hashed; `bytes` must not change until then.
   */
  accept(offset: number, bytes: Uint8Array): Promise<void> {
    const n = bytes.byteLength;
    if (offset !== this.#received) {
      throw new JackinError('E_TRANSFER_OFFSET', `${this.#label}: chunk at offset ${offset}, expected ${this.#received}`);
    }
    if (n < 1 || n > this.#maxChunk) {
      throw new JackinError('E_TRANSFER_CHUNK_SIZE', `${this.#label}: chunk of ${n} bytes; allowed 1..${this.#maxChunk}`);
    }
    if (this.#exact !== undefined || offset + n > this.#size) {
      throw new JackinError('E_TRANSFER_SIZE_MISMATCH', `${this.#label}: chunk ends at ${offset + n}, past the declared ${this.#exact ?? this.#size} bytes`);
    }
    this.#received += n;
    return this.#hash.update(bytes);
  }

  /**
   * The exact size of a transfer whose declared size was an upper bound, sent after its last chunk: it must
   * be the bytes received, within the bound, and said once. E_TRANSFER_SIZE_MISMATCH otherwise.
   */
  settleSize(exact: number): void {
    if (this.#exact !== undefined || exact !== this.#received || exact > this.#size) {
      throw new JackinError(
        'E_TRANSFER_SIZE_MISMATCH',
        `${this.#label}: the sender says ${exact} bytes, ${this.#received} arrived (declared at most ${this.#size})`,
      );
    }
    this.#exact = exact;
  }

  /**
   * The end check: every byte arrived (the declared size, or the settled one), then the SHA-256 of what
   * arrived is `claimed` (32 bytes, or hex). Resolves to the digest; rejects with E_TRANSFER_SIZE_MISMATCH or
   * E_DIGEST_MISMATCH. Call it once, after the last accept().
   */
  async verify(claimed: Uint8Array | string): Promise<Buffer> {
    const expected = this.#exact ?? this.#size;
    if (this.#received !== expected) {
      throw new JackinError('E_TRANSFER_SIZE_MISMATCH', `${this.#label} ended after ${this.#received} of ${expected} bytes`);
    }
    const digest = await this.#hash.digest();
    const matches =
      typeof claimed === 'string' ? claimed.toLowerCase() === digest.toString('hex') : claimed.byteLength === SHA256_BYTES && digest.equals(claimed);
    if (!matches) {
      const theirs = typeof claimed === 'string' ? claimed : Buffer.from(claimed.buffer, claimed.byteOffset, claimed.byteLength).toString('hex');
      throw new JackinError('E_DIGEST_MISMATCH', `${this.#label}: SHA-256 ${digest.toString('hex')} does not match the sender's ${theirs}${this.#hint}`);
    }
    return digest;
  }
}
