/** Synchronous work (listing, opening, reading) done between two turns of the event loop. */
const SLICE_MS = 4;

/**
 * The directory walk and the archiver use synchronous fs calls, in slices of SLICE_MS with a turn of the
 * event loop between them, so the agent's terminal traffic keeps flowing: each promise-based call costs
 * about 40 us of thread-pool round trip against about 5 us synchronously, and a tree has several calls per
 * entry.
 */
export class Slicer {
  #since = performance.now();
  async turn(): Promise<void> {
    if (performance.now() - this.#since < SLICE_MS) return;
    await new Promise<void>((resolve) => setImmediate(resolve));
    this.#since = performance.now();
  }
}
