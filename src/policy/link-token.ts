/**
 * The one token rule every feature shares (modifier-click, "Open link under cursor", "Export file under
 * cursor"): given one line of visible text and a column, find the URL or path token under that column.
 *
 * Terminal columns are not string indices: a wide character (CJK, most emoji) covers two columns and a
 * cell may hold several UTF-16 code units (surrogate pairs, combining marks). Every function here works
 * on a `VisibleLine`, which carries the text and both mappings, so callers never do column arithmetic.
 *
 * Pure: no Node I/O.
 */

/** One terminal cell as a screen model reports it (xterm's IBufferCell.getChars()/getWidth()). */
export interface Cell {
  /** The cell's characters; '' for an empty cell and for the right half of a wide character. */
  readonly chars: string;
  /** 1 for a normal cell, 2 for the left half of a wide character, 0 for its right half. */
  readonly width: number;
}

/** Visible text with its column ↔ string-index maps. */
export interface VisibleLine {
  readonly text: string;
  /** `columnToIndex[col]` = index in `text` of the character drawn in column `col` (length = columns). */
  readonly columnToIndex: readonly number[];
  /** `indexToColumn[i]` = first column of the character that string index `i` belongs to (length = text.length). */
  readonly indexToColumn: readonly number[];
}

/** A token found on a line: its text and the columns it covers, `endCol` exclusive. */
export interface TextToken {
  readonly text: string;
  readonly startCol: number;
  readonly endCol: number;
}

/** Builds a VisibleLine from screen cells. Empty cells read as spaces, as they do on screen. */
export function lineFromCells(cells: readonly Cell[]): VisibleLine {
  let text = '';
  const columnToIndex: number[] = [];
  const indexToColumn: number[] = [];
  let lastIndex = 0;
  for (let col = 0; col < cells.length; col++) {
    const cell = cells[col];
    if (cell === undefined) continue;
    if (cell.width === 0) {
      // Right half of a wide character: it belongs to the character on its left.
      columnToIndex.push(lastIndex);
      continue;
    }
    const chars = cell.chars === '' ? ' ' : cell.chars;
    lastIndex = text.length;
    columnToIndex.push(lastIndex);
    for (let k = 0; k < chars.length; k++) indexToColumn.push(col);
    text += chars;
  }
  return { text, columnToIndex, indexToColumn };
}

/**
 * Builds a VisibleLine from a string where every code point takes one column. Right for ASCII and for
 * tests; text with wide characters must come from cells (`lineFromCells`), which know the real widths.
 */
export function lineFromString(s: string): VisibleLine {
  const cells: Cell[] = [];
  for (const ch of s) cells.push({ chars: ch, width: 1 });
  return lineFromCells(cells);
}

const SCHEME_START = /(?:https?:\/\/|mailto:)/giu;
/** Characters that end a token besides whitespace: they cannot appear unescaped in a URL or a shell word. */
const URL_DELIMITERS = new Set(['<', '>', '"', '`']);
/** Trailing characters that are almost always sentence punctuation, not part of the token. */
const TRAILING_PUNCTUATION = new Set(['.', ',', ';', ':', '!', '?', "'", '"']);
const OPENERS: Readonly<Record<string, string>> = { '(': ')', '[': ']', '{': '}' };
const CLOSERS: Readonly<Record<string, string>> = { ')': '(', ']': '[', '}': '{' };
/** A compiler-style location suffix (`file.ts:12` or `file.ts:12:5`), dropped from paths. */
const LOCATION_SUFFIX = /:\d+(?::\d+)?$/u;

function isSpace(ch: string): boolean {
  // Control characters can't be part of a token either: treat them as breaks.
  return /[\s\p{Cc}]/u.test(ch);
}

/** [start, end) of the run of non-break characters around string index `i`, or null on a break. */
function runAround(text: string, i: number, isBreak: (ch: string) => boolean): [number, number] | null {
  const at = text[i];
  if (at === undefined || isBreak(at)) return null;
  let start = i;
  while (start > 0 && !isBreak(text[start - 1] ?? ' ')) start--;
  let end = i + 1;
  while (end < text.length && !isBreak(text[end] ?? ' ')) end++;
  return [start, end];
}

/**
 * Cuts `s` at its first closing bracket that closes nothing (or closes the wrong kind), then drops
 * trailing punctuation and trailing opening brackets until stable. The result has no unmatched closing
 * bracket, so `a_(b)).` keeps `a_(b)` and `(see x)` loses the `)`.
 */
export function trimToken(s: string): string {
  const stack: string[] = [];
  let end = s.length;
  for (let i = 0; i < s.length; i++) {
    const ch = s[i] ?? '';
    if (OPENERS[ch] !== undefined) stack.push(ch);
    else if (CLOSERS[ch] !== undefined) {
      if (stack[stack.length - 1] === CLOSERS[ch]) stack.pop();
      else {
        end = i;
        break;
      }
    }
  }
  let out = s.slice(0, end);
  for (;;) {
    const last = out[out.length - 1];
    if (last === undefined) return out;
    if (TRAILING_PUNCTUATION.has(last) || OPENERS[last] !== undefined) out = out.slice(0, -1);
    else return out;
  }
}

function toToken(line: VisibleLine, start: number, end: number): TextToken {
  const startCol = line.indexToColumn[start] ?? 0;
  // The exclusive end column is the first column after the token's last character (2 for a wide one).
  let endCol = line.columnToIndex.length;
  for (let col = startCol; col < line.columnToIndex.length; col++) {
    if ((line.columnToIndex[col] ?? 0) >= end) {
      endCol = col;
      break;
    }
  }
  return { text: line.text.slice(start, end), startCol, endCol };
}

function asLine(line: VisibleLine | string): VisibleLine {
  return typeof line === 'string' ? lineFromString(line) : line;
}

function indexAtColumn(line: VisibleLine, col: number): number | null {
  if (!Number.isInteger(col) || col < 0) return null;
  const i = line.columnToIndex[col];
  return i === undefined ? null : i;
}

/**
 * The URL token (`http://`, `https://` or `mailto:`, any case) covering column `col`, trimmed by the
 * shared rule, or null. The scheme must start a word (`xhttp://` is not a URL) and be followed by at
 * least one character. The result always covers `col`: clicking trailing punctuation finds nothing.
 */
export function linkTokenAt(input: VisibleLine | string, col: number): TextToken | null {
  const line = asLine(input);
  const i = indexAtColumn(line, col);
  if (i === null) return null;
  const run = runAround(line.text, i, (ch) => isSpace(ch) || URL_DELIMITERS.has(ch));
  if (run === null) return null;
  const [runStart, runEnd] = run;
  const word = line.text.slice(runStart, runEnd);
  // The URL is the first scheme in the word that starts at or before the column: a URL may contain
  // another scheme in its query (`?next=https://…`), so a later scheme never starts a new URL.
  let best: number | null = null;
  for (const m of word.matchAll(SCHEME_START)) {
    const start = runStart + m.index;
    if (start > i) break;
    const before = start > runStart ? line.text[start - 1] : undefined;
    if (before !== undefined && /[\p{L}\p{N}+.-]/u.test(before)) continue;
    best = start;
    break;
  }
  if (best === null) return null;
  const trimmed = trimToken(line.text.slice(best, runEnd));
  const scheme = trimmed.match(/^(?:https?:\/\/|mailto:)/iu);
  if (scheme === null || trimmed.length <= scheme[0].length) return null;
  const end = best + trimmed.length;
  if (i >= end) return null;
  return toToken(line, best, end);
}

/**
 * Every URL token of a line, left to right, by the same rule as `linkTokenAt` (each one is what a click
 * on any of its columns finds), never overlapping. Candidates start only where a scheme does, so a long
 * line without URLs costs one regular-expression scan.
 */
export function linkTokensIn(input: VisibleLine | string): TextToken[] {
  const line = asLine(input);
  const out: TextToken[] = [];
  let endCol = 0;
  for (const m of line.text.matchAll(SCHEME_START)) {
    const col = line.indexToColumn[m.index];
    if (col === undefined || col < endCol) continue;
    const token = linkTokenAt(line, col);
    // A token that starts before this scheme is one already listed (or refused, with its earlier scheme).
    if (token === null || token.startCol !== col) continue;
    out.push(token);
    endCol = token.endCol;
  }
  return out;
}

/**
 * The file path token (absolute or relative, whitespace-delimited) covering column `col`, or null.
 * Leading quotes and brackets and trailing punctuation are trimmed by the shared rule, and a trailing
 * `:line[:col]` location (compiler and grep output) is dropped. URLs (`scheme://…`) are not paths.
 */
export function pathTokenAt(input: VisibleLine | string, col: number): TextToken | null {
  const line = asLine(input);
  const i = indexAtColumn(line, col);
  if (i === null) return null;
  const run = runAround(line.text, i, isSpace);
  if (run === null) return null;
  let [start] = run;
  const [, runEnd] = run;
  while (start < runEnd && /["'`<([{]/u.test(line.text[start] ?? '')) start++;
  if (i < start) return null;
  let body = trimToken(line.text.slice(start, runEnd));
  body = body.replace(LOCATION_SUFFIX, '');
  body = trimToken(body);
  const punctuationOnly = /^[\p{P}\p{S}]+$/u.test(body) && !/^[./~]/u.test(body);
  if (body === '' || punctuationOnly || /^[a-z][a-z0-9+.-]*:\/\//iu.test(body)) return null;
  const end = start + body.length;
  if (i >= end) return null;
  return toToken(line, start, end);
}
