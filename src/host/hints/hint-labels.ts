/**
 * Link hints (issue 37), the pure part: which of the links the capsule listed get a label, which label,
 * what the host draws, and what a typed key means. The list comes from the capsule's screen model, which
 * the host does not trust, so every claim is checked again here: the first cell must be on the host's own
 * screen, the host's own view of that screen must show the link there (seenAt), the target must pass the
 * host's URL check, two links never share a first cell, and no more links are labelled than MAX_HINTS.
 * Labels are the host's own (the capsule never names one).
 */
import type { ListedLink, ListedLinkSource } from '../../protocol/index.ts';
import { checkUrl, type UrlCheckOk } from '../../policy/url-safety.ts';
import { certainWidth } from '../terminal/host-screen.ts';
import type { Key } from '../terminal/keys.ts';

/** Label letters, home row first: one letter each for up to 26 links, two letters each beyond that. */
const HINT_ALPHABET = 'asdfghjklqwertyuiopzxcvbnm';
/** Links labelled at most (two letters give 676; the capsule lists at most 128). */
export const MAX_HINTS = 128;

export interface Hint {
  readonly label: string;
  readonly row: number;
  readonly col: number;
  readonly source: ListedLinkSource;
  /** The target as the host's URL check normalised it. */
  readonly checked: UrlCheckOk;
  /** The text the host's own view shows at the link's cells (what the operator sees there). */
  readonly shown?: string;
}

export interface HintSet {
  readonly hints: readonly Hint[];
  /**
   * Links the capsule listed that got no label, and why (for --verbose): `unseen`, the host's own view of
   * the screen does not show the link's text at its cells for certain.
   */
  readonly dropped: { outside: number; refused: number; duplicate: number; over: number; unseen: number };
}

/** The host's own view of the operator's screen (terminal/host-screen.ts). */
export interface ScreenView {
  text(row: number, col: number, count: number): string | null;
  hyperlink(row: number, col: number): string | null;
}

/**
 * What the operator sees at a listed link's cells, from the host's own view, or null when that view does
 * not show the link there for certain. A URL of the text must be that text, at those cells (wrapped rows
 * read on); a hyperlink's cells must show known text that is not all blank, and where the host saw the
 * hyperlink itself, its target must be the one listed.
 */
export function seenAt(view: ScreenView, l: ListedLink): string | null {
  if (l.source === 'text') {
    let columns = 0;
    for (const ch of l.url) {
      const w = certainWidth(ch.codePointAt(0)!);
      if (w === null) return null;
      columns += w;
    }
    return view.text(l.row, l.col, columns) === l.url ? l.url : null;
  }
  const shown = view.text(l.row, l.col, l.cells);
  if (shown === null || shown.trim() === '') return null;
  const seen = view.hyperlink(l.row, l.col);
  if (seen !== null && seen !== l.url) return null;
  return shown;
}

/** `count` labels, all the same length, none a prefix of another. */
export function hintLabels(count: number): string[] {
  const n = Math.min(count, MAX_HINTS);
  const a = HINT_ALPHABET;
  if (n <= a.length) return [...a.slice(0, n)];
  const out: string[] = [];
  for (let i = 0; i < n; i++) out.push(`${a[Math.floor(i / a.length)]!}${a[i % a.length]!}`);
  return out;
}

/**
 * The links that get a label, in the capsule's order, checked against the host's screen and URL rules and,
 * with `view`, against the host's own view of what the screen shows at each link's cells.
 */
export function buildHints(
  links: readonly ListedLink[],
  screen: { rows: number; cols: number },
  extraSchemes: readonly string[] = [],
  view?: ScreenView,
): HintSet {
  const dropped = { outside: 0, refused: 0, duplicate: 0, over: 0, unseen: 0 };
  const kept: Omit<Hint, 'label'>[] = [];
  const cells = new Set<number>();
  for (const l of links) {
    if (!Number.isInteger(l.row) || !Number.isInteger(l.col) || l.row < 0 || l.col < 0 || l.row >= screen.rows || l.col >= screen.cols || l.cells < 1) {
      dropped.outside++;
      continue;
    }
    const checked = checkUrl(l.url, { extraSchemes });
    if (!checked.ok) {
      dropped.refused++;
      continue;
    }
    const shown = view === undefined ? undefined : seenAt(view, l);
    if (shown === null) {
      dropped.unseen++;
      continue;
    }
    const at = l.row * screen.cols + l.col;
    if (cells.has(at)) {
      dropped.duplicate++;
      continue;
    }
    if (kept.length >= MAX_HINTS) {
      dropped.over++;
      continue;
    }
    cells.add(at);
    kept.push({ row: l.row, col: l.col, source: l.source, checked, ...(shown === undefined ? {} : { shown }) });
  }
  const labels = hintLabels(kept.length);
  return { hints: kept.map((h, i) => ({ ...h, label: labels[i]! })), dropped };
}

/** Black on yellow, bold: the labels stand out from any program's colours. Monochrome: reverse video. */
const LABEL_SGR = '\x1b[0;1;30;103m';

/**
 * The labels drawn at their links' first cells (absolute moves, never a line feed), each cut to the columns
 * left on its row; with `typed`, only the labels that still start with it (the feature draws them all once:
 * a two-letter label's first letter changes nothing on the screen). The caller wraps this with
 * HOST_OVERLAY_BEGIN/END (src/ui/host-draw.ts), so no mode the program set can move or hide them.
 */
export function renderHints(hints: readonly Hint[], cols: number, typed = ''): string {
  let s = '';
  for (const h of hints) {
    if (!h.label.startsWith(typed)) continue;
    const label = h.label.slice(0, Math.max(0, cols - h.col));
    if (label === '') continue;
    s += `\x1b[${h.row + 1};${h.col + 1}H${LABEL_SGR}${label}`;
  }
  return `${s}\x1b[0m`;
}

export type HintKeyResult = { type: 'pending'; typed: string } | { type: 'chosen'; hint: Hint } | { type: 'cancel' };

/**
 * One key while the labels are up: a letter extends what was typed (a complete label chooses its link; a
 * letter no label continues with is ignored), Backspace takes one back, Esc (or Ctrl+C, or the palette key)
 * leaves.
 */
export function hintKey(hints: readonly Hint[], typed: string, key: Key | 'palette'): HintKeyResult {
  if (key === 'palette' || key.name === 'escape' || key.name === 'ctrl-c') return { type: 'cancel' };
  if (key.name === 'backspace') return { type: 'pending', typed: typed.slice(0, -1) };
  if (key.name !== 'char' || !/^[a-z]$/.test(key.text)) return { type: 'pending', typed };
  const next = typed + key.text;
  const exact = hints.find((h) => h.label === next);
  if (exact !== undefined) return { type: 'chosen', hint: exact };
  return hints.some((h) => h.label.startsWith(next)) ? { type: 'pending', typed: next } : { type: 'pending', typed };
}
