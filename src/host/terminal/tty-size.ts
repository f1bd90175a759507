/**
 * The operator's terminal size, apart from terminal.ts so that `jackin run` can read it without loading the
 * attached session's modules.
 */
import type { WriteStream } from 'node:tty';

export type TtyLike = Partial<Pick<WriteStream, 'isTTY' | 'rows' | 'columns'>>;

/** The size of `stdout` when it is a terminal, else null. */
export function ttySize(stdout: TtyLike): { rows: number; cols: number } | null {
  const rows = stdout.rows;
  const cols = stdout.columns;
  if (stdout.isTTY === true && rows !== undefined && cols !== undefined && rows > 0 && cols > 0) {
    return { rows: Math.min(rows, 0xffff), cols: Math.min(cols, 0xffff) };
  }
  return null;
}

/**
 * `jackin-capsule serve` options that start the program at the operator's terminal size, so nothing is
 * laid out for the capsule's 80x24 default before the first attach resizes it; none when `stdout` is not a
 * terminal (the capsule keeps its defaults).
 */
export function capsuleSizeArgs(stdout: TtyLike): string[] {
  const size = ttySize(stdout);
  return size === null ? [] : ['--rows', String(size.rows), '--cols', String(size.cols)];
}
