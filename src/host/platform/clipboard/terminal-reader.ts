/**
 * The operator's terminal as the clipboard (JACKIN_CLIPBOARD=terminal, or a remote session with no clipboard
 * of its own): the image is asked of the terminal through the kitty clipboard protocol (osc5522.ts). The
 * terminal's answers arrive on jackin's input, mixed with the operator's keys: while a question is out, the
 * session hands every read to `take` first (an input tap, which runs before input is held, so a paste that
 * holds the keyboard still hears its answer), which keeps the answers and gives back the keys.
 *
 * Support is asked once, at the first read (DECRQM 5522); a terminal that does not answer in time, or says no,
 * cannot send images (E_TERMINAL_NO_IMAGES, with what would). Every wait is bounded.
 */
import { JackinError, type ErrorCode } from '../../../errors.ts';
import {
  DETECT_QUERY,
  decodeOsc52,
  decrpmSupported,
  encodeReadRequest,
  OSC52_QUERY,
  parsePacket,
  ReadAssembler,
  ReplyExtractor,
  type ReadOutcome,
} from './osc5522.ts';
import type { ClipboardContent, ClipboardReader, ReadLimits } from './types.ts';

/** How long the terminal has to answer the DECRQM: terminals answer within milliseconds, or never. */
const DETECT_TIMEOUT_MS = 1_500;
/** How long the terminal has for its first answer to a read: it may ask the operator for permission first. */
const FIRST_REPLY_TIMEOUT_MS = 60_000;

/** What the operator is told when the terminal cannot send images. */
export const NO_IMAGES_HELP =
  'your terminal cannot send images: it does not speak the kitty clipboard protocol (OSC 5522); kitty and Ghostty do. Or copy the file over and run jackin stage FILE';

/** Where the reader writes its questions, and how the session lets it see the terminal's answers. */
export interface TerminalLink {
  /** Writes to the operator's terminal. */
  write(bytes: Buffer): void;
  /** Diagnostics (a dropped packet). */
  log?: (line: string) => void;
}

/** A paste the terminal told of (paste events, mode 5522): the types its clipboard offers, and the one-use password (base64, as sent). */
export interface PasteEvent {
  offered: readonly string[];
  pw: string | null;
}

/** Longest paste event accepted (its list of types). */
const MAX_EVENT_BYTES = 16 * 1024;

type Waiter = {
  /** Takes one packet body (already extracted); returns true when the wait is over. */
  packet?: (body: Buffer) => boolean;
  decrpm?: (ps: number) => boolean;
  /** Takes one OSC 52 answer (what follows `ESC ] 52 ;`); returns true when the wait is over. */
  osc52?: (body: Buffer) => boolean;
};

export class TerminalClipboardReader implements ClipboardReader {
  readonly name = 'terminal' as const;
  readonly reason: string;
  readonly #link: TerminalLink;
  readonly #limits: ReadLimits;
  readonly #detectTimeoutMs: number;
  readonly #firstReplyTimeoutMs: number;
  readonly #extractor = new ReplyExtractor();
  #waiter: Waiter | null = null;
  /** Null until asked; then whether the terminal knows mode 5522. */
  #supported: Promise<boolean> | null = null;
  #reads = 0;
  /** Bytes the extractor held when the wait ended, for the keyboard at the next read. */
  #released: Buffer = Buffer.alloc(0);
  #taking = false;
  #feed: ((bytes: Buffer) => void) | null = null;
  /** The paste event being received (no read out), and who hears of each one complete. */
  #event: ReadAssembler | null = null;
  onPasteEvent: ((ev: PasteEvent) => void) | null = null;
  /** Hears of what the terminal sent that was dropped as malformed (in jackin's words, never the bytes). */
  onMalformed: ((why: string) => void) | null = null;

  constructor(link: TerminalLink, reason: string, limits: ReadLimits, opts: { detectTimeoutMs?: number; firstReplyTimeoutMs?: number } = {}) {
    this.#link = link;
    this.reason = reason;
    this.#limits = limits;
    this.#detectTimeoutMs = opts.detectTimeoutMs ?? DETECT_TIMEOUT_MS;
    this.#firstReplyTimeoutMs = opts.firstReplyTimeoutMs ?? FIRST_REPLY_TIMEOUT_MS;
  }

  /** True while a question to the terminal is out (its answers are taken from the input). */
  get waiting(): boolean {
    return this.#waiter !== null;
  }

  /**
   * The input tap: while a question is out, the terminal's answers are taken out of `chunk`; what remains
   * (the operator's keys) is returned, in order. Otherwise `chunk` is returned as is.
   */
  take(chunk: Buffer): Buffer {
    const before = this.#released;
    if (before.length > 0) this.#released = Buffer.alloc(0);
    if (this.#waiter === null) return before.length === 0 ? chunk : Buffer.concat([before, chunk]);
    this.#taking = true;
    let got: ReturnType<ReplyExtractor['push']>;
    try {
      got = this.#extractor.push(chunk);
      if (got.dropped > 0) this.#malformed('a clipboard packet over the length limit');
      for (const ps of got.decrpm) if (this.#waiter?.decrpm?.(ps)) this.#end();
      for (const body of got.packets) if (this.#waiter?.packet?.(body)) this.#end();
      for (const body of got.osc52) if (this.#waiter?.osc52?.(body)) this.#end();
    } finally {
      this.#taking = false;
    }
    // The answer ended in this read: what the extractor held at its end (a lone Escape key) follows the rest.
    const tail = this.#released;
    this.#released = Buffer.alloc(0);
    return Buffer.concat([before, got.rest, tail]);
  }

  /** How bytes held when a wait ends outside a read (a timeout) go back to the keyboard at once (input-router.ts). */
  attach(feed: (bytes: Buffer) => void): void {
    this.#feed = feed;
  }

  /**
   * An OSC 5522 packet that reached the keyboard's scanner whole (no question out when it came): taken when a
   * question is out, else dropped (a late answer, or one nobody asked for).
   */
  reply(body: Buffer): void {
    if (this.#waiter !== null) {
      if (this.#waiter.packet?.(body)) this.#end();
      return;
    }
    this.#eventPacket(body);
  }

  /**
   * A packet with no read out: part of a paste event (OK with its password, the types, DONE), else dropped.
   * A malformed event is dropped whole, with a line in the log; it never becomes typing.
   */
  #eventPacket(body: Buffer): void {
    const p = parsePacket(body);
    const drop = (why: string): void => {
      this.#event = null;
      this.#link.log?.(`dropped a clipboard packet from the terminal: ${why}`);
    };
    if (p === null) {
      this.#event = null;
      return this.#malformed('a clipboard packet not of the OSC 5522 form');
    }
    if (p.type !== 'read') return drop(`a packet of type ${p.type} that no read asked for`);
    if (p.status === 'OK') this.#event = new ReadAssembler({ maxBytes: MAX_EVENT_BYTES, listing: true });
    if (this.#event === null) return drop('a late answer, or one no read asked for');
    const o = this.#event.push(p);
    if (o.kind === 'more') return;
    this.#event = null;
    if (o.kind === 'malformed' || o.kind === 'too-large')
      return this.#malformed(`a paste event that was ${o.kind === 'malformed' ? 'malformed' : 'too large'}`);
    if (o.kind !== 'done') return drop('a paste event that ended with an error');
    // kitty lists the types as the data of ".", space separated; others send a DATA packet per type.
    const offered = new Set<string>();
    for (const [mime, data] of o.parts) {
      if (mime !== '.') offered.add(mime);
      else for (const t of data.toString('latin1').split(/\s+/)) if (/^[\x21-\x7e]{1,255}$/.test(t)) offered.add(t);
    }
    this.onPasteEvent?.({ offered: [...offered], pw: o.pw });
  }

  #malformed(why: string): void {
    this.#link.log?.(`dropped ${why} from the terminal`);
    this.onMalformed?.(why);
  }

  #end(): void {
    this.#waiter = null;
    // What the extractor still holds is not an answer: the operator's keys, given back after this read's
    // rest, or (the wait ended between reads) fed back to the keyboard now, else at the next read.
    const held = this.#extractor.release();
    if (held.length === 0) return;
    this.#released = Buffer.concat([this.#released, held]);
    const feed = this.#feed;
    if (this.#taking || feed === null) return;
    setImmediate(() => {
      const bytes = this.#released;
      this.#released = Buffer.alloc(0);
      if (bytes.length > 0) feed(bytes);
    });
  }

  /**
   * Whether the terminal knows mode 5522: asked once (at the session's start, else the first read). A terminal
   * that said nothing in time is asked again at the next read (a slow link); its answer is kept.
   */
  supported(): Promise<boolean> {
    this.#supported ??= this.#wait<boolean>(this.#detectTimeoutMs, (done) => {
      this.#link.write(DETECT_QUERY);
      return { decrpm: (ps) => (done(decrpmSupported(ps)), true) };
    }).catch(() => {
      this.#supported = null;
      return false;
    });
    return this.#supported;
  }

  /** Sets a waiter, resolves with what it gives, or rejects at the timeout (the waiter then ends). */
  #wait<T>(timeoutMs: number, start: (done: (v: T) => void, fail: (e: Error) => void, rearm: (ms: number) => void) => Waiter): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      let settled = false;
      const finish = (): void => {
        settled = true;
        clearTimeout(timer);
      };
      const done = (v: T): void => {
        if (settled) return;
        finish();
        resolve(v);
      };
      const fail = (e: Error): void => {
        if (settled) return;
        finish();
        if (this.#waiter === waiter) this.#end();
        reject(e);
      };
      const rearm = (ms: number): void => {
        clearTimeout(timer);
        timer = setTimeout(() => fail(new JackinError('E_CLIPBOARD_TIMEOUT', 'the terminal did not answer in time')), ms);
      };
      const waiter = start(done, fail, rearm);
      this.#waiter = waiter;
      rearm(timeoutMs);
    });
  }

  async readImage(): Promise<ClipboardContent | null> {
    if (!(await this.supported())) throw new JackinError('E_TERMINAL_NO_IMAGES', NO_IMAGES_HELP);
    const bytes = await this.read('image/png');
    return bytes === null ? null : { kind: 'image', bytes, mimeType: 'image/png', offered: ['image/png'] };
  }

  /**
   * The clipboard's text through OSC 52, for a terminal without 5522: asked once per call, answered within the
   * detection's time or taken as no (most terminals never answer a program's OSC 52 read). Null for none.
   */
  async readText(): Promise<string | null> {
    try {
      return await this.#wait<string | null>(this.#detectTimeoutMs, (done) => {
        this.#link.write(OSC52_QUERY);
        return { osc52: (body) => (done(decodeOsc52(body, this.#limits.maxBytes)), true) };
      });
    } catch {
      return null;
    }
  }

  /** The terminal gives images only; a path is never asked of it. */
  async readPath(): Promise<string | null> {
    return null;
  }

  /**
   * Reads one type from the terminal's clipboard (with a paste event's password, `pw`): its bytes, or null
   * when the clipboard has none of it. Throws a JackinError for each way the read can fail.
   */
  read(mime: string, pw?: string | null): Promise<Buffer | null> {
    this.#reads += 1;
    const id = `jackin${process.pid}-${this.#reads}`;
    const assembler = new ReadAssembler({ maxBytes: this.#limits.maxBytes, id });
    return this.#wait<Buffer | null>(this.#firstReplyTimeoutMs, (done, fail, rearm) => {
      // A paste event's password lets the terminal send without asking the operator again (they pasted).
      this.#link.write(encodeReadRequest([mime], { id, ...(pw !== undefined && pw !== null ? { pw, name: 'Paste event' } : {}) }));
      return {
        packet: (body) => {
          const p = parsePacket(body);
          if (p === null) {
            fail(readError({ kind: 'malformed', reason: 'a packet that is not of the OSC 5522 form' }));
            return true;
          }
          // A reply to an earlier read (another id), or not a read reply: not ours.
          if (!assembler.accepts(p)) return false;
          const o = assembler.push(p);
          if (o.kind === 'more') {
            // Between packets of one answer the terminal is quick: the read's own limit applies.
            rearm(this.#limits.timeoutMs);
            return false;
          }
          if (o.kind === 'done') done(o.parts.get(mime) ?? null);
          else fail(readError(o));
          return true;
        },
      };
    });
  }
}

const STATUS_CODES: Record<string, { code: ErrorCode; text: string }> = {
  EPERM: {
    code: 'E_TERMINAL_CLIPBOARD_DENIED',
    text: 'your terminal refused to share its clipboard (EPERM): allow clipboard reads in its settings, or answer its prompt',
  },
  EBUSY: { code: 'E_TERMINAL_CLIPBOARD_BUSY', text: 'your terminal is busy with another clipboard request (EBUSY): paste again' },
  ENOSYS: { code: 'E_TERMINAL_CLIPBOARD_UNAVAILABLE', text: 'your terminal has no such clipboard (ENOSYS)' },
};

/** The error the operator is told for a read that did not end with the image. */
function readError(o: Exclude<ReadOutcome, { kind: 'more' } | { kind: 'done' }>): JackinError {
  switch (o.kind) {
    case 'error': {
      const known = o.known === null ? undefined : STATUS_CODES[o.known];
      if (known !== undefined) return new JackinError(known.code, known.text);
      // The status is the terminal's: shown only when it is one the spec names.
      return new JackinError('E_TERMINAL_CLIPBOARD_FAILED', `your terminal could not read its clipboard (${o.known ?? 'an unknown error'})`);
    }
    case 'malformed':
      return new JackinError('E_TERMINAL_CLIPBOARD_MALFORMED', `your terminal's clipboard answer was malformed (${o.reason}); nothing was pasted`);
    case 'too-large':
      return new JackinError('E_IMAGE_TOO_LARGE', "the image on your terminal's clipboard is over the size cap");
    default: {
      const never: never = o;
      throw new TypeError(`unexpected outcome ${JSON.stringify(never)}`);
    }
  }
}
