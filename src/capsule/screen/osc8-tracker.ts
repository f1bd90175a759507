/**
 * The OSC 8 hyperlinks of the capsule's screen model (an @xterm/headless Terminal), for link resolution
 * (links.ts).
 *
 * xterm keeps OSC 8 hyperlinks only in private cell attributes, so `createOsc8Tracker` watches the
 * sequences through the public `parser.registerOscHandler(8, …)` hook and records, per hyperlink, its
 * target and the span of cells printed between the opening and closing sequence (from the cursor when it
 * opens to the cursor when it closes, in reading order, so wrapped lines are covered). The span is kept
 * in step with the buffer: in the normal buffer a marker moves it with scrolling and drops it when its
 * line leaves the scrollback; the alternate screen has no markers, so its records are dropped when it
 * scrolls and when it is left. Each record also keeps the text it covered, and a record whose cells no
 * longer show that text (overwritten, cleared) is ignored: a stale link never answers a click.
 *
 * The Terminal must be created with `allowProposedApi: true`: xterm 6 puts `parser`, `buffer` and
 * `registerMarker` behind it.
 */
import type { IBufferLine, IDisposable, IMarker, Terminal } from '@xterm/headless';
import { MAX_URL_LENGTH } from '../../policy/url-safety.ts';

/** Records kept; the oldest go first. A screenful of `ls --hyperlink` is a few hundred. */
export const MAX_OSC8_RECORDS = 1000;
/** A hyperlink spanning more rows than this is a program that forgot to close it: not recorded. */
export const MAX_OSC8_ROWS = 32;

type BufferKind = 'normal' | 'alternate';

interface Osc8Record {
  readonly url: string;
  readonly kind: BufferKind;
  /** Normal buffer: tracks the start line through scrolling. Alternate buffer: undefined. */
  readonly marker: IMarker | undefined;
  /** Start line in the alternate buffer (absolute = viewport row there); unused when `marker` is set. */
  readonly altLine: number;
  readonly startCol: number;
  /** Rows from the start line to the end line (0 = one row). */
  readonly rowSpan: number;
  /** Exclusive end column on the end line (may equal cols: the link ran to the end of that row). */
  readonly endCol: number;
  readonly cols: number;
  /** The covered text per row, compared at resolve time. */
  readonly snapshot: readonly string[];
}

interface OpenLink {
  readonly url: string;
  readonly kind: BufferKind;
  readonly marker: IMarker | undefined;
  readonly altLine: number;
  readonly startCol: number;
  readonly cols: number;
}

export interface Osc8Hit {
  readonly url: string;
  /** The visible text the hyperlink covers (its label), which may differ from the target. */
  readonly label: string;
}

export interface Osc8Tracker extends IDisposable {
  /** The newest hyperlink covering absolute buffer line `line`, column `col`, still showing its text. */
  hitTest(line: number, col: number): Osc8Hit | null;
  /**
   * The hyperlinks of the active buffer still showing their text, newest first: target, start (absolute
   * line, column) and end (rows after the start line, exclusive column on the end line).
   */
  spans(): Osc8Span[];
  /** Number of records kept (for tests and diagnostics). */
  readonly size: number;
}

export interface Osc8Span {
  readonly url: string;
  readonly startLine: number;
  readonly startCol: number;
  readonly rowSpan: number;
  readonly endCol: number;
}

export interface Osc8TrackerOptions {
  readonly maxRecords?: number;
}
function cursorLine(term: Terminal): number {
  const b = term.buffer.active;
  return b.baseY + b.cursorY;
}

/** Text of `line` from `start` to `end` (exclusive) columns, wide characters counted once. */
function rowText(line: IBufferLine | undefined, start: number, end: number): string {
  if (line === undefined || end <= start) return '';
  return line.translateToString(false, start, end);
}

/** Per-row text covered by a span starting at (startLine, startCol) and ending at (startLine+rowSpan, endCol). */
function spanText(term: Terminal, startLine: number, startCol: number, rowSpan: number, endCol: number): string[] {
  const b = term.buffer.active;
  const out: string[] = [];
  for (let r = 0; r <= rowSpan; r++) {
    const from = r === 0 ? startCol : 0;
    const to = r === rowSpan ? endCol : term.cols;
    out.push(rowText(b.getLine(startLine + r), from, to));
  }
  return out;
}

export function createOsc8Tracker(term: Terminal, options: Osc8TrackerOptions = {}): Osc8Tracker {
  if (term.options.allowProposedApi !== true) {
    throw new TypeError('createOsc8Tracker needs a Terminal created with allowProposedApi: true (xterm 6 hides parser and buffer behind it)');
  }
  const maxRecords = options.maxRecords ?? MAX_OSC8_RECORDS;
  let records: Osc8Record[] = [];
  let open: OpenLink | null = null;
  const disposables: IDisposable[] = [];

  const dropRecord = (r: { marker: IMarker | undefined }): void => {
    r.marker?.dispose();
  };
  const dropOpen = (): void => {
    if (open !== null) dropRecord(open);
    open = null;
  };
  const dropAlternate = (): void => {
    records = records.filter((r) => r.kind !== 'alternate');
    if (open?.kind === 'alternate') dropOpen();
  };

  const startLineOf = (r: { marker: IMarker | undefined; altLine: number }): number | null => {
    if (r.marker === undefined) return r.altLine;
    return r.marker.isDisposed ? null : r.marker.line;
  };

  const close = (): void => {
    const link = open;
    open = null;
    if (link === null) return;
    const kind = term.buffer.active.type;
    const startLine = startLineOf(link);
    if (kind !== link.kind || startLine === null || term.cols !== link.cols) {
      dropRecord(link);
      return;
    }
    const endLine = cursorLine(term);
    const endCol = Math.min(term.buffer.active.cursorX, term.cols);
    const rowSpan = endLine - startLine;
    // A cursor that moved up or left before closing leaves no span we can trust; a huge span is an unclosed link.
    if (rowSpan < 0 || rowSpan > MAX_OSC8_ROWS || (rowSpan === 0 && endCol <= link.startCol)) {
      dropRecord(link);
      return;
    }
    records.push({
      url: link.url,
      kind: link.kind,
      marker: link.marker,
      altLine: link.altLine,
      startCol: link.startCol,
      rowSpan,
      endCol,
      cols: link.cols,
      snapshot: spanText(term, startLine, link.startCol, rowSpan, endCol),
    });
    // Markers are disposed by xterm when their line leaves the scrollback: forget those records.
    records = records.filter((r) => r.marker?.isDisposed !== true);
    while (records.length > maxRecords) {
      const oldest = records.shift();
      if (oldest !== undefined) dropRecord(oldest);
    }
  };

  disposables.push(
    term.parser.registerOscHandler(8, (data) => {
      // OSC 8 ; params ; URI ST — the URI itself may contain ';', so split at the first one only.
      const sep = data.indexOf(';');
      if (sep === -1) return false;
      const uri = data.slice(sep + 1);
      close();
      if (uri !== '') {
        const b = term.buffer.active;
        const kind = b.type;
        open = {
          // An over-long target is kept one character past the limit, so checkUrl refuses it as too long
          // instead of a shortened target passing; memory stays bounded either way.
          url: uri.length > MAX_URL_LENGTH ? uri.slice(0, MAX_URL_LENGTH + 1) : uri,
          kind,
          marker: kind === 'normal' ? term.registerMarker(0) : undefined,
          altLine: kind === 'alternate' ? cursorLine(term) : 0,
          startCol: Math.min(b.cursorX, term.cols),
          cols: term.cols,
        };
      }
      // Not handled: xterm's own OSC 8 handling still runs.
      return false;
    }),
    term.buffer.onBufferChange(() => {
      // The alternate screen starts blank and is discarded when left, and a link open across the switch
      // would span two buffers.
      dropOpen();
      dropAlternate();
    }),
    term.onScroll(() => {
      // Alternate-screen scrolling moves rows without markers (its scroll region is not observable).
      // Checked only when there is something to drop: this runs for every scrolled line of a flood.
      if ((records.length > 0 || open !== null) && term.buffer.active.type === 'alternate') dropAlternate();
    }),
    term.onResize(() => {
      // Reflow moves cells between rows: spans measured at the old width mean nothing now.
      dropOpen();
      for (const r of records) dropRecord(r);
      records = [];
    }),
  );

  const covers = (startLine: number, startCol: number, rowSpan: number, endCol: number, line: number, col: number): boolean => {
    const cols = term.cols;
    const pos = line * cols + col;
    return pos >= startLine * cols + startCol && pos < (startLine + rowSpan) * cols + endCol;
  };

  return {
    hitTest(line, col) {
      const kind = term.buffer.active.type;
      if (open !== null && open.kind === kind && open.cols === term.cols) {
        // A link still being printed covers up to the cursor.
        const start = startLineOf(open);
        const endLine = cursorLine(term);
        if (start !== null && covers(start, open.startCol, endLine - start, Math.min(term.buffer.active.cursorX, term.cols), line, col)) {
          const label = spanText(term, start, open.startCol, endLine - start, term.buffer.active.cursorX).join('');
          return { url: open.url, label };
        }
      }
      for (let i = records.length - 1; i >= 0; i--) {
        const r = records[i];
        if (r === undefined || r.kind !== kind || r.cols !== term.cols) continue;
        const start = startLineOf(r);
        if (start === null || !covers(start, r.startCol, r.rowSpan, r.endCol, line, col)) continue;
        const now = spanText(term, start, r.startCol, r.rowSpan, r.endCol);
        if (now.length !== r.snapshot.length || now.some((t, k) => t !== r.snapshot[k])) continue;
        return { url: r.url, label: now.join('') };
      }
      return null;
    },
    spans() {
      const kind = term.buffer.active.type;
      const out: Osc8Span[] = [];
      if (open !== null && open.kind === kind && open.cols === term.cols) {
        const start = startLineOf(open);
        const endCol = Math.min(term.buffer.active.cursorX, term.cols);
        const rowSpan = start === null ? -1 : cursorLine(term) - start;
        if (start !== null && rowSpan >= 0 && rowSpan <= MAX_OSC8_ROWS && (rowSpan > 0 || endCol > open.startCol)) {
          out.push({ url: open.url, startLine: start, startCol: open.startCol, rowSpan, endCol });
        }
      }
      for (let i = records.length - 1; i >= 0; i--) {
        const r = records[i];
        if (r === undefined || r.kind !== kind || r.cols !== term.cols) continue;
        const start = startLineOf(r);
        if (start === null) continue;
        const now = spanText(term, start, r.startCol, r.rowSpan, r.endCol);
        if (now.length !== r.snapshot.length || now.some((t, k) => t !== r.snapshot[k])) continue;
        out.push({ url: r.url, startLine: start, startCol: r.startCol, rowSpan: r.rowSpan, endCol: r.endCol });
      }
      return out;
    },
    get size() {
      return records.length;
    },
    dispose() {
      for (const d of disposables) d.dispose();
      disposables.length = 0;
      dropOpen();
      for (const r of records) dropRecord(r);
      records = [];
    },
  };
}
