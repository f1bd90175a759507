/**
 * The OSC 8 hyperlinks of the capsule's screen model (an @xterm/headless Terminal), for link resolution
 * (links.ts).
 *
 * xterm itself marks every cell printed while a hyperlink is open with that hyperlink's id (in the cell's
 * extended attributes) and keeps the id's target in its link service. The tracker reads those: a cell is
 * part of a hyperlink exactly when it was written while the hyperlink was open, wherever the cursor went
 * before the link was closed (Copilot closes its sign-in link after moving the cursor over cells it then
 * draws a spinner into). A cell overwritten with other output, erased (ED, EL, ECH, `clear`, a reset) or
 * scrolled off loses the link with its content, as in the terminal, and cells moved by scrolling, insertion,
 * deletion or a resize's reflow keep it. A hyperlink's label is the run of cells around a cell that carry
 * the same id, in reading order (a link that wrapped covers both rows).
 *
 * These are xterm internals (`cell.extended.urlId`, `_core._oscLinkService`; xterm is pinned exactly in
 * package.json, and links.test.ts checks the installed xterm provides them, as rendition-overlay.ts reads
 * the same id). Without them `available` is false and no cell is a hyperlink: links resolve by their
 * visible text only.
 *
 * The Terminal must be created with `allowProposedApi: true`: xterm 6 puts `buffer` behind it.
 */
import type { IBufferCell, IBufferLine, IDisposable, Terminal } from '@xterm/headless';
import { MAX_URL_LENGTH } from '../../policy/url-safety.ts';

/** Rows a label is followed over in each direction from the cell asked about. */
const MAX_OSC8_ROWS = 32;

interface Osc8Hit {
  readonly url: string;
  /** The visible text the hyperlink covers (its label), which may differ from the target. */
  readonly label: string;
}

interface Osc8Span {
  readonly url: string;
  readonly startLine: number;
  readonly startCol: number;
  /** Rows from the start line to the end line (0 = one row). */
  readonly rowSpan: number;
  /** Exclusive end column on the end line (may equal cols: the link ran to the end of that row). */
  readonly endCol: number;
}

export interface Osc8Tracker extends IDisposable {
  /** The hyperlink of the cell at absolute buffer line `line`, column `col`, or null. */
  hitTest(line: number, col: number): Osc8Hit | null;
  /**
   * The hyperlinks on absolute lines `top` to `bottom` of the active buffer, in reading order, each a run
   * of cells carrying the same link (a run that starts above `top` is given from `top`).
   */
  spans(top: number, bottom: number): Osc8Span[];
  /**
   * Whether a hyperlink is open (the next printed cell joins it). xterm drops a link's target once no row
   * it printed on is left, so skipping output printed while a link is open would lose targets that parsing
   * it keeps: the screen model does not skip then.
   */
  linkOpen(): boolean;
  /** Whether the xterm internals the tracker reads were found (false: no cell is ever a hyperlink). */
  readonly available: boolean;
}

interface LinkService {
  getLinkData(id: number): { uri?: unknown } | undefined;
}

/** xterm's link service, or undefined when this xterm keeps it elsewhere. */
function linkServiceOf(term: Terminal): LinkService | undefined {
  const core = (term as unknown as { _core?: { _oscLinkService?: unknown } })._core;
  const service = core?._oscLinkService;
  if (typeof service !== 'object' || service === null) return undefined;
  return typeof (service as Partial<LinkService>).getLinkData === 'function' ? (service as LinkService) : undefined;
}

/**
 * xterm's id of the OSC 8 link a cell belongs to (0 for none). Only a cell with extended attributes has one:
 * a reused cell object keeps the `extended` of the last cell loaded into it that had them.
 */
function linkIdOf(cell: IBufferCell): number {
  const c = cell as unknown as { hasExtendedAttrs?: () => number; extended?: { urlId?: unknown } };
  if (typeof c.hasExtendedAttrs !== 'function' || c.hasExtendedAttrs() === 0) return 0;
  const id = c.extended?.urlId;
  return typeof id === 'number' ? id : 0;
}

export function createOsc8Tracker(term: Terminal): Osc8Tracker {
  return new XtermOsc8Tracker(term);
}

/** The link id of the cell at `col` of `row` (a `cols`-wide row of the active buffer); 0 for none or outside it. */
function idAt(row: IBufferLine | undefined, col: number, cols: number, scratch: IBufferCell): number {
  if (row === undefined || col < 0 || col >= cols) return 0;
  const cell = row.getCell(col, scratch);
  return cell === undefined ? 0 : linkIdOf(cell);
}

class XtermOsc8Tracker implements Osc8Tracker {
  readonly available: boolean;
  readonly #term: Terminal;
  /** xterm's link service while the internals are there and the tracker is not disposed. */
  #service: LinkService | undefined;

  constructor(term: Terminal) {
    if (term.options.allowProposedApi !== true) {
      throw new TypeError('createOsc8Tracker needs a Terminal created with allowProposedApi: true (xterm 6 hides the buffer behind it)');
    }
    this.#term = term;
    const service = linkServiceOf(term);
    const probe = term.buffer.active.getNullCell() as unknown as { hasExtendedAttrs?: unknown; extended?: { urlId?: unknown } };
    this.available = service !== undefined && typeof probe.hasExtendedAttrs === 'function' && typeof probe.extended?.urlId === 'number';
    this.#service = this.available ? service : undefined;
  }

  linkOpen(): boolean {
    if (this.#service === undefined) return false;
    // xterm's own test (InputHandler._getCurrentLinkId): the pen's link id, read even when the pen's flag
    // for extended attributes is off (a DECRC restores the flag, not the id, and SGR 0 sets it again).
    const pen = (this.#term as unknown as { _core?: { _inputHandler?: { _curAttrData?: { extended?: { urlId?: unknown } } } } })._core?._inputHandler
      ?._curAttrData;
    const id = pen?.extended?.urlId;
    return typeof id === 'number' && id !== 0;
  }

  hitTest(line: number, col: number): Osc8Hit | null {
    if (this.#service === undefined || !Number.isInteger(line) || !Number.isInteger(col)) return null;
    const b = this.#term.buffer.active;
    const scratch = b.getNullCell();
    const id = idAt(b.getLine(line), col, this.#term.cols, scratch);
    const url = this.#targetOf(id);
    if (url === null) return null;
    const { from, to } = this.#runAround(line, col, id, scratch);
    return { url, label: this.#textOf(from, to) };
  }

  spans(top: number, bottom: number): Osc8Span[] {
    const out: Osc8Span[] = [];
    if (this.#service === undefined) return out;
    const b = this.#term.buffer.active;
    const cols = this.#term.cols;
    const scratch = b.getNullCell();
    let open: { id: number; url: string | null; startLine: number; startCol: number } | null = null;
    const finish = (line: number, col: number): void => {
      if (open === null) return;
      if (open.url !== null) {
        // Ends at (line, col) exclusive; an end at column 0 is the end of the row before.
        const endLine = col === 0 ? line - 1 : line;
        const endCol = col === 0 ? cols : col;
        out.push({ url: open.url, startLine: open.startLine, startCol: open.startCol, rowSpan: endLine - open.startLine, endCol });
      }
      open = null;
    };
    for (let line = top; line <= bottom; line++) {
      const row = b.getLine(line);
      if (row === undefined) break;
      for (let col = 0; col < cols; col++) {
        const id = idAt(row, col, cols, scratch);
        if (open !== null && id === open.id) continue;
        finish(line, col);
        if (id !== 0) open = { id, url: this.#targetOf(id), startLine: line, startCol: col };
      }
    }
    finish(bottom + 1, 0);
    return out;
  }

  dispose(): void {
    this.#service = undefined;
  }

  /** The target of link `id`, bounded: an over-long one is kept one character past the limit, so the host's check refuses it as too long rather than a shortened target passing. */
  #targetOf(id: number): string | null {
    if (id === 0 || this.#service === undefined) return null;
    const uri = this.#service.getLinkData(id)?.uri;
    if (typeof uri !== 'string' || uri === '') return null;
    return uri.length > MAX_URL_LENGTH ? uri.slice(0, MAX_URL_LENGTH + 1) : uri;
  }

  /** The run of cells with link `id` around (line, col), in reading order: start and exclusive end as absolute cell positions. */
  #runAround(line: number, col: number, id: number, scratch: IBufferCell): { from: number; to: number } {
    const b = this.#term.buffer.active;
    const cols = this.#term.cols;
    let from = line * cols + col;
    const low = Math.max(0, (line - MAX_OSC8_ROWS) * cols);
    while (from > low && idAt(b.getLine(Math.floor((from - 1) / cols)), (from - 1) % cols, cols, scratch) === id) from--;
    let to = line * cols + col + 1;
    const high = (line + MAX_OSC8_ROWS + 1) * cols;
    while (to < high && idAt(b.getLine(Math.floor(to / cols)), to % cols, cols, scratch) === id) to++;
    return { from, to };
  }

  #textOf(from: number, to: number): string {
    const b = this.#term.buffer.active;
    const cols = this.#term.cols;
    let out = '';
    for (let line = Math.floor(from / cols); line * cols < to; line++) {
      const start = Math.max(from - line * cols, 0);
      const end = Math.min(to - line * cols, cols);
      out += b.getLine(line)?.translateToString(false, start, end) ?? '';
    }
    return out;
  }
}
