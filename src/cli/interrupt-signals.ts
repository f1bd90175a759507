/** How a signal interrupts a command that transfers files (jackin export, jackin stage). */
import { constants } from 'node:os';
import type { Disposable } from '../disposable.ts';

/** The signals that interrupt a transfer: Ctrl+C, a supervisor's stop, a closed terminal. */
const INTERRUPTING_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

/**
 * Turns SIGINT, SIGTERM and SIGHUP into an abort while a command transfers files (jackin export, jackin
 * stage). A second signal, for a clean-up that takes too long, exits at once with the same status; a
 * partial file it leaves is hidden and the next transfer removes it.
 */
export class Interruption implements Disposable {
  readonly #stop = new AbortController();
  #status: number | null = null;
  readonly #onSignal = (sig: NodeJS.Signals): void => {
    if (this.#status !== null) process.exit(this.#status);
    this.#status = 128 + constants.signals[sig];
    this.#stop.abort();
  };

  constructor() {
    for (const s of INTERRUPTING_SIGNALS) process.on(s, this.#onSignal);
  }

  /** Aborted by the first signal: the command removes what it started (a partial file) and ends. */
  get signal(): AbortSignal {
    return this.#stop.signal;
  }

  /** null until a signal came; then 128 + its number (130 for Ctrl+C, 143 for SIGTERM), as a shell reports it. */
  status(): number | null {
    return this.#status;
  }

  /** Gives the signals back their default action. */
  dispose(): void {
    for (const s of INTERRUPTING_SIGNALS) process.off(s, this.#onSignal);
  }
}

/** An Interruption listening from now on; the caller disposes it when the transfer ends. */
export function interruptOnSignals(): Interruption {
  return new Interruption();
}
