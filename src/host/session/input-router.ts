/**
 * Routes the operator's keyboard to where it belongs: the input scanner splits it into events; while one of
 * the host's modals is up (the prompt, a feature's overlay, the palette) the modal stack gives each event to
 * the one that has the keyboard (modal-stack.ts); the palette key opens the palette (or goes to an upstream capsule, which
 * has its own); paste-key, paste and mouse events are offered to the features' hooks; everything else is
 * typed input for the program. Terminal replies go to the program only when due (terminal-filter/replies.ts),
 * focus reports only while it asked for them (the host reads each one itself);
 * a paste goes in brackets only when the program asked for bracketed paste (the host keeps the terminal's
 * bracketed paste on for itself, docs/terminal-policy.md). Two timers flush what the scanner holds back (a lone ESC, a paste whose
 * end marker never comes), and while a feature holds input (an image paste) it waits and follows, in order.
 * A palette key, paste key, paste or mouse event read before the capsule's Welcome waits for it the same
 * way: only then is it known whether the host draws the palette or an upstream capsule gets the key, and
 * which features the capsule has (a paste or a click acted on before would go out without them).
 */
import { DisposableStore, toDisposable, type Disposable } from '../../disposable.ts';
import type { Gesture, InputHook, InputHookKind, InputTap } from './feature-session.ts';
import { InputScanner, type InputEvent, type InputScannerOptions } from '../terminal/input-scan.ts';
import { encodeForProgram } from '../terminal/mouse-report.ts';
import type { ModalStack } from './modal-stack.ts';
import type { PaletteController } from './palette-controller.ts';
import type { ProgramModes } from '../terminal/terminal-filter/modes.ts';
import { shouldForwardReply, type ReplyExpectations } from '../terminal/terminal-filter/replies.ts';

/**
 * A lone ESC (or the start of a sequence) is held this long for the rest of its sequence before it is sent
 * as typed: terminals write a whole sequence at once, so only a real Escape key waits, and only this long.
 */
export const ESCAPE_FLUSH_MS = 15;
/** A bracketed paste whose end marker never comes is passed through after this much silence. */
export const PASTE_FLUSH_MS = 500;
/**
 * A terminal reply held for its rest (a long reply comes in several reads) is given up, and dropped, after
 * this much silence: waiting only as long as for an Escape key would let the rest of a slow reply be typed.
 */
export const REPLY_FLUSH_MS = 500;

/**
 * How long the keyboard was silent after a held read: not yet as long as a flush timer waits, as long as
 * the Escape key's (ESCAPE_FLUSH_MS), as long as a paste's or a reply's (PASTE_FLUSH_MS, REPLY_FLUSH_MS).
 */
type HeldSilence = 0 | 1 | 2;
const HeldSilence = { None: 0, Escape: 1, Long: 2 } as const;

export interface InputRouterOptions {
  scanner: InputScannerOptions;
  /** Opens the palette (the palette key, when this host draws it). */
  palette: Pick<PaletteController, 'open'>;
  /** The host's modals (prompt, feature overlay, palette): the one that has the keyboard takes each event. */
  modals: Pick<ModalStack, 'promptOpen' | 'take'>;
  /** Typed input for the program. */
  sendInput: (bytes: Buffer) => void;
  /** False once the session detaches or ends: input is dropped. */
  active: () => boolean;
  /**
   * True when this host draws its own palette (our capsule); false for an upstream capsule, which gets the
   * palette key; null while the capsule's Welcome has not said which (see `welcomed`).
   */
  drawsOverlay: () => boolean | null;
  gesture: (g: Gesture) => void;
  /** The terminal filter: the replies due (the queries it let out) and the modes the program asked for. */
  filter: { readonly expectations: ReplyExpectations; readonly program: Readonly<ProgramModes> };
  /** Diagnostics for dropped replies. */
  log?: (line: string) => void;
  /** The operator's terminal reported focus in (true) or out (false). */
  focusReport?: (focused: boolean) => void;
}

export class InputRouter implements Disposable {
  readonly #scanner: InputScanner;
  readonly #hooks: Record<InputHookKind, InputHook[]> = { pasteKey: [], paste: [], mouse: [] };
  readonly #taps: InputTap[] = [];
  readonly #store = new DisposableStore();
  #flushTimer: NodeJS.Timeout | undefined;
  /**
   * While held (an image paste in progress), typed input waits here and is sent after, in order: reads not
   * yet scanned (`scan`), and bytes the scanner already classed as typed (`typed`), which must not be
   * scanned again (the keys after a paste's end in one read would become triggers on a second look).
   * A held read also keeps how long the keyboard was silent after it (`silence`, see HeldSilence): replayed
   * back to back, a lone Escape at the end of one would otherwise join the next read's key (Escape then
   * Ctrl+V would become Alt+Ctrl+V, and the paste key would be lost).
   */
  #held: Array<{ scan: Buffer; silence: HeldSilence } | { typed: Buffer }> | null = null;
  #holds = 0;
  /** Marks the silence after the newest held read; replaced by the next one. */
  #silenceTimer: NodeJS.Timeout | undefined;
  /** Counts reads, so a flush timer knows whether another read came after the one that armed it. */
  #reads = 0;
  /** The hold taken by an event read before the capsule's Welcome; released by `welcomed`. */
  #welcomeHold: Disposable | null = null;

  readonly #o: InputRouterOptions;
  constructor(o: InputRouterOptions) {
    this.#o = o;
    this.#scanner = new InputScanner({ ...o.scanner, replies: o.filter.expectations, pasteBrackets: () => o.filter.program.bracketedPaste });
    this.#store.add(toDisposable(() => (clearTimeout(this.#flushTimer), clearTimeout(this.#silenceTimer))));
  }

  addHook(kind: InputHookKind, hook: InputHook): Disposable {
    const list = this.#hooks[kind];
    list.unshift(hook);
    return toDisposable(() => {
      const at = list.indexOf(hook);
      if (at >= 0) list.splice(at, 1);
    });
  }

  /** Adds a tap that sees every read first (see InputTap); disposing removes it. */
  addTap(tap: InputTap): Disposable {
    this.#taps.push(tap);
    tap.attach?.((bytes) => this.push(bytes));
    return toDisposable(() => {
      const at = this.#taps.indexOf(tap);
      if (at >= 0) this.#taps.splice(at, 1);
    });
  }

  /** Holds typed input until the result is disposed; holds nest. */
  hold(): Disposable {
    this.#holds += 1;
    this.#held ??= [];
    return toDisposable(() => {
      this.#holds -= 1;
      if (this.#holds > 0) return;
      const held = this.#held ?? [];
      this.#held = null;
      clearTimeout(this.#silenceTimer);
      // A replayed read may start a new hold (what follows it waits again) or open the palette (what follows
      // it goes there): typed bytes are routed like any read's, only never scanned again.
      for (const h of held) {
        if ('typed' in h) this.#dispatch([{ type: 'bytes', bytes: h.typed }]);
        else this.#replay(h.scan, h.silence);
      }
      if (this.#held === null) this.#armFlush();
    });
  }

  /**
   * The capsule's Welcome arrived (`drawsOverlay` now answers): a palette key held for it, and everything
   * read after it, goes where it belongs, in order.
   */
  welcomed(): void {
    const hold = this.#welcomeHold;
    this.#welcomeHold = null;
    hold?.dispose();
  }

  /** Bytes read from the operator's terminal. */
  push(read: Buffer): void {
    if (!this.#o.active() || this.#store.isDisposed) return;
    let chunk = read;
    for (const tap of this.#taps) chunk = tap.take(chunk);
    if (chunk.length === 0) return;
    this.#reads += 1;
    if (this.#held !== null) {
      // A feature holding input asks the operator (a pasted symlink's target): what is typed now answers
      // the prompt, whole reads as the prompt takes them, and is not kept for the program.
      if (this.#o.modals.promptOpen) this.#o.modals.take({ type: 'bytes', bytes: chunk });
      else this.#holdRead(chunk, HeldSilence.None);
      return;
    }
    clearTimeout(this.#flushTimer);
    this.#dispatch(this.#scanner.push(chunk));
    if (this.#held !== null) this.#holdTail(HeldSilence.None);
    else this.#armFlush();
  }

  /**
   * A hook started holding input during a read: the bytes the scanner still holds from it (a partial
   * sequence at its end) come after the events already held, so they are held with them, in order.
   */
  #holdTail(silence: HeldSilence): void {
    const tail = this.#scanner.takeHeld();
    if (tail.length > 0) this.#holdRead(tail, silence);
  }

  /**
   * Arms the timer that releases what the scanner holds back (a lone ESC, a paste without its end, a reply
   * cut short) after the silence that says it is complete. It flushes only if no read came meanwhile: one
   * that came while input was held continues the sequence when it is replayed. Flushed bytes go where any
   * read's go (into the held input, after everything before them, while held).
   */
  #armFlush(): void {
    clearTimeout(this.#flushTimer);
    if (!this.#scanner.pending) return;
    const inPaste = this.#scanner.inPaste;
    const wait = inPaste ? PASTE_FLUSH_MS : this.#scanner.holdsReply ? REPLY_FLUSH_MS : ESCAPE_FLUSH_MS;
    const reads = this.#reads;
    this.#flushTimer = setTimeout(() => {
      if (this.#reads === reads) this.#dispatch(this.#scanner.flush({ endPaste: inPaste }));
    }, wait);
  }

  /** Keeps a read while input is held, and marks the silence after it until the next read. */
  #holdRead(chunk: Buffer, silence: HeldSilence): void {
    const entry = { scan: chunk, silence };
    this.#held?.push(entry);
    clearTimeout(this.#silenceTimer);
    if (silence === HeldSilence.Long) return;
    const long = (): void => {
      entry.silence = HeldSilence.Long;
    };
    this.#silenceTimer = setTimeout(
      () => {
        entry.silence = HeldSilence.Escape;
        this.#silenceTimer = setTimeout(long, PASTE_FLUSH_MS - ESCAPE_FLUSH_MS);
      },
      silence === HeldSilence.None ? ESCAPE_FLUSH_MS : 0,
    );
  }

  /** A held read, scanned now; what the scanner then holds back is released if the silence after the read would have. */
  #replay(chunk: Buffer, silence: HeldSilence): void {
    if (!this.#o.active() || this.#store.isDisposed) return;
    if (this.#held !== null) {
      this.#holdRead(chunk, silence);
      return;
    }
    clearTimeout(this.#flushTimer);
    this.#dispatch(this.#scanner.push(chunk));
    if (this.#held !== null) {
      this.#holdTail(silence);
      return;
    }
    if (!this.#scanner.pending) return;
    const inPaste = this.#scanner.inPaste;
    const needed = inPaste || this.#scanner.holdsReply ? HeldSilence.Long : HeldSilence.Escape;
    if (silence >= needed) this.#dispatch(this.#scanner.flush({ endPaste: inPaste }));
  }

  dispose(): void {
    this.#store.dispose();
  }

  #dispatch(events: InputEvent[]): void {
    for (const ev of events) {
      if (!this.#o.active() || this.#store.isDisposed) return;
      if (this.#held !== null) {
        // A hook started holding input: what follows in this read waits with the rest.
        this.#held.push(ev.type === 'bytes' ? { typed: ev.bytes } : { scan: ev.raw, silence: HeldSilence.None });
        continue;
      }
      // The modal that has the keyboard (modal-stack.ts) takes the event. Keys typed after the one that closed
      // it, in the same read, are the operator's next keys: they go where they would a moment later (held,
      // when the chosen action holds input until it is done).
      const rest = this.#o.modals.take(ev);
      if (rest !== null) {
        if (rest.length > 0) this.#dispatch([{ type: 'bytes', bytes: rest }]);
        continue;
      }
      if (ev.type === 'reply') {
        // The host reads focus reports itself (they may be on for it alone), and passes them on only when asked.
        if (ev.kind === 'focus') this.#o.focusReport?.(ev.raw[ev.raw.length - 1] === 0x49);
        if (ev.kind === 'kitty-clipboard') {
          // Always the host's: the filter lets no OSC 5522 of the program out. Its body, without ESC ] and the terminator.
          const body = ev.raw.subarray(2, ev.raw.length - (ev.raw[ev.raw.length - 1] === 0x07 ? 1 : 2));
          for (const tap of this.#taps) tap.reply(body);
          if (this.#taps.length === 0) this.#o.log?.('dropped a clipboard packet from the terminal (no terminal clipboard in use)');
          continue;
        }
        if (shouldForwardReply(ev.kind, this.#o.filter.expectations, this.#o.filter.program.focus)) this.#o.sendInput(ev.raw);
        else this.#o.log?.(`dropped a terminal reply (${ev.kind}) that no query let out`);
        continue;
      }
      if (ev.type !== 'bytes' && this.#o.drawsOverlay() === null) {
        // Read between Hello and Welcome: a palette key forwarded now would reach our capsule's program as
        // typed (0x1c, a SIGQUIT on its terminal), and a paste or click would act before the features are
        // known. It waits for the Welcome instead, and so does everything typed after it.
        this.#holdForWelcome(ev.raw);
        continue;
      }
      switch (ev.type) {
        case 'bytes':
          this.#o.sendInput(ev.bytes);
          break;
        case 'palette-key': {
          const ours = this.#o.drawsOverlay() === true;
          this.#o.gesture('palette-key');
          if (ours) this.#o.palette.open();
          else this.#o.sendInput(ev.raw); // an upstream capsule has its own palette
          break;
        }
        case 'paste-key':
          this.#offer('pasteKey', ev);
          break;
        case 'paste':
          this.#offer('paste', ev, this.#o.filter.program.bracketedPaste ? ev.raw : ev.content);
          break;
        case 'mouse':
          // Unclaimed, the report goes to the program in the encoding it asked for (the terminal reports in
          // SGR whenever a mouse mode is on), or nowhere when it asked for none.
          this.#offer('mouse', ev, encodeForProgram(ev, this.#o.filter.program));
          break;
        default: {
          const never: never = ev;
          throw new TypeError(`unexpected input event ${JSON.stringify(never)}`);
        }
      }
    }
  }

  /** Holds input from this event on (its raw bytes first, scanned again then) until `welcomed`. */
  #holdForWelcome(raw: Buffer): void {
    this.#welcomeHold ??= this.hold();
    this.#held?.push({ scan: raw, silence: HeldSilence.None });
  }

  /** Offers an event to the hooks of its kind, newest first; unclaimed, its bytes (`unclaimed`) go to the program. */
  #offer(kind: InputHookKind, ev: Extract<InputEvent, { raw: Buffer }>, unclaimed: Buffer = ev.raw): void {
    for (const hook of [...this.#hooks[kind]]) if (hook(ev)) return;
    if (unclaimed.length > 0) this.#o.sendInput(unclaimed);
  }
}
