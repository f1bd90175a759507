/**
 * Payload buffers for a frame decoder that receives bulk chunks (the host's export reader, the capsule's
 * stage receiver), handed back once a chunk is written and hashed: a 1 GiB transfer then reuses a few
 * buffers instead of leaving 1,024 to the garbage collector, which had let RSS and page faults grow with
 * the file (the capsule's peak during a 256 MiB stage was 109 MiB without one).
 */
export class FramePool {
  readonly #free: Buffer[] = [];
  readonly #ours = new WeakSet<ArrayBufferLike>();
  readonly #frameBytes: number;
  readonly #keep: number;

  /** `frameBytes`: the payload cap of the chunk frame (the size of every pooled buffer); `keep`: free buffers kept. */
  constructor(frameBytes: number, keep: number) {
    this.#frameBytes = frameBytes;
    this.#keep = keep;
  }

  allocate = (n: number): Buffer => {
    // Only payloads near the full size share the pooled buffers: a write queue counts payload bytes, so a
    // peer sending small chunks must not pin a whole 1 MiB buffer for each (at most twice the bytes).
    if (n < this.#frameBytes / 2 || n > this.#frameBytes) return Buffer.allocUnsafe(n);
    let b = this.#free.pop();
    if (b === undefined) {
      b = Buffer.allocUnsafeSlow(this.#frameBytes);
      this.#ours.add(b.buffer);
    }
    return b.subarray(0, n);
  };

  /** Give back the buffer under `bytes` (a view into a pooled payload); anything else is left to the GC. */
  release(bytes: Uint8Array): void {
    if (!this.#ours.has(bytes.buffer) || this.#free.length >= this.#keep) return;
    this.#free.push(Buffer.from(bytes.buffer, 0, this.#frameBytes));
  }

  get pooled(): number {
    return this.#free.length;
  }
}
