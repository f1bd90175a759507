/**
 * A producer's output copied into a few reused slabs and handed out as views, for the built-in zstd
 * compressor (zstd-builtin.ts): zlib's stream would otherwise hand out a fresh 1 MiB buffer for about every
 * MiB it writes, about 90 of them per export of the bench's tree, and those are what kept a Node 24
 * capsule's collector busy (bench/RESULTS.md, the seventh pass).
 *
 * A view handed out by handOut() stays valid until the next handOut() returns: the slabs behind the views of
 * one hand-out are reused only after the next hand-out, and never while one is being filled. The compressor
 * hands out at the end of each call (push, commit, end), so what a call returned stays valid until the
 * caller's next call returns; callers copy what they keep longer (stream-compressor.ts).
 */
import type { FramePool } from '../../protocol/frame-pool.ts';

export class OutputSlabs {
  readonly #pool: FramePool;
  readonly #slabBytes: number;
  #filling: Buffer | undefined;
  #at = 0;
  /** Views copied since the last hand-out, and the slabs they are in. */
  #ready: Uint8Array[] = [];
  #holding = new Set<Buffer>();
  /** The slabs behind the views of the last hand-out. */
  #lent = new Set<Buffer>();

  /** Slabs of `slabBytes` (the pool's frame size) come from `pool` and go back to it once free. */
  constructor(pool: FramePool, slabBytes: number) {
    this.#pool = pool;
    this.#slabBytes = slabBytes;
  }

  /** Copies `bytes` in (across slabs when it does not fit the rest of one); `bytes` may be reused at once. */
  copy(bytes: Uint8Array): void {
    const slabBytes = this.#slabBytes;
    for (let from = 0; from < bytes.byteLength; ) {
      if (this.#filling === undefined || this.#at === slabBytes) this.#nextSlab();
      const slab = this.#filling as Buffer;
      const n = Math.min(bytes.byteLength - from, slabBytes - this.#at);
      slab.set(bytes.subarray(from, from + n), this.#at);
      this.#ready.push(slab.subarray(this.#at, this.#at + n));
      this.#holding.add(slab);
      this.#at += n;
      from += n;
    }
  }

  /** The views copied since the last hand-out, in order; the slabs of the hand-out before are free again. */
  handOut(): Uint8Array[] {
    const views = this.#ready;
    this.#ready = [];
    const before = this.#lent;
    this.#lent = this.#holding;
    for (const slab of before) if (slab !== this.#filling && !this.#lent.has(slab)) this.#pool.release(slab);
    before.clear();
    this.#holding = before;
    return views;
  }

  /** Every slab back to the pool, once nothing handed out is used any more; copy() starts afresh after it. */
  release(): void {
    const all = new Set([...this.#holding, ...this.#lent]);
    if (this.#filling !== undefined) all.add(this.#filling);
    for (const slab of all) this.#pool.release(slab);
    this.#filling = undefined;
    this.#ready = [];
    this.#holding.clear();
    this.#lent.clear();
  }

  #nextSlab(): void {
    const full = this.#filling;
    // A slab that filled up after its views went out in an earlier hand-out than the last is free already.
    if (full !== undefined && !this.#holding.has(full) && !this.#lent.has(full)) this.#pool.release(full);
    this.#filling = this.#pool.allocate(this.#slabBytes);
    this.#at = 0;
  }
}
