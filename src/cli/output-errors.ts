/** How both CLIs end when their output cannot be written: a reader that went away, a full disk. */
import { describeError, errnoOf } from '../errors.ts';

/** Exit status when the reader of the output went away (`jackin log | head -1`): 128 + SIGPIPE, as a shell reports a program SIGPIPE ended. */
const CLOSED_PIPE_EXIT_STATUS = 141;

/**
 * Output that cannot be written ends the program plainly, not with Node's stack trace of an unhandled
 * 'error': EPIPE on stdout or stderr (the reader closed early) quietly with CLOSED_PIPE_EXIT_STATUS, as
 * SIGPIPE ends a C program; any other error on stdout (ENOSPC from `> /dev/full`, EIO) with one line on
 * stderr and status 1. Returns what removes the watch, for commands that own a terminal or a relay and
 * handle its errors themselves.
 */
export function endOnOutputError(bin: string): () => void {
  const onStdout = (e: unknown): void => {
    if (errnoOf(e) === 'EPIPE') process.exit(CLOSED_PIPE_EXIT_STATUS);
    process.stderr.write(`${bin}: cannot write the output: ${describeError(e)}\n`, () => process.exit(1));
  };
  const onStderr = (e: unknown): void => process.exit(errnoOf(e) === 'EPIPE' ? CLOSED_PIPE_EXIT_STATUS : 1);
  process.stdout.on('error', onStdout);
  process.stderr.on('error', onStderr);
  return () => {
    process.stdout.off('error', onStdout);
    process.stderr.off('error', onStderr);
  };
}

/**
 * Exits with `status` once what was written to stdout has been handed over, and after the 'error' a failed
 * write emits (on the next tick), so endOnOutputError decides the status when the output was lost.
 */
export function exitAfterOutput(status: number): void {
  const exit = (): void => void setImmediate(() => process.exit(status));
  // After an attached session (which unwatched its terminal) a failed write must not end in a stack trace;
  // while endOnOutputError watches, it was added first and decides.
  process.stdout.on('error', exit);
  if (process.stdout.destroyed) exit();
  else process.stdout.write('', exit);
}
