/** How a signal interrupts a command that transfers files (jackin export, jackin stage). */
import { constants } from 'node:os';

/** The signals that interrupt a transfer: Ctrl+C, a supervisor's stop, a closed terminal. */
const INTERRUPTING_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

export interface Interruption {
  /** Aborted by the first signal: the command removes what it started (a partial file) and ends. */
  readonly signal: AbortSignal;
  /** null until a signal came; then 128 + its number (130 for Ctrl+C, 143 for SIGTERM), as a shell reports it. */
  status(): number | null;
  /** Gives the signals back their default action. */
  dispose(): void;
}

/**
 * Turns SIGINT, SIGTERM and SIGHUP into an abort while a command transfers files (jackin export, jackin
 * stage). A second signal, for a clean-up that takes too long, exits at once with the same status; a
 * partial file it leaves is hidden and the next transfer removes it.
 */
export function interruptOnSignals(): Interruption {
  const stop = new AbortController();
  let status: number | null = null;
  const onSignal = (sig: NodeJS.Signals): void => {
    if (status !== null) process.exit(status);
    status = 128 + constants.signals[sig];
    stop.abort();
  };
  for (const s of INTERRUPTING_SIGNALS) process.on(s, onSignal);
  return {
    signal: stop.signal,
    status: () => status,
    dispose: () => {
      for (const s of INTERRUPTING_SIGNALS) process.off(s, onSignal);
    },
  };
}
