/**
 * What the adapters over private APIs of pinned dependencies (pty-internals.ts for node-pty,
 * xterm-internals.ts for @xterm/headless) report: each piece they looked up, found or not.
 */
export type PieceReport<K extends string> = Readonly<Record<K, boolean>>;

/** The names of the pieces a report did not find, in the report's order. */
export function missingPieces<K extends string>(report: PieceReport<K>): K[] {
  return (Object.keys(report) as K[]).filter((k) => !report[k]);
}
