/** A minimum-progress rule for transfers: how export-client.ts notices a capsule that trickles bytes. */

export interface MinProgress {
  readonly bytes: number;
  readonly windowMs: number;
}

/**
 * Counts bytes from the first one on, and calls `stalled` when a full window passes with fewer than
 * `min.bytes`. Until the first byte the connection's idle timeout applies instead (a directory is listed
 * before the reply).
 */
export class ProgressWatchdog {
  readonly #min: MinProgress;
  readonly #stalled: (min: MinProgress) => void;
  #timer: NodeJS.Timeout | undefined;
  #inWindow = 0;
  #ended = false;

  constructor(min: MinProgress, stalled: (min: MinProgress) => void) {
    this.#min = min;
    this.#stalled = stalled;
  }

  add(n: number): void {
    if (this.#ended) return;
    this.#inWindow += n;
    if (this.#timer === undefined) this.#arm();
  }

  end(): void {
    this.#ended = true;
    clearTimeout(this.#timer);
  }

  #arm(): void {
    this.#timer = setTimeout(() => {
      if (this.#ended) return;
      if (this.#inWindow < this.#min.bytes) return this.#stalled(this.#min);
      this.#inWindow = 0;
      this.#arm();
    }, this.#min.windowMs);
  }
}
