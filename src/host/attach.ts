/**
 * The host side of one attach session (protocol.md section 6): Hello, then every input byte forwarded
 * unchanged, SIGWINCH as Resize, Output to the operator's terminal with backpressure, Bell, extension
 * negotiation (ExtHello), ExitStatus and Notice, and the detach keys. It does not own the terminal's
 * lifecycle: the caller enters raw mode before and restores after (see cli/jackin.ts), so every exit path
 * restores in one place.
 */
import { EventEmitter } from 'node:events';
import {
  encodeClientFrame,
  createServerFrameDecoder,
  ProtocolError,
  type ClientFrame,
  type Features,
  type NoticeLevel,
  type ServerFrame,
} from '../protocol/index.ts';
import { truncateUtf8, MAX_HOST_NOTICE_BYTES } from '../protocol/index.ts';
import { SERVER_TAGS } from '../protocol/index.ts';
import type { Transport } from '../transport/transport.ts';
import { createRateLimiter } from './rate-limiter.ts';
import { inertText } from '../ui/inert-text.ts';
import { NOTICE_MAX_COLUMNS, NoticeQueue, noticeLine, renderNotice } from '../ui/notices.ts';
import { InputScanner, scannerOptionsFromEnv, type InputEvent, type InputScannerOptions } from './input-scan.ts';
import { Palette, type PaletteAction, type PaletteResult } from './palette.ts';
import type { HostTerminal } from './terminal.ts';

/** Extensions this host uses, with the version it speaks. */
export const HOST_FEATURES: Readonly<Features> = { 'exit-status': 1, notice: 1, repaint: 1, 'image-staged': 1, 'stage-only': 1, resolve: 1, modes: 1 };
/** After asking to detach, how long to wait for the capsule's Shutdown before just closing (a close is a detach too). */
export const DETACH_REPLY_TIMEOUT_MS = 2_000;
/** How long to wait for a relay to report why it ended, before giving the reason without it. */
export const FAILURE_DETAIL_TIMEOUT_MS = 1_000;
/**
 * A lone ESC (or the start of a sequence) is held this long for the rest of its sequence before it is sent
 * as typed: terminals write a whole sequence at once, so only a real Escape key waits, and only this long.
 */
export const ESCAPE_FLUSH_MS = 15;
/** A bracketed paste whose end marker never comes is passed through after this much silence. */
export const PASTE_FLUSH_MS = 500;
/** After the overlay changes, notices are redrawn once output has been quiet this long. */
const NOTICE_REDRAW_MS = 30;
const DETACH_REQUEST_ID = 1n;
const BEL = Buffer.from([0x07]);

/** Something a feature does with an input event it claimed; return false to let the bytes through. */
export type InputHook = (ev: InputEvent) => boolean;

export interface SessionAction extends PaletteAction {
  run: (argument?: string) => void | Promise<void>;
}

export type AttachOutcome =
  /** The program exited with `status` (known from ExitStatus); `reason` is the capsule's Shutdown text, if any. */
  | { kind: 'exited'; status: number; reason?: string | null }
  /** The operator detached; the program keeps running. */
  | { kind: 'detached' }
  /** The capsule ended the session without an exit status (takeover, upstream capsule, shutdown). */
  | { kind: 'shutdown'; reason: string | null }
  /** The connection was lost or the stream broke. */
  | { kind: 'lost'; reason: string };

export interface AttachOptions {
  transport: Transport;
  terminal: HostTerminal;
  /** Instance name, for messages. */
  name: string;
  env?: NodeJS.ProcessEnv;
  /** Diagnostics (--verbose); called with one line without a line ending. */
  log?: (line: string) => void;
  /** Scanner options (keys); default from JACKIN_PASTE_KEY / JACKIN_PALETTE_KEY. */
  scanner?: InputScannerOptions;
  /** Clock for notices (tests). */
  now?: () => number;
}

export interface AttachEvents {
  notice: [{ level: NoticeLevel; text: string }];
  /** Server frames this module does not handle (host requests for other features). */
  frame: [ServerFrame];
  welcome: [{ sessions: number; features: Features | null }];
  /** The operator pressed the palette key (a gesture, also when the palette belongs to an upstream capsule). */
  gesture: ['palette-key' | 'palette-action' | 'click'];
}

/** Picks the features to announce: ours that the capsule offers, at the lower of the two versions. */
export function negotiateFeatures(offered: Features): Features {
  const out: Features = {};
  for (const [name, version] of Object.entries(HOST_FEATURES)) {
    const theirs = offered[name];
    if (theirs !== undefined && theirs > 0) out[name] = Math.min(version, theirs);
  }
  return out;
}

/** Exit status and the one line for stderr (null: say nothing) of an outcome. */
export function outcomeExit(outcome: AttachOutcome, name: string): { status: number; message: string | null } {
  switch (outcome.kind) {
    case 'exited':
      // A program that ended on its own says why itself; anything else (a stopped container) gets one line.
      return {
        status: outcome.status,
        message: outcome.status !== 0 && outcome.reason != null && !/^program exited\b/.test(outcome.reason) ? `${name}: ${inertText(outcome.reason)}` : null,
      };
    case 'detached':
      return { status: 0, message: `detached from ${name}` };
    case 'shutdown':
      return { status: 1, message: `session with ${name} ended by the capsule${outcome.reason === null ? '' : `: ${outcome.reason}`}` };
    case 'lost':
      return { status: 1, message: `lost connection to ${name}: ${outcome.reason}` };
    default: {
      const never: never = outcome;
      throw new TypeError(`unexpected outcome ${JSON.stringify(never)}`);
    }
  }
}

export class AttachSession extends EventEmitter<AttachEvents> {
  readonly done: Promise<AttachOutcome>;
  private resolveDone!: (o: AttachOutcome) => void;
  private finished = false;
  private readonly decoder = createServerFrameDecoder();
  private readonly scanner: InputScanner;
  private readonly palette = new Palette();
  private readonly actions = new Map<string, SessionAction>();
  private readonly notices: NoticeQueue;
  private readonly hooks: { pasteKey?: InputHook; paste?: InputHook; mouse?: InputHook } = {};
  private flushTimer: NodeJS.Timeout | undefined;
  private noticeTimer: NodeJS.Timeout | undefined;
  private noticeRedrawTimer: NodeJS.Timeout | undefined;
  /** While held (an image paste in progress), typed input waits here and is sent after, in order. */
  private held: Buffer[] | null = null;
  private holds = 0;
  private exitStatus: number | null = null;
  private detaching = false;
  private negotiated: Features | null = null;
  private welcomed = false;
  /** Malformed frames are each skipped, but told to the operator at most this often (a flood stays quiet). */
  private readonly skippedNotices = createRateLimiter({ max: 3, windowMs: 10_000 });
  private outputPaused = false;
  private inputPaused = false;
  private detachTimer: NodeJS.Timeout | undefined;
  private readonly offs: Array<() => void> = [];

  constructor(private readonly o: AttachOptions) {
    super();
    this.done = new Promise((resolve) => (this.resolveDone = resolve));
    this.scanner = new InputScanner(o.scanner ?? scannerOptionsFromEnv(o.env ?? process.env));
    this.notices = new NoticeQueue(o.now);
    this.registerAction({ id: 'detach', title: 'Detach (the program keeps running)', key: 'd', run: () => this.detach() });
    this.registerAction({
      id: 'send-palette-key',
      title: 'Send the palette key to the program',
      key: 'palette',
      run: () => this.sendInput(Buffer.from([0x1c])),
    });
    this.registerAction({ id: 'redraw', title: 'Redraw the screen', key: 'r', run: () => void this.repaint() });
  }

  /** Adds a palette action (features register theirs before start). */
  registerAction(action: SessionAction): void {
    this.actions.set(action.id, action);
    const { run: _run, ...shown } = action;
    this.palette.register(shown);
  }

  /** Lets a feature claim paste-key, paste or mouse events. */
  setHook(kind: 'pasteKey' | 'paste' | 'mouse', hook: InputHook): void {
    this.hooks[kind] = hook;
  }

  /** True when this host draws its own palette and notices (our capsule, which repaints on request). */
  get drawsOverlay(): boolean {
    return this.negotiated?.['repaint'] !== undefined;
  }

  /**
   * Tells the operator the outcome of a host action. Drawn by the host over the session when the capsule
   * can repaint; with an upstream capsule it is sent as a HostNotice for the capsule to show.
   */
  notify(level: NoticeLevel, text: string): void {
    this.o.log?.(`notice (${level}): ${text}`);
    if (this.finished) return;
    if (!this.drawsOverlay) {
      if (this.negotiated === null && this.welcomed) {
        // Made inert here too: an upstream capsule may draw the text as it is.
        this.send({ type: 'HostNotice', text: truncateUtf8(noticeLine({ level, text: inertText(text, NOTICE_MAX_COLUMNS) }), MAX_HOST_NOTICE_BYTES) });
      }
      return;
    }
    if (this.notices.post(level, text)) this.drawNotice();
    this.scheduleNoticeTimer();
  }

  /** Holds typed input until `release` (an image paste in progress): keys reach the program after the path. */
  holdInput(): () => void {
    this.holds += 1;
    this.held ??= [];
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.holds -= 1;
      if (this.holds > 0) return;
      const held = this.held ?? [];
      this.held = null;
      for (const chunk of held) this.onInput(chunk);
    };
  }

  /** Sends bytes to the program as typed input. */
  sendInput(bytes: Buffer): void {
    if (bytes.length > 0) this.send({ type: 'Input', bytes });
  }

  /** Sends any client frame (features use this for image transfers and extension requests). */
  sendFrame(f: ClientFrame): boolean {
    if (this.finished) return false;
    return this.send(f);
  }

  get terminalSize(): { rows: number; cols: number } {
    return this.o.terminal.size();
  }

  /** Extensions agreed with the capsule (null for an upstream capsule or before Welcome). */
  get features(): Features | null {
    return this.negotiated;
  }

  /**
   * Resolves once the transport takes more bytes (after a sendFrame that returned false), or when the
   * session ends. Features sending megabytes await it between frames, so output and keys keep flowing.
   */
  drained(): Promise<void> {
    const w = this.o.transport.writable;
    if (this.finished || !w.writableNeedDrain) return Promise.resolve();
    return new Promise((resolve) => {
      const done = (): void => {
        w.off('drain', done);
        w.off('close', done);
        resolve();
      };
      w.once('drain', done);
      w.once('close', done);
      void this.done.then(done);
    });
  }

  /** Writes terminal control sequences of our own (mouse capture) to the operator's terminal. */
  writeTerminal(bytes: Buffer): void {
    if (!this.finished) this.o.terminal.write(bytes);
  }

  /** Sends Hello and starts relaying. Returns `done`. */
  start(): Promise<AttachOutcome> {
    const { transport, terminal } = this.o;
    const env = this.o.env ?? process.env;
    const { rows, cols } = terminal.size();
    const unset = 'unset' as const;
    this.send({
      type: 'Hello',
      rows,
      cols,
      spawn: { kind: 'none' },
      env: [],
      focus: null,
      term: env['TERM'] || null,
      termProgram: env['TERM_PROGRAM'] || null,
      colorTerm: env['COLORTERM'] || null,
      fg: null,
      bg: null,
      caps: { pointerShapes: unset, truecolor: unset, synchronizedOutput: unset, osc8: unset, underlineStyle: unset, imageProtocol: unset },
      context: null,
    });

    const onData = (chunk: Buffer) => this.onServerBytes(chunk);
    const onEnd = () => this.onServerEnd();
    const onError = (e: Error) => void this.lose(`connection error: ${e.message}`);
    transport.readable.on('data', onData);
    transport.readable.on('end', onEnd);
    transport.readable.on('error', onError);
    transport.writable.on('error', onError);
    this.offs.push(() => {
      transport.readable.off('data', onData);
      transport.readable.off('end', onEnd);
      transport.readable.off('error', onError);
      transport.writable.off('error', onError);
    });

    const onInput = (chunk: Buffer) => this.onInput(chunk);
    terminal.stdin.on('data', onInput);
    terminal.stdin.resume();
    this.offs.push(() => terminal.stdin.off('data', onInput));
    terminal.onResize((size) => {
      this.send({ type: 'Resize', rows: size.rows, cols: size.cols });
      if (this.palette.isOpen) this.drawPalette();
      else if (this.notices.current) this.scheduleNoticeRedraw();
    });
    return this.done;
  }

  /** Asks the capsule to resend modes and the full screen (only when negotiated). Returns whether sent. */
  repaint(): boolean {
    if (this.negotiated?.['repaint'] === undefined) return false;
    this.send({ type: 'Repaint' });
    return true;
  }

  /** Detaches: the program keeps running. */
  detach(): void {
    if (this.detaching || this.finished) return;
    this.detaching = true;
    this.o.terminal.stdin.pause();
    this.send({ type: 'AttachControl', requestId: DETACH_REQUEST_ID, context: { v: 1 }, body: { kind: 'Detach' } });
    this.detachTimer = setTimeout(() => this.finish({ kind: 'detached' }), DETACH_REPLY_TIMEOUT_MS);
  }

  /** Ends the session from outside (a signal); the transport is closed. */
  abort(reason: string): void {
    this.finish({ kind: 'lost', reason });
  }

  private send(f: ClientFrame): boolean {
    if (this.finished) return false;
    const ok = this.o.transport.writable.write(encodeClientFrame(f));
    if (!ok && f.type === 'Input' && !this.inputPaused) {
      // A large paste outruns the capsule: stop reading the keyboard until the transport drains.
      this.inputPaused = true;
      this.o.terminal.stdin.pause();
      this.o.transport.writable.once('drain', () => {
        this.inputPaused = false;
        if (!this.finished && !this.detaching) this.o.terminal.stdin.resume();
      });
    }
    return ok;
  }

  private onInput(chunk: Buffer): void {
    if (this.detaching || this.finished) return;
    if (this.held !== null) {
      this.held.push(chunk);
      return;
    }
    clearTimeout(this.flushTimer);
    this.dispatch(this.scanner.push(chunk));
    if (this.scanner.pending) {
      const inPaste = this.scanner.inPaste;
      this.flushTimer = setTimeout(
        () => this.dispatch(this.scanner.flush({ endPaste: inPaste })),
        inPaste ? PASTE_FLUSH_MS : ESCAPE_FLUSH_MS,
      );
    }
  }

  private dispatch(events: InputEvent[]): void {
    for (const ev of events) {
      if (this.detaching || this.finished) return;
      if (this.held !== null) {
        // A hook started holding input: what follows in this read waits with the rest.
        this.held.push(ev.type === 'bytes' ? ev.bytes : ev.raw);
        continue;
      }
      if (this.palette.isOpen) {
        this.paletteEvent(ev);
        continue;
      }
      switch (ev.type) {
        case 'bytes':
          this.sendInput(ev.bytes);
          break;
        case 'palette-key':
          this.emit('gesture', 'palette-key');
          if (this.drawsOverlay) this.openPalette();
          else this.sendInput(ev.raw); // an upstream capsule has its own palette
          break;
        case 'paste-key':
          if (!this.hooks.pasteKey?.(ev)) this.sendInput(ev.raw);
          break;
        case 'paste':
          if (!this.hooks.paste?.(ev)) this.sendInput(ev.raw);
          break;
        case 'mouse':
          if (!this.hooks.mouse?.(ev)) this.sendInput(ev.raw);
          break;
        default: {
          const never: never = ev;
          throw new TypeError(`unexpected input event ${JSON.stringify(never)}`);
        }
      }
    }
  }

  private paletteEvent(ev: InputEvent): void {
    let results: PaletteResult[];
    switch (ev.type) {
      case 'palette-key':
        results = [this.palette.paletteKey()];
        break;
      case 'bytes':
        results = this.palette.input(ev.bytes);
        break;
      case 'paste':
        // Pasting into the palette's prompt (a path to export) is ordinary text entry; never an action.
        results = this.palette.input(Buffer.from(ev.content.toString('utf8').replace(/[\r\n]+/g, ' ').trim(), 'utf8'));
        break;
      default:
        results = [];
    }
    for (const r of results) {
      if (r.type === 'none') continue;
      this.closePalette();
      if (r.type === 'run') {
        const action = this.actions.get(r.action.id);
        this.emit('gesture', 'palette-action');
        if (action) this.runAction(action, r.argument);
      }
      return;
    }
    if (this.palette.isOpen) this.drawPalette();
  }

  /** Runs an action now (so a key it sends keeps its place among typed bytes); reports its failure. */
  private runAction(action: SessionAction, argument?: string): void {
    const fail = (e: unknown) => this.notify('error', `${action.title}: ${e instanceof Error ? e.message : String(e)}`);
    try {
      const p = action.run(argument);
      if (p instanceof Promise) p.catch(fail);
    } catch (e) {
      fail(e);
    }
  }

  private openPalette(): void {
    this.palette.open();
    this.drawPalette();
  }

  private drawPalette(): void {
    const { rows, cols } = this.o.terminal.size();
    this.o.terminal.write(Buffer.from(this.palette.render(rows, cols), 'utf8'));
  }

  /** Closes the palette; the capsule repaints the program's screen, which kept updating meanwhile. */
  private closePalette(): void {
    this.palette.close();
    this.repaint();
    if (this.notices.current) this.scheduleNoticeRedraw();
  }

  private drawNotice(): void {
    const n = this.notices.current;
    if (n === null || this.palette.isOpen || this.finished) return;
    this.o.terminal.write(Buffer.from(renderNotice(n, this.o.terminal.size().cols), 'utf8'));
  }

  private scheduleNoticeRedraw(): void {
    clearTimeout(this.noticeRedrawTimer);
    this.noticeRedrawTimer = setTimeout(() => this.drawNotice(), NOTICE_REDRAW_MS);
  }

  private scheduleNoticeTimer(): void {
    clearTimeout(this.noticeTimer);
    const deadline = this.notices.deadline;
    if (deadline === null) return;
    const now = (this.o.now ?? Date.now)();
    this.noticeTimer = setTimeout(() => {
      if (this.notices.tick()) {
        // Remove the old notice by repainting the program's screen, then draw the next one (if any) over it.
        if (!this.palette.isOpen) this.repaint();
        if (this.notices.current) this.scheduleNoticeRedraw();
      }
      this.scheduleNoticeTimer();
    }, Math.max(0, deadline - now));
  }

  private onServerBytes(chunk: Buffer): void {
    let items;
    try {
      items = this.decoder.push(chunk);
    } catch (e) {
      void this.lose(`protocol error: ${e instanceof Error ? e.message : String(e)}`);
      return;
    }
    for (const item of items) {
      if (this.finished) return;
      if (!item.ok) {
        // The stream is still in sync: skip the frame (protocol.md section 5) and say so.
        this.o.log?.(`skipped a malformed frame from the capsule: ${item.error.message}`);
        if (item.error.tag === SERVER_TAGS.Welcome && !this.welcomed) {
          // A Welcome whose extension block is malformed: talk to it as to an upstream capsule.
          this.welcomed = true;
          this.emit('welcome', { sessions: 0, features: null });
          this.notify('warning', `the capsule sent a malformed extension block (${item.error.code}); extensions disabled`);
        } else if (this.skippedNotices.tryTake()) {
          this.notify('warning', `skipped a malformed frame from the capsule: ${item.error.code} ${item.error.message}`);
        }
        continue;
      }
      this.onFrame(item.frame);
    }
    // Frames before a framing error in the same read were handled above (an ExitStatus still counts);
    // the stream itself is lost.
    const failure = this.decoder.failure;
    if (failure && !this.finished) void this.lose(`protocol error: ${failure.message}`);
  }

  private onFrame(f: ServerFrame): void {
    switch (f.type) {
      case 'Output':
        // While the palette is up the program's output only updates the capsule's screen model; closing the
        // palette repaints from it, so nothing is lost and nothing draws over the palette.
        if (this.palette.isOpen) return;
        if (this.notices.current) this.scheduleNoticeRedraw();
        if (!this.o.terminal.write(f.bytes) && !this.outputPaused) {
          this.outputPaused = true;
          this.o.transport.readable.pause();
          this.o.terminal.onceDrain(() => {
            this.outputPaused = false;
            if (!this.finished) this.o.transport.readable.resume();
          });
        }
        return;
      case 'Welcome':
        this.o.log?.(`welcome: ${f.sessions} session(s), features ${f.features === null ? 'none (upstream capsule)' : JSON.stringify(f.features)}`);
        this.welcomed = true;
        if (f.features !== null) {
          this.negotiated = negotiateFeatures(f.features);
          this.send({ type: 'ExtHello', features: this.negotiated });
        }
        this.emit('welcome', { sessions: f.sessions, features: f.features });
        return;
      case 'Bell':
        this.o.terminal.write(BEL);
        return;
      case 'ExitStatus':
        this.exitStatus = f.status;
        return;
      case 'Notice':
        this.emit('notice', { level: f.level, text: f.text });
        // Said by the container, which is untrusted: marked so it cannot pass for the host's own notice.
        this.notify(f.level, `capsule: ${f.text}`);
        return;
      case 'Shutdown':
        this.o.log?.(`shutdown${f.reason === null ? '' : `: ${f.reason}`}`);
        this.finish(this.endOutcome(f.reason));
        return;
      case 'AttachControlResponse':
        this.o.log?.(`attach-control response ${f.requestId}: ${f.result}`);
        // Features that sent a request (image paste) wait for its answer.
        this.emit('frame', f);
        return;
      case 'SessionList':
      case 'HostOpenUrl':
      case 'FileExportStart':
      case 'FileExportChunk':
      case 'FileExportEnd':
      case 'HostStageImageFromClipboardPath':
      case 'HostPasteImageFromClipboard':
      case 'HostStageImageFromClipboard':
      case 'HostRevealPath':
      case 'Resolved':
      case 'ImageStaged':
      case 'Modes':
      case 'FileExportLength':
        if (this.listenerCount('frame') === 0) this.o.log?.(`ignored ${f.type} frame (not handled by this host)`);
        this.emit('frame', f);
        return;
      default: {
        const never: never = f;
        throw new TypeError(`unexpected frame ${JSON.stringify(never)}`);
      }
    }
  }

  /** How the session ends when the capsule says so (Shutdown, or a clean close). */
  private endOutcome(reason: string | null): AttachOutcome {
    if (this.exitStatus !== null) return { kind: 'exited', status: this.exitStatus, reason };
    if (this.detaching) return { kind: 'detached' };
    return { kind: 'shutdown', reason };
  }

  private onServerEnd(): void {
    if (this.finished) return;
    try {
      this.decoder.end();
    } catch (e) {
      void this.lose(e instanceof ProtocolError ? `the stream ended inside a frame (${e.message})` : String(e));
      return;
    }
    if (this.exitStatus !== null || this.detaching) this.finish(this.endOutcome(null));
    // Before the capsule said anything, the carrier failed to reach it (its own account follows), rather
    // than a capsule that closed a session.
    else void this.lose(this.welcomed ? 'the capsule closed the connection' : 'the connection closed before the capsule answered');
  }

  private async lose(reason: string): Promise<void> {
    if (this.finished) return;
    if (this.detaching) {
      this.finish({ kind: 'detached' });
      return;
    }
    if (this.exitStatus !== null) {
      this.finish({ kind: 'exited', status: this.exitStatus });
      return;
    }
    // Stop taking input now; ask the carrier (a relay) for its own account of what happened.
    this.o.terminal.stdin.pause();
    const timeout = new Promise<null>((resolve) => setTimeout(() => resolve(null), FAILURE_DETAIL_TIMEOUT_MS).unref());
    const detail = await Promise.race([this.o.transport.failureDetail(), timeout]);
    this.finish({ kind: 'lost', reason: detail === null ? reason : `${reason} (${detail})` });
  }

  private finish(outcome: AttachOutcome): void {
    if (this.finished) return;
    this.finished = true;
    clearTimeout(this.detachTimer);
    clearTimeout(this.flushTimer);
    clearTimeout(this.noticeTimer);
    clearTimeout(this.noticeRedrawTimer);
    for (const off of this.offs.splice(0)) off();
    this.o.terminal.stdin.pause();
    this.o.transport.close();
    this.resolveDone(outcome);
  }
}
