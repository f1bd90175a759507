/**
 * Buffers of one size kept for the next export, so an export after an export takes no new memory. A dead
 * 1 MiB buffer is freed only by a collection, and a capsule that made a few of them per export grew by
 * their sum before one came (bench/RESULTS.md, the seventh pass).
 */
export class BufferPool {
  readonly #free: Buffer[] = [];

  constructor(
    readonly bytes: number,
    /** The most kept free at once; more given back are left to the collector. */
    readonly cap: number,
  ) {}

  take(): Buffer {
    return this.#free.pop() ?? Buffer.allocUnsafeSlow(this.bytes);
  }

  /** Keeps `b` for a later take(); the caller must not use it again. */
  give(b: Buffer): void {
    if (b.byteLength === this.bytes && this.#free.length < this.cap) this.#free.push(b);
  }
}
