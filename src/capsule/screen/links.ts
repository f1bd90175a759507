/**
 * Link resolution from the capsule's screen model (an @xterm/headless Terminal): the OSC 8 target at a
 * cell (recorded by osc8-tracker.ts), else the URL or path token shown there (policy/link-token.ts), read
 * across wrapped rows.
 */
import type { Terminal } from '@xterm/headless';
import { lineFromCells, linkTokenAt, pathTokenAt, type Cell } from '../../policy/link-token.ts';
import type { Osc8Tracker } from './osc8-tracker.ts';

/** The tracker, for the screen model that creates it next to these lookups. */
export { createOsc8Tracker, type Osc8Tracker } from './osc8-tracker.ts';

/** Rows joined when reading a wrapped logical line for the text rule. */
const MAX_WRAPPED_ROWS = 64;

export type LinkSource = 'osc8' | 'text';

export interface ResolvedLink {
  /** The OSC 8 target or the URL token: unchecked, the host runs checkUrl on it. */
  readonly url: string;
  readonly source: LinkSource;
  readonly label: string;
}

export interface ResolvedPath {
  readonly path: string;
  readonly source: LinkSource;
  readonly label: string;
}

export interface ResolveOptions {
  /**
   * The position is the program's cursor rather than a click: when the cell there is blank, the token
   * just left of it counts (the cursor usually sits right after what was typed).
   */
  readonly atCursor?: boolean;
}

/** The wrapped logical line around absolute `line` as cells, and the cell index of (line, col). */
function logicalLineAt(term: Terminal, line: number, col: number): { cells: Cell[]; index: number } | null {
  const b = term.buffer.active;
  if (b.getLine(line) === undefined) return null;
  let first = line;
  while (first > 0 && line - first < MAX_WRAPPED_ROWS && b.getLine(first)?.isWrapped === true) first--;
  let last = line;
  while (last - first < MAX_WRAPPED_ROWS && b.getLine(last + 1)?.isWrapped === true) last++;
  const cells: Cell[] = [];
  let index = -1;
  const scratch = b.getNullCell();
  for (let r = first; r <= last; r++) {
    const row = b.getLine(r);
    if (row === undefined) break;
    for (let x = 0; x < term.cols; x++) {
      const cell = row.getCell(x, scratch);
      const chars = cell?.getChars() ?? '';
      const width = cell?.getWidth() ?? 1;
      // A wide character that did not fit in the last column wraps and leaves that column blank: skip
      // it, or a wrapped URL would read as two words.
      if (x === term.cols - 1 && r < last && chars === '' && width === 1 && b.getLine(r + 1)?.getCell(0)?.getWidth() === 2) {
        if (r === line && x === col) index = cells.length - 1;
        continue;
      }
      if (r === line && x === col) index = cells.length;
      cells.push({ chars, width });
    }
  }
  return index < 0 ? null : { cells, index };
}

function inViewport(term: Terminal, row: number, col: number): boolean {
  return Number.isInteger(row) && Number.isInteger(col) && row >= 0 && row < term.rows && col >= 0 && col < term.cols;
}

/** The rule `find` applied to the logical line at (line, col), wide characters and wrap gaps accounted for. */
function textTokenAt<T>(term: Terminal, line: number, col: number, find: (l: ReturnType<typeof lineFromCells>, c: number) => T | null): T | null {
  const logical = logicalLineAt(term, line, col);
  if (logical === null) return null;
  return find(lineFromCells(logical.cells), logical.index);
}

function candidates(col: number, options: ResolveOptions): number[] {
  return options.atCursor === true && col > 0 ? [col, col - 1] : [col];
}

/**
 * The link at viewport row/column (0-based): the OSC 8 target of that cell if a hyperlink covers it,
 * else the URL token of the visible text there (wrapped lines joined). The URL is not checked here.
 */
export function resolveLinkAt(
  term: Terminal,
  tracker: Osc8Tracker,
  row: number,
  col: number,
  options: ResolveOptions = {},
): ResolvedLink | null {
  if (!inViewport(term, row, col)) return null;
  const line = term.buffer.active.viewportY + row;
  for (const c of candidates(col, options)) {
    const hit = tracker.hitTest(line, c);
    // An OSC 8 target wins even when the host will refuse it: falling back to the label would open
    // something other than what the program linked.
    if (hit !== null) return { url: hit.url, source: 'osc8', label: hit.label };
    const token = textTokenAt(term, line, c, linkTokenAt);
    if (token !== null) return { url: token.text, source: 'text', label: token.text };
  }
  return null;
}

/** The path a `file:` URL names (host ignored: it is the container's own name), or null. */
function pathOfFileUrl(target: string): string | null {
  let url: URL;
  try {
    url = new URL(target);
  } catch {
    return null;
  }
  if (url.protocol !== 'file:') return null;
  try {
    const p = decodeURIComponent(url.pathname);
    return p === '' || p.includes('\0') ? null : p;
  } catch {
    return null;
  }
}

/**
 * The file path at viewport row/column: the path of an OSC 8 `file:` hyperlink covering it (as
 * `ls --hyperlink` prints), else the path token of the visible text there. Not checked against policy.
 */
export function resolvePathAt(
  term: Terminal,
  tracker: Osc8Tracker,
  row: number,
  col: number,
  options: ResolveOptions = {},
): ResolvedPath | null {
  if (!inViewport(term, row, col)) return null;
  const line = term.buffer.active.viewportY + row;
  for (const c of candidates(col, options)) {
    const hit = tracker.hitTest(line, c);
    const fromLink = hit === null ? null : pathOfFileUrl(hit.url);
    if (hit !== null && fromLink !== null) return { path: fromLink, source: 'osc8', label: hit.label };
    const token = textTokenAt(term, line, c, pathTokenAt);
    if (token !== null) return { path: token.text, source: 'text', label: token.text };
  }
  return null;
}
