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
export function progressWatchdog(min: MinProgress, stalled: (min: MinProgress) => void): { add(n: number): void; end(): void } {
  let timer: NodeJS.Timeout | undefined;
  let inWindow = 0;
  let ended = false;
  const arm = (): void => {
    timer = setTimeout(() => {
      if (ended) return;
      if (inWindow < min.bytes) return stalled(min);
      inWindow = 0;
      arm();
    }, min.windowMs);
  };
  return {
    add(n) {
      if (ended) return;
      inWindow += n;
      if (timer === undefined) arm();
    },
    end() {
      ended = true;
      clearTimeout(timer);
    },
  };
}
