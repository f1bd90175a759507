/**
 * Payload buffers for a frame decoder that receives bulk chunks (the host's export reader, the capsule's
 * stage receiver), handed back once a chunk is written and hashed: a 1 GiB transfer then reuses a few
 * buffers instead of leaving 1,024 to the garbage collector, which had let RSS and page faults grow with
 * the file (the capsule's peak during a 256 MiB stage was 109 MiB without one). The capsule's transfers
 * of every kind share one (capsule/session/transfer-buffers.ts).
 */
export class FramePool {
  readonly #free: Buffer[] = [];
  readonly #ours = new WeakSet<ArrayBufferLike>();
  readonly #frameBytes: number;
  readonly #keep: number;
  #made = 0;

  /** `frameBytes`: the payload cap of the chunk frame (the size of every pooled buffer); `keep`: free buffers kept. */
  constructor(frameBytes: number, keep: number) {
    this.#frameBytes = frameBytes;
    this.#keep = keep;
  }

  /**
   * Whether a payload of `n` bytes shares the pooled buffers. Only payloads near the full size do: a write
   * queue counts payload bytes, so a peer sending small chunks must not pin a whole 1 MiB buffer for each
   * (at most twice the bytes).
   */
  fits(n: number): boolean {
    return n >= this.#frameBytes / 2 && n <= this.#frameBytes;
  }

  allocate = (n: number): Buffer => {
    if (!this.fits(n)) return Buffer.allocUnsafe(n);
    let b = this.#free.pop();
    if (b === undefined) {
      b = Buffer.allocUnsafeSlow(this.#frameBytes);
      this.#ours.add(b.buffer);
      this.#made++;
    }
    return b.subarray(0, n);
  };

  /**
   * Give back the buffer under `bytes` (a view into a pooled payload); anything else is left to the GC. A
   * buffer given back twice is kept once: on the free list twice, it would be handed to two holders at once.
   */
  release(bytes: Uint8Array): void {
    if (!this.#ours.has(bytes.buffer) || this.#free.length >= this.#keep) return;
    for (const f of this.#free) if (f.buffer === bytes.buffer) return;
    this.#free.push(Buffer.from(bytes.buffer, 0, this.#frameBytes));
  }

  /** Free buffers held now. */
  get pooled(): number {
    return this.#free.length;
  }

  /** Buffers this pool has made, in all: what its holders have needed at once, at most, plus what it dropped. */
  get made(): number {
    return this.#made;
  }
}
