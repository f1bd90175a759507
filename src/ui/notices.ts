/**
 * Transient notices for the outcome of every host action. A queue shown one at a time for NOTICE_MS each;
 * when several wait, each is shown for a shorter time so a burst does not take minutes to drain. Text is
 * made inert when posted: container-supplied names, URLs and reasons never reach the terminal as control
 * or escape sequences.
 */
import type { NoticeLevel } from '../protocol/frames.ts';
import { hostDrawn, singleWidthAt } from './host-draw.ts';
import { charWidth, cutColumns, inertText, padColumns, textWidth } from './inert-text.ts';

/** How long a notice stays up: long enough to read a path, short enough not to be in the way. */
export const NOTICE_MS = 3000;
/** Shortest display time while others wait behind it. */
export const NOTICE_MIN_MS = 1200;
/** Notices kept waiting at most; older waiting ones are dropped first (the newest outcome matters most). */
const NOTICE_QUEUE_MAX = 8;
/** Longest notice text kept, in columns, before drawing cuts it to the screen. */
export const NOTICE_MAX_COLUMNS = 400;

export interface Notice {
  level: NoticeLevel;
  text: string;
}

const GLYPH: Record<NoticeLevel, string> = { info: 'ℹ', success: '✓', warning: '!', error: '✗' };
const STYLE: Record<NoticeLevel, string> = {
  info: '\x1b[0;30;47m',
  success: '\x1b[0;30;42m',
  warning: '\x1b[0;30;43m',
  error: '\x1b[0;97;41m',
};

export class NoticeQueue {
  #queue: Notice[] = [];
  #shown: { notice: Notice; until: number } | null = null;

  readonly #now: () => number;
  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  /** Adds a notice (sanitised). Returns true when it became the shown notice at once. */
  post(level: NoticeLevel, text: string): boolean {
    const notice = { level, text: inertText(text, NOTICE_MAX_COLUMNS) };
    if (this.#shown === null) {
      this.#shown = { notice, until: this.#now() + NOTICE_MS };
      return true;
    }
    this.#queue.push(notice);
    if (this.#queue.length > NOTICE_QUEUE_MAX) this.#queue.shift();
    // Shorten the current one so the queue moves.
    this.#shown.until = Math.min(this.#shown.until, Math.max(this.#now(), this.#shown.until - NOTICE_MS + NOTICE_MIN_MS));
    return false;
  }

  get current(): Notice | null {
    return this.#shown?.notice ?? null;
  }

  /** When the current notice ends (ms since epoch), or null. */
  get deadline(): number | null {
    return this.#shown?.until ?? null;
  }

  /** Advances time: drops the current notice when due and shows the next. Returns true when it changed. */
  tick(): boolean {
    if (this.#shown === null || this.#now() < this.#shown.until) return false;
    const next = this.#queue.shift();
    this.#shown = next ? { notice: next, until: this.#now() + (this.#queue.length > 0 ? NOTICE_MIN_MS : NOTICE_MS) } : null;
    return true;
  }

  /**
   * Takes back the notice of `text` (as posted): shown, the next one shows (returns true: the shown notice
   * changed); waiting, it is dropped.
   */
  withdraw(text: string): boolean {
    const inert = inertText(text, NOTICE_MAX_COLUMNS);
    this.#queue = this.#queue.filter((n) => n.text !== inert);
    if (this.#shown?.notice.text !== inert) return false;
    const next = this.#queue.shift();
    this.#shown = next ? { notice: next, until: this.#now() + (this.#queue.length > 0 ? NOTICE_MIN_MS : NOTICE_MS) } : null;
    return true;
  }

  clear(): void {
    this.#queue = [];
    this.#shown = null;
  }

  get pending(): number {
    return this.#queue.length;
  }
}

/** One line of the notice as plain text (for HostNotice frames and logs). */
function noticeLine(n: Notice): string {
  return `${GLYPH[n.level]} ${n.text}`;
}

/**
 * Rows a notice takes at most: a long one is wrapped, not cut at the screen's edge, but never covers the
 * screen. Twelve hold a notice's longest text (NOTICE_MAX_COLUMNS) whole down to a 40-column terminal.
 */
const NOTICE_MAX_ROWS = 12;

/**
 * `s` in lines of at most `width` columns, broken at spaces where it can and inside a word (a URL, a path)
 * longer than a line.
 */
function wrapColumns(s: string, width: number): string[] {
  const w = Math.max(1, width);
  const lines: string[] = [];
  let line = '';
  let used = 0;
  for (const word of s.split(' ')) {
    const ww = textWidth(word);
    if (line !== '') {
      if (used + 1 + ww <= w) {
        line += ` ${word}`;
        used += 1 + ww;
        continue;
      }
      lines.push(line);
      line = '';
      used = 0;
    }
    for (const ch of word) {
      const cw = charWidth(ch.codePointAt(0)!);
      if (used + cw > w && line !== '') {
        lines.push(line);
        line = '';
        used = 0;
      }
      line += ch;
      used += cw;
    }
  }
  lines.push(line);
  return lines;
}

/**
 * Escape sequences that draw a notice in the top-right corner without moving the program's cursor, and
 * where it belongs whatever modes the program set (host-draw.ts: DECSC, resets, draw, DECRC); `after`
 * gives the program back what the resets took (its left/right margins). A notice wider than the screen is
 * wrapped over several rows (a failure's reason and what to do next are read whole, not cut at the edge).
 */
export function renderNotice(n: Notice, cols: number, after = ''): string {
  const inner = Math.max(2, cols - 4);
  let lines = wrapColumns(noticeLine(n), inner);
  if (lines.length > NOTICE_MAX_ROWS) lines = [...lines.slice(0, NOTICE_MAX_ROWS - 1), cutColumns(lines.slice(NOTICE_MAX_ROWS - 1).join(' '), inner)];
  const width = Math.max(...lines.map(textWidth));
  const col = Math.max(1, cols - (width + 2) + 1);
  const rows = lines.map((l, i) => `${singleWidthAt(i + 1, col)}${STYLE[n.level]} ${padColumns(l, width)} `);
  return hostDrawn(rows.join(''), false, after);
}
