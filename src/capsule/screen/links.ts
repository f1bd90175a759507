/**
 * Link resolution from the capsule's screen model (an @xterm/headless Terminal): the OSC 8 target at a
 * cell (read by osc8-tracker.ts), else the URL or path token shown there (policy/link-token.ts), read
 * across soft-wrapped rows and, for URLs, across a hard newline the program wrote at the last column
 * inside a URL (see continuesOnto).
 */
import type { Terminal } from '@xterm/headless';
import { lineFromCells, linkTokenAt, linkTokensIn, pathTokenAt, type Cell } from '../../policy/link-token.ts';
import { MAX_LISTED_LINKS, MAX_LISTED_URL_BYTES, type ListedLink } from '../../protocol/index.ts';
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

/** Cells of a logical line with where each one is in the buffer. */
interface PlacedCells {
  readonly cells: Cell[];
  readonly lines: number[];
  readonly cols: number[];
}

/** The cells of row `r` appended to `placed`; `wraps` when the next row continues it (for the wide-character gap). */
function appendRow(term: Terminal, placed: PlacedCells, r: number, wraps: boolean): void {
  const b = term.buffer.active;
  const row = b.getLine(r);
  if (row === undefined) return;
  const scratch = b.getNullCell();
  for (let x = 0; x < term.cols; x++) {
    const cell = row.getCell(x, scratch);
    const chars = cell?.getChars() ?? '';
    const width = cell?.getWidth() ?? 1;
    // A wide character that did not fit in the last column wraps and leaves that column blank: skip
    // it, or a wrapped URL would read as two words.
    if (
      x === term.cols - 1 &&
      wraps &&
      chars === '' &&
      width === 1 &&
      b
        .getLine(r + 1)
        ?.getCell(0)
        ?.getWidth() === 2
    )
      continue;
    placed.cells.push({ chars, width });
    placed.lines.push(r);
    placed.cols.push(x);
  }
}

/**
 * Whether row `r + 1` goes on the logical line that `placed` (ending with row `r`) holds: a soft wrap, or,
 * with `joinUrls`, a URL the program broke itself with a hard newline (OpenCode, Qwen): the row ends in its
 * last column inside a URL token and the URL token there, read with the next row appended, runs into it.
 */
function continuesOnto(term: Terminal, placed: PlacedCells, r: number, joinUrls: boolean): boolean {
  const b = term.buffer.active;
  const next = b.getLine(r + 1);
  if (next === undefined) return false;
  if (next.isWrapped) return true;
  if (!joinUrls) return false;
  const last = placed.cells.length - 1;
  const end = placed.cells[last];
  if (end === undefined || placed.cols[last] !== term.cols - 1 || (end.chars === '' && end.width !== 0)) return false;
  if ((next.getCell(0)?.getChars() ?? '') === '') return false;
  const joined: PlacedCells = { cells: [...placed.cells], lines: [...placed.lines], cols: [...placed.cols] };
  appendRow(term, joined, r + 1, b.getLine(r + 2)?.isWrapped === true);
  const token = linkTokenAt(lineFromCells(joined.cells), last);
  return token !== null && token.endCol > placed.cells.length;
}

/** The cells of the logical line that starts at absolute `first` (its continued rows joined, up to `limit`). */
function logicalLineFrom(term: Terminal, first: number, limit: number, joinUrls: boolean): { placed: PlacedCells; last: number } {
  const b = term.buffer.active;
  const placed: PlacedCells = { cells: [], lines: [], cols: [] };
  let last = first;
  appendRow(term, placed, first, b.getLine(first + 1)?.isWrapped === true);
  while (last - first < MAX_WRAPPED_ROWS && last + 1 <= limit && continuesOnto(term, placed, last, joinUrls)) {
    last++;
    appendRow(term, placed, last, b.getLine(last + 1)?.isWrapped === true);
  }
  return { placed, last };
}

/**
 * The first row of the logical line holding absolute `line`: back over soft wraps, and with `joinUrls`
 * back over rows that may continue a URL (the row above ends in its last column and this one starts with a
 * character), then forward from there deciding each join as `logicalLineFrom` does.
 */
function logicalStart(term: Terminal, line: number, joinUrls: boolean): number {
  const b = term.buffer.active;
  const mayContinue = (r: number): boolean => {
    const row = b.getLine(r);
    if (row === undefined || r <= 0) return false;
    if (row.isWrapped) return true;
    if (!joinUrls) return false;
    const above = b.getLine(r - 1)?.getCell(term.cols - 1);
    return above !== undefined && (above.getChars() !== '' || above.getWidth() === 0) && (row.getCell(0)?.getChars() ?? '') !== '';
  };
  let candidate = line;
  while (line - candidate < MAX_WRAPPED_ROWS && mayContinue(candidate)) candidate--;
  if (!joinUrls || candidate === line) return candidate;
  let first = candidate;
  for (;;) {
    const { last } = logicalLineFrom(term, first, line, joinUrls);
    if (last >= line) return first;
    first = last + 1;
  }
}

/** The logical line around absolute `line` as cells, and the cell index of (line, col). */
function logicalLineAt(term: Terminal, line: number, col: number, joinUrls: boolean): { cells: Cell[]; index: number } | null {
  const b = term.buffer.active;
  if (b.getLine(line) === undefined) return null;
  const first = logicalStart(term, line, joinUrls);
  const { placed } = logicalLineFrom(term, first, Number.MAX_SAFE_INTEGER, joinUrls);
  let index = -1;
  for (let i = 0; i < placed.cells.length; i++) {
    if (placed.lines[i] === line && placed.cols[i] === col) {
      index = i;
      break;
    }
  }
  // The skipped wide-character gap in a row's last column reads as the cell before it.
  if (index < 0 && col === term.cols - 1) {
    for (let i = placed.cells.length - 1; i >= 0; i--) {
      if (placed.lines[i] === line) {
        index = i;
        break;
      }
    }
  }
  return index < 0 ? null : { cells: placed.cells, index };
}

function inViewport(term: Terminal, row: number, col: number): boolean {
  return Number.isInteger(row) && Number.isInteger(col) && row >= 0 && row < term.rows && col >= 0 && col < term.cols;
}

/** The rule `find` applied to the logical line at (line, col), wide characters and wrap gaps accounted for. */
function textTokenAt<T>(
  term: Terminal,
  line: number,
  col: number,
  joinUrls: boolean,
  find: (l: ReturnType<typeof lineFromCells>, c: number) => T | null,
): T | null {
  const logical = logicalLineAt(term, line, col, joinUrls);
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
export function resolveLinkAt(term: Terminal, tracker: Osc8Tracker, row: number, col: number, options: ResolveOptions = {}): ResolvedLink | null {
  if (!inViewport(term, row, col)) return null;
  const line = term.buffer.active.viewportY + row;
  for (const c of candidates(col, options)) {
    const hit = tracker.hitTest(line, c);
    // An OSC 8 target wins even when the host will refuse it: falling back to the label would open
    // something other than what the program linked.
    if (hit !== null) return { url: hit.url, source: 'osc8', label: hit.label };
    const token = textTokenAt(term, line, c, true, linkTokenAt);
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
export function resolvePathAt(term: Terminal, tracker: Osc8Tracker, row: number, col: number, options: ResolveOptions = {}): ResolvedPath | null {
  if (!inViewport(term, row, col)) return null;
  const line = term.buffer.active.viewportY + row;
  for (const c of candidates(col, options)) {
    const hit = tracker.hitTest(line, c);
    const fromLink = hit === null ? null : pathOfFileUrl(hit.url);
    if (hit !== null && fromLink !== null) return { path: fromLink, source: 'osc8', label: hit.label };
    const token = textTokenAt(term, line, c, false, pathTokenAt);
    if (token !== null) return { path: token.text, source: 'text', label: token.text };
  }
  return null;
}

/**
 * Every link the visible screen shows (extension `link-list`), in reading order: OSC 8 hyperlinks (their
 * targets) and URLs of the visible text (the token a click on them finds, wrapped rows joined), each at its
 * first visible cell with the cells it covers on that row. Where a hyperlink covers a URL's first cell the
 * hyperlink is the link there, as for a click. Targets longer than a Links frame carries are left out, and
 * links past MAX_LISTED_LINKS. The targets are not checked here: the host checks every one.
 */
export function listVisibleLinks(term: Terminal, tracker: Osc8Tracker): ListedLink[] {
  const b = term.buffer.active;
  const top = b.viewportY;
  const bottom = top + term.rows - 1;
  const found = new Map<number, ListedLink>();
  const add = (line: number, col: number, cells: number, source: ListedLink['source'], url: string): void => {
    const row = line - top;
    if (row < 0 || row >= term.rows || col < 0 || col >= term.cols || cells < 1) return;
    if (url === '' || Buffer.byteLength(url, 'utf8') > MAX_LISTED_URL_BYTES) return;
    const key = row * term.cols + col;
    if (!found.has(key)) found.set(key, { row, col, cells, source, url });
  };
  for (const span of tracker.spans(top, bottom)) {
    const endLine = span.startLine + span.rowSpan;
    if (endLine < top || span.startLine > bottom) continue;
    const line = Math.max(span.startLine, top);
    const col = line === span.startLine ? span.startCol : 0;
    // Only where this hyperlink is the one a click finds (a newer one may cover its first cell).
    if (tracker.hitTest(line, col)?.url !== span.url) continue;
    const end = line === endLine ? span.endCol : term.cols;
    add(line, col, end - col, 'osc8', span.url);
  }
  // The logical line the first visible row belongs to may start above the screen.
  let first = logicalStart(term, top, true);
  while (first <= bottom) {
    const { placed, last } = logicalLineFrom(term, first, bottom, true);
    for (const token of linkTokensIn(lineFromCells(placed.cells))) {
      // The token's first cell on the screen (the cells before it may be above the first row).
      let i = token.startCol;
      while (i < token.endCol && (placed.lines[i] ?? top) < top) i++;
      if (i >= token.endCol) continue;
      const line = placed.lines[i]!;
      const col = placed.cols[i]!;
      if (tracker.hitTest(line, col) !== null) continue;
      let cells = 0;
      for (let k = i; k < token.endCol && placed.lines[k] === line; k++) cells++;
      add(line, col, cells, 'text', token.text);
    }
    first = last + 1;
  }
  return [...found.values()].sort((a, z) => a.row - z.row || a.col - z.col).slice(0, MAX_LISTED_LINKS);
}
