/**
 * The mode tables, RESET_SEQUENCE and the fix-up of the serialize addon's output are in terminal-modes.ts;
 * the mode suffix of `repaint()` is the next seam to move out if this file grows.
 *
 * A headless model of the program's screen, used only to repaint a client that attaches or asks for a
 * repaint. It is fed after the live relay has written the bytes to the client, so it is never on the
 * relay's critical path; `settle()` waits until it has parsed everything fed so far.
 *
 * The serialize addon restores the cells (normal and alternate buffer) and most DECSET modes, but not the
 * mouse encoding (?1005/?1006/?1015/?1016), cursor visibility (?25), cursor style (DECSCUSR) or the scroll
 * region (DECSTBM), and it leaves the cursor with relative moves. Those are tracked here through the
 * public parser hooks and written explicitly by `repaint()`.
 */
import xtermHeadless from '@xterm/headless';
import xtermSerialize from '@xterm/addon-serialize';
import type { ListedLink, ProgramModes } from '../../protocol/index.ts';
import { floodCut, sequenceEnd, type FloodCut } from './flood-cut.ts';
import { charWidthProvider } from './char-width-provider.ts';
import { capCellCombining, XtermParserState, type CellCapPiece } from './xterm-internals.ts';
import type { PieceReport } from '../session/internals-report.ts';
import { lastCellRewrite, penOf, renditionOverlay, renditionSgr, savedCursorOf } from './rendition-overlay.ts';
import {
  MOUSE_ENCODING_SET,
  MOUSE_ENCODINGS,
  MOUSE_TRACKING_SET,
  RESET_SEQUENCE,
  serializeScreens,
  type MouseEncoding,
  type TerminalModes,
} from './terminal-modes.ts';
import {
  createOsc8Tracker,
  listVisibleLinks,
  resolveLinkAt,
  resolvePathAt,
  type Osc8Tracker,
  type ResolvedLink,
  type ResolvedPath,
  type ResolveOptions,
} from './links.ts';

// Both are CommonJS packages, taken whole (their default export): scripts/bundle.mjs bundles them into the
// capsule's bundle, so they load with its code cache (src/cli/code-cache.ts) instead of from node_modules.
const { Terminal } = xtermHeadless;
const { SerializeAddon } = xtermSerialize;

export type { MouseEncoding, TerminalModes } from './terminal-modes.ts';

export interface ScreenModelOptions {
  rows: number;
  cols: number;
  /** Skip the part of a flood that can no longer be seen (flood-cut.ts); default true. */
  fastForward?: boolean;
  /** Smallest batch worth looking at; default FAST_FORWARD_MIN_BYTES (tests lower it). */
  fastForwardMinBytes?: number;
}

/** Bytes per write to xterm, which yields to the event loop between writes once its time budget is spent. */
const PARSE_SLICE_BYTES = 16 * 1024;

/**
 * A read at least this large (a flood) waits GATHER_MS for more before its batch starts; once a batch has
 * been cut (flood-cut.ts), the next waits FLOOD_GATHER_MS, or until FLOOD_GATHER_BYTES have arrived.
 * Measured on `cat` of 64 MiB: batches of about 90 KiB (4 ms) still parsed 6% of the bytes, and xterm's
 * parser (about 30 MiB/s) was the largest part of the capsule's work.
 */
const FLOOD_READ_BYTES = 2048;
const GATHER_MS = 4;
const FLOOD_GATHER_MS = 25;
const FLOOD_GATHER_BYTES = 1024 * 1024;

/** A batch shorter than this is parsed whole: looking for a cut would cost more than it saves. */
const FAST_FORWARD_MIN_BYTES = 16 * 1024;

export class ScreenModel {
  readonly #term: InstanceType<typeof Terminal>;
  readonly #serializer: InstanceType<typeof SerializeAddon>;
  #mouseEncoding: MouseEncoding = 'default';
  #cursorVisible = true;
  #cursorStyle = 0;
  #scrollRegion: { top: number; bottom: number } | null = null;
  #pendingBytes = 0;
  /** Output waiting for the batch being parsed (see write). */
  #queued: Array<{ bytes: Uint8Array; done: (() => void) | undefined; answer?: boolean }> = [];
  /**
   * Whether each write handed to xterm and not yet parsed was output whose position and status queries the
   * model answers (see `write`), oldest first: xterm parses its writes in order and calls each one's callback
   * right after, so the head is the write being parsed when a query's reply comes.
   */
  readonly #answering: boolean[] = [];
  /** Receives the model's replies to queries in output written with `answer` (see `write`). */
  onReply: ((reply: Buffer) => void) | null = null;
  #parsing = false;
  readonly #fastForward: boolean;
  readonly #fastForwardMinBytes: number;
  /** Bytes of floods that were never parsed because they could no longer be seen. */
  skippedBytes = 0;
  /** Batches handed to xterm so far (each parses its last lines in full, see flood-cut.ts). */
  batches = 0;
  readonly #links: Osc8Tracker;
  /** xterm's parser state, a private piece (see xterm-internals.ts for its fallback). */
  readonly #parserState: XtermParserState;
  /** The xterm pieces the bound on combining characters per cell found. */
  readonly cellCap: PieceReport<CellCapPiece>;
  /**
   * Set when parsed output contained a sequence that can change a program mode (DECSET/DECRST, soft or
   * full reset); cleared by `takeModesChanged`. Lets the session skip comparing modes after every chunk of
   * a flood of plain text, where that comparison was a measurable share of the capsule's work.
   */
  #modesMayHaveChanged = true;
  /** The buffers in which the program saved the cursor (DECSC / SCOSC) since the last reset. */
  readonly #savedOn = new Set<'normal' | 'alternate'>();

  /** True (once) when modes may have changed since the last call. */
  takeModesChanged(): boolean {
    const v = this.#modesMayHaveChanged;
    this.#modesMayHaveChanged = false;
    return v;
  }

  constructor(options: ScreenModelOptions) {
    // Scrollback 0: a repaint shows the screen only (like tmux), and the model stays small and fast.
    this.#term = new Terminal({ rows: options.rows, cols: options.cols, scrollback: 0, allowProposedApi: true });
    // The widths the operator's terminal draws with, not xterm's Unicode 6 defaults (char-width-provider.ts).
    this.#term.unicode.register(charWidthProvider);
    this.#term.unicode.activeVersion = charWidthProvider.version;
    this.#fastForward = options.fastForward ?? true;
    this.#fastForwardMinBytes = options.fastForwardMinBytes ?? FAST_FORWARD_MIN_BYTES;
    this.#parserState = new XtermParserState(this.#term);
    // Combining characters per cell bounded, as terminals do (xterm-internals.ts, MAX_CELL_UNITS).
    this.cellCap = capCellCombining(this.#term);
    this.#serializer = new SerializeAddon();
    this.#term.loadAddon(this.#serializer as never);
    // OSC 8 targets live only in xterm's private cell attributes: the tracker records them as they pass.
    this.#links = createOsc8Tracker(this.#term);
    // Returning false lets xterm's own handler run as well: these only observe.
    this.#term.parser.registerCsiHandler({ prefix: '?', final: 'h' }, (params) => this.#onPrivateMode(params, true));
    this.#term.parser.registerCsiHandler({ prefix: '?', final: 'l' }, (params) => this.#onPrivateMode(params, false));
    this.#term.parser.registerCsiHandler({ intermediates: ' ', final: 'q' }, (params) => {
      const p = params[0];
      this.#cursorStyle = typeof p === 'number' ? p : 0;
      return false;
    });
    this.#term.parser.registerCsiHandler({ final: 'r' }, (params) => {
      const top = typeof params[0] === 'number' && params[0] > 0 ? params[0] : 1;
      const bottom = typeof params[1] === 'number' && params[1] > 0 ? params[1] : this.#term.rows;
      this.#scrollRegion = top === 1 && bottom >= this.#term.rows ? null : { top, bottom };
      return false;
    });
    this.#term.parser.registerCsiHandler({ intermediates: '!', final: 'p' }, () => {
      this.#resetTracked();
      return false;
    });
    this.#term.parser.registerEscHandler({ final: 'c' }, () => {
      this.#resetTracked();
      return false;
    });
    // DECSC and SCOSC: remembered per buffer so a repaint can save the same cursor in the new terminal.
    this.#term.parser.registerEscHandler({ final: '7' }, () => this.#onSaveCursor());
    // DSR: the model answers only `CSI 5 n` and `CSI 6 n` with one plain parameter, the forms the host's filter
    // lets out to the terminal (csi-policy.ts), and only in output written with `answer`; xterm's own replies
    // are never used (true: handled). A sub-parameter, `CSI 6:1 n`, comes as a second entry: no reply.
    this.#term.parser.registerCsiHandler({ final: 'n' }, (params) => {
      if (this.#answering[0] !== true || params.length !== 1) return true;
      if (params[0] === 5) this.onReply?.(Buffer.from('\x1b[0n', 'latin1'));
      else if (params[0] === 6) this.onReply?.(Buffer.from(this.#positionReport(), 'latin1'));
      return true;
    });
    this.#term.parser.registerCsiHandler({ prefix: '?', final: 'n' }, () => true);
    this.#term.parser.registerCsiHandler({ final: 's' }, () => this.#onSaveCursor());
  }

  /**
   * Queues bytes for parsing; `onParsed` runs once they are applied. Output that arrives while a batch is
   * being parsed waits and goes to xterm as the next batch: so the state is exact when a batch starts, which
   * is what lets a batch that begins with a flood of text skip what can no longer be seen. With `answer`, the
   * position and status queries in `bytes` are answered through `onReply` as they are parsed (and nothing of
   * the batch is skipped).
   */
  write(bytes: Uint8Array, onParsed?: () => void, answer = false): void {
    this.#pendingBytes += bytes.length;
    this.#queued.push({ bytes, done: onParsed, answer });
    if (this.#gatherTimer !== undefined && this.#pendingBytes >= FLOOD_GATHER_BYTES) {
      this.#parseNext();
      return;
    }
    if (this.#parsing || this.#gatherTimer !== undefined) return;
    // A large read means a flood: wait a moment so the batch is big enough to skip what scrolls away
    // (otherwise a model that keeps up would parse every byte in small batches). Small output, a keystroke's
    // echo, is parsed at once so the model stays current for lookups.
    if (bytes.length >= FLOOD_READ_BYTES) this.#gather();
    else this.#parseNext();
  }

  /** Parses what is queued once `floodGatherMs` have passed (or sooner: parseNext clears the timer). */
  #gather(): void {
    this.#gatherTimer = setTimeout(() => {
      this.#gatherTimer = undefined;
      this.#parseNext();
    }, this.#floodGatherMs);
  }

  /**
   * The cursor position report a terminal gives: 1-based row and column of the screen, the column the last
   * one while a write is pending at the right margin (xterm.js then has the cursor one past it).
   */
  #positionReport(): string {
    const b = this.#term.buffer.active;
    return `\x1b[${b.cursorY + 1};${Math.min(b.cursorX, this.#term.cols - 1) + 1}R`;
  }

  /** Bytes fed but not yet parsed. */
  get backlog(): number {
    return this.#pendingBytes;
  }

  /** Resolves once everything written so far has been parsed. */
  settle(): Promise<void> {
    this.#settling++;
    return new Promise((resolve) => {
      this.#queued.push({
        bytes: new Uint8Array(0),
        done: () => {
          this.#settling--;
          resolve();
        },
      });
      this.#parseNext();
    });
  }

  /** settle() calls waiting: the batch after the current one is then parsed without gathering. */
  #settling = 0;

  #gatherTimer: NodeJS.Timeout | undefined;
  /** How long the next flood batch gathers (GATHER_MS, or FLOOD_GATHER_MS while a flood is being cut). */
  #floodGatherMs = GATHER_MS;

  #parseNext(): void {
    if (this.#gatherTimer !== undefined) {
      clearTimeout(this.#gatherTimer);
      this.#gatherTimer = undefined;
    }
    if (this.#parsing || this.#queued.length === 0) return;
    const batch = this.#queued;
    this.#queued = [];
    let total = 0;
    for (const e of batch) total += e.bytes.length;
    // The batch is parsed chunk by chunk, never copied into one buffer; `skip` bytes of it are left out.
    // A PTY read can end inside a sequence (`ESC [ 3` | `1m...`), and then the next batch's first bytes
    // belong to it: they are parsed (up to `from`, sequenceEnd) before anything may be skipped. xterm keeps
    // its parser's state private; an xterm without it (the version is pinned) just never skips.
    let cut: FloodCut | null = null;
    let from = 0;
    // Output whose queries the model answers is parsed whole: a query in what a cut skips would go unanswered.
    // Not while an OSC 8 link is open either: the skipped rows would have kept its target alive (osc8-tracker.ts).
    if (
      this.#fastForward &&
      this.#scrollRegion === null &&
      total >= this.#fastForwardMinBytes &&
      !batch.some((e) => e.answer === true) &&
      !this.#links.linkOpen()
    ) {
      const chunks = batch.map((e) => e.bytes);
      const state = this.#parserState.state();
      from = state === undefined ? -1 : state === 0 ? 0 : sequenceEnd(chunks, state);
      if (from >= 0) cut = floodCut(chunks, this.#term.rows, from);
    }
    const skip = cut === null ? 0 : cut.at - from;
    if (cut !== null && skip > 0) this.skippedBytes += skip;
    // A flood that was cut will likely go on: gather the next batch for longer, so that less of it is
    // parsed (each batch parses its last 2 x rows + 1 lines whatever its size).
    this.#floodGatherMs = skip > 0 ? FLOOD_GATHER_MS : GATHER_MS;
    this.#parsing = true;
    this.batches++;
    // Handed over in slices: xterm checks its time budget between writes, not inside one, so a large batch
    // in one write would hold the event loop (and with it the relay and the keyboard) until it is parsed.
    // With a cut: the bytes before `from`, the pen the skipped SGR sequences left, the bytes from the cut.
    const slices: Array<{ bytes: Uint8Array; answer: boolean }> = [];
    const parse = (start: number, end: number): void => {
      let base = 0;
      for (const { bytes, answer } of batch) {
        const a = Math.max(start, base) - base;
        const b = Math.min(end, base + bytes.length) - base;
        for (let at = a; at < b; at += PARSE_SLICE_BYTES)
          slices.push({ bytes: bytes.subarray(at, Math.min(b, at + PARSE_SLICE_BYTES)), answer: answer === true });
        base += bytes.length;
      }
    };
    if (cut !== null && skip > 0) {
      parse(0, from);
      if (cut.pen.length > 0) slices.push({ bytes: cut.pen, answer: false });
      parse(cut.at, total);
    } else {
      parse(0, total);
    }
    const last = slices.pop() ?? { bytes: new Uint8Array(0), answer: false };
    const parsed = (): void => void this.#answering.shift();
    for (const slice of slices) {
      this.#answering.push(slice.answer);
      this.#term.write(slice.bytes, parsed);
    }
    this.#answering.push(last.answer);
    this.#term.write(last.bytes, () => {
      parsed();
      this.#parsing = false;
      this.#pendingBytes -= total;
      for (const e of batch) e.done?.();
      this.#afterBatch();
    });
  }

  /**
   * What arrived while a batch was parsed. During a flood that is being cut, it gathers like any flood batch
   * (for FLOOD_GATHER_MS, or until FLOOD_GATHER_BYTES): parsed at once, every batch lasted only as long as
   * the previous one's parse, and each parsed its last 2 x rows + 1 lines (measured on `cat` of 64 MiB:
   * about 110 batches and 600 KiB parsed per second, gathered about 50 and 230 KiB). Anything else, or a
   * `settle()` waiting, is parsed at once.
   */
  #afterBatch(): void {
    if (this.#queued.length === 0 || this.#gatherTimer !== undefined) return;
    if (this.#floodGatherMs === FLOOD_GATHER_MS && this.#settling === 0 && this.#pendingBytes < FLOOD_GATHER_BYTES) this.#gather();
    else this.#parseNext();
  }

  resize(rows: number, cols: number): void {
    this.#term.resize(cols, rows);
    // A resize resets the scroll region in xterm (and in real terminals).
    this.#scrollRegion = null;
  }

  get rows(): number {
    return this.#term.rows;
  }

  get cols(): number {
    return this.#term.cols;
  }

  get modes(): TerminalModes {
    const m = this.#term.modes;
    return {
      alternateScreen: this.#term.buffer.active.type === 'alternate',
      bracketedPaste: m.bracketedPasteMode,
      focusReporting: m.sendFocusMode,
      mouseTracking: m.mouseTrackingMode,
      mouseEncoding: this.#mouseEncoding,
      applicationCursorKeys: m.applicationCursorKeysMode,
      applicationKeypad: m.applicationKeypadMode,
      cursorVisible: this.#cursorVisible,
      cursorStyle: this.#cursorStyle,
      insertMode: m.insertMode,
      originMode: m.originMode,
      autoWrap: m.wraparoundMode,
      reverseWraparound: m.reverseWraparoundMode,
      scrollRegion: this.#scrollRegion,
    };
  }

  /** The visible text of the active screen, one string per row with trailing blanks removed. */
  screenLines(): string[] {
    const buf = this.#term.buffer.active;
    const out: string[] = [];
    for (let y = 0; y < this.#term.rows; y++) {
      out.push(buf.getLine(buf.baseY + y)?.translateToString(true) ?? '');
    }
    return out;
  }

  /** The modes a host reacts to (mouse capture, paste, focus), as the Modes frame carries them. */
  get programModes(): ProgramModes {
    const m = this.#term.modes;
    return {
      mouseTracking: m.mouseTrackingMode !== 'none',
      sgrMouse: this.#mouseEncoding === 'sgr',
      bracketedPaste: m.bracketedPasteMode,
      focusReporting: m.sendFocusMode,
      alternateScreen: this.#term.buffer.active.type === 'alternate',
    };
  }

  /** The link at a viewport cell (0-based): its OSC 8 target, else the URL token shown there. */
  linkAt(row: number, col: number, options: ResolveOptions = {}): ResolvedLink | null {
    return resolveLinkAt(this.#term, this.#links, row, col, options);
  }

  /** The file path at a viewport cell (0-based): an OSC 8 `file:` target, else the path token shown there. */
  pathAt(row: number, col: number, options: ResolveOptions = {}): ResolvedPath | null {
    return resolvePathAt(this.#term, this.#links, row, col, options);
  }

  /** The links the visible screen shows (extension `link-list`; see links.ts). */
  visibleLinks(): ListedLink[] {
    return listVisibleLinks(this.#term, this.#links);
  }

  /** Cursor position on the visible screen, 0-based. */
  get cursor(): { x: number; y: number } {
    const buf = this.#term.buffer.active;
    return { x: buf.cursorX, y: buf.cursorY };
  }

  /**
   * Bytes that make a terminal of the same size show what the program's terminal shows: reset, clear, the
   * screen contents (normal buffer, then the alternate one if active), the modes, and the cursor. Call after
   * `settle()` for an exact picture.
   */
  repaint(): Buffer {
    const modes = this.modes;
    // SGR 0 before the clear and the rows, which the serializer writes from the default pen: a soft reset
    // does not reset the pen in every terminal (tmux keeps the one a DECRC, or leaving an alternate screen
    // that was never entered, brought back: the pen the host's palette saved), and ESC[2J paints with it.
    let s = `${RESET_SEQUENCE}\x1b[0m\x1b[H\x1b[2J`;
    s += serializeScreens(this.#serializer.serialize({ scrollback: 0, excludeModes: true }));
    s += renditionOverlay(this.#term.buffer.active, this.#term.rows, this.#term.cols, penOf(this.#term));
    s += this.#savedCursorRepaint();
    if (modes.applicationCursorKeys) s += '\x1b[?1h';
    if (modes.applicationKeypad) s += '\x1b=';
    if (modes.bracketedPaste) s += '\x1b[?2004h';
    if (modes.focusReporting) s += '\x1b[?1004h';
    if (modes.insertMode) s += '\x1b[4h';
    if (modes.reverseWraparound) s += '\x1b[?45h';
    if (!modes.autoWrap) s += '\x1b[?7l';
    s += MOUSE_TRACKING_SET[modes.mouseTracking] + MOUSE_ENCODING_SET[modes.mouseEncoding];
    if (modes.cursorStyle !== 0) s += `\x1b[${modes.cursorStyle} q`;
    // DECSTBM and DECOM both home the cursor, so they go before the final cursor position; under DECOM the
    // position is relative to the region's top.
    let top = 1;
    if (modes.scrollRegion) {
      s += `\x1b[${modes.scrollRegion.top};${modes.scrollRegion.bottom}r`;
      if (modes.originMode) top = modes.scrollRegion.top;
    }
    if (modes.originMode) s += '\x1b[?6h';
    const { x, y } = this.cursor;
    // Just past the last column (pending wrap): only writing that last cell again puts a terminal there.
    const rewrite = x >= this.#term.cols && modes.autoWrap ? lastCellRewrite(this.#term.buffer.active, y, this.#term.cols, penOf(this.#term)) : null;
    if (rewrite === null) s += `\x1b[${y + 2 - top};${Math.min(x, this.#term.cols - 1) + 1}H`;
    else s += `\x1b[${y + 2 - top};${rewrite.col + 1}H${modes.insertMode ? `\x1b[4l${rewrite.bytes}\x1b[4h` : rewrite.bytes}`;
    if (!modes.cursorVisible) s += '\x1b[?25l';
    return Buffer.from(s, 'utf8');
  }

  dispose(): void {
    if (this.#gatherTimer !== undefined) clearTimeout(this.#gatherTimer);
    this.#gatherTimer = undefined;
    this.#links.dispose();
    this.#term.dispose();
  }

  #onPrivateMode(params: ReadonlyArray<number | number[]>, set: boolean): boolean {
    this.#modesMayHaveChanged = true;
    for (const p of params) {
      if (typeof p !== 'number') continue;
      if (p === 25) this.#cursorVisible = set;
      const enc = MOUSE_ENCODINGS.get(p);
      if (enc !== undefined) {
        if (set) this.#mouseEncoding = enc;
        else if (this.#mouseEncoding === enc) this.#mouseEncoding = 'default';
      }
    }
    return false;
  }

  /**
   * A cursor the program saved in the active buffer, saved again in the new terminal (position and pen,
   * then the program's pen back): otherwise its next DECRC after a reattach or redraw jumps to the top left.
   * Written before the scroll region and origin mode, which home the cursor; a save made under origin mode
   * is restored without it.
   */
  #savedCursorRepaint(): string {
    if (!this.#savedOn.has(this.#term.buffer.active.type)) return '';
    const saved = savedCursorOf(this.#term);
    const pen = penOf(this.#term);
    if (saved === null || pen === null) return '';
    const row = Math.min(Math.max(saved.y, 0), this.#term.rows - 1) + 1;
    const col = Math.min(Math.max(saved.x, 0), this.#term.cols - 1) + 1;
    return `\x1b[${row};${col}H${renditionSgr(saved.pen)}\x1b7${renditionSgr(pen)}`;
  }

  #onSaveCursor(): boolean {
    this.#savedOn.add(this.#term.buffer.active.type);
    return false;
  }

  #resetTracked(): void {
    this.#savedOn.clear();
    this.#modesMayHaveChanged = true;
    this.#mouseEncoding = 'default';
    this.#cursorVisible = true;
    this.#cursorStyle = 0;
    this.#scrollRegion = null;
  }
}
