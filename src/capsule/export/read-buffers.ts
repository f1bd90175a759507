/**
 * Read buffers lent to tar-stream and handed back once the compressor has copied them, in power-of-two
 * classes. A fresh buffer per file left a 256 MiB tree's worth of garbage for the collector, which let the
 * capsule's peak RSS grow by about 40 MiB during a directory export. A chunk comes back only when it is
 * exactly the buffer lent (tar-stream pushes content buffers as they are); anything else is left to the GC.
 * One set serves every export of the process, so repeated exports reuse the same memory.
 */
class ReadBuffers {
  readonly #free = new Map<number, Buffer[]>();
  readonly #lent = new WeakMap<ArrayBufferLike, { size: number; length: number }>();
  #kept = 0;
  /** Free bytes kept over all classes: about what the pack may hold ahead of the compressor. */
  static readonly KEEP_BYTES = 3 * 1024 * 1024;

  take(length: number): Buffer {
    let size = 64 * 1024;
    while (size < length) size *= 2;
    let b = this.#free.get(size)?.pop();
    if (b !== undefined) this.#kept -= size;
    else b = Buffer.allocUnsafeSlow(size);
    this.#lent.set(b.buffer, { size, length });
    return b.subarray(0, length);
  }

  give(chunk: Uint8Array): void {
    const lent = this.#lent.get(chunk.buffer);
    if (lent === undefined || chunk.byteOffset !== 0 || chunk.byteLength !== lent.length) return;
    this.#lent.delete(chunk.buffer);
    if (this.#kept + lent.size > ReadBuffers.KEEP_BYTES) return;
    const list = this.#free.get(lent.size) ?? [];
    list.push(Buffer.from(chunk.buffer, 0, lent.size));
    this.#free.set(lent.size, list);
    this.#kept += lent.size;
  }
}

/** The process's one set (see above). */
export const readBuffers = new ReadBuffers();
