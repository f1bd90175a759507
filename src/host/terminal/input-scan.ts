/**
 * The host's input scanner: a streaming tokenizer over the operator's keyboard bytes. It finds the image
 * paste key, the palette key, bracketed pastes and mouse reports (SGR, and the legacy `ESC [ M Cb Cx Cy` and urxvt
 * forms as one unit each: their bytes are never keys), and passes every other byte through
 * unchanged and in order. Sequences split across reads are held until complete (or until `flush()`,
 * which the caller arms with a short timer when `pending` is true, so a lone Esc key still arrives).
 *
 * Every event carries `raw`, the exact input bytes it came from, so a caller that decides not to act (no
 * image on the clipboard, mouse reporting off) forwards `raw` and the program sees the original input:
 * concatenating every event's raw bytes always gives back the input.
 *
 * A little over 350 lines: one tokenizer whose modes (keys, pastes, terminal replies) share its buffers.
 */
import { JackinError } from '../../errors.ts';
import {
  DEFAULT_PALETTE_KEY,
  DEFAULT_PASTE_KEY,
  matchesKey,
  parseCsiU,
  parseKeySpec,
  parseModifyOtherKeys,
  type KeyEncoding,
  type KeySpec,
} from './trigger-keys.ts';
import { reportFromCode, type MouseReport } from './mouse-report.ts';
import { classifyCsiReply, heldAsStringReply, ReplyExpectations, scanStringReply, stringReplyRest, type ReplyKind } from './terminal-filter/replies.ts';

export { parseKeySpec, type KeySpec } from './trigger-keys.ts';

export type InputEvent =
  | { type: 'bytes'; bytes: Buffer }
  /** A terminal reply (docs/terminal-policy.md, "Replies"): a whole unit, never keys. */
  | { type: 'reply'; kind: ReplyKind; raw: Buffer }
  | { type: 'paste-key'; source: KeyEncoding | 'empty-paste'; raw: Buffer }
  | { type: 'palette-key'; source: KeyEncoding; raw: Buffer }
  | { type: 'paste'; content: Buffer; raw: Buffer }
  /** A mouse report from the terminal, in whatever encoding it came (`raw`); see mouse-report.ts. */
  | ({ type: 'mouse'; raw: Buffer } & MouseReport);

/** A paste longer than this is forwarded as it streams instead of being held for path detection. */
const DEFAULT_MAX_PASTE_BYTES = 1024 * 1024;
/** A CSI sequence longer than this is not one we recognise; its bytes pass through. */
const MAX_CSI_BYTES = 64;
const ESC = 0x1b;
const PASTE_START = Buffer.from('\x1b[200~');
const PASTE_END = Buffer.from('\x1b[201~');

export interface InputScannerOptions {
  /** The image paste key; null disables it (and the empty-paste trigger). Default ctrl+v. */
  pasteKey?: KeySpec | null;
  /** The palette key; null disables it. Default ctrl+\. */
  paletteKey?: KeySpec | null;
  maxPasteBytes?: number;
  /** Replies due (shared with the output filter); decides whether `CSI r;c R` is a report or a key. */
  replies?: ReplyExpectations;
  /**
   * Whether a paste passed through as typed bytes (too long to hold, or never ended) keeps its bracket
   * markers: only when the program asked for bracketed paste (the host keeps it on for itself). Default yes.
   */
  pasteBrackets?: () => boolean;
}

/** Scanner options from JACKIN_PASTE_KEY and JACKIN_PALETTE_KEY; throws E_BAD_KEY_SPEC (also when equal). */
export function scannerOptionsFromEnv(env: NodeJS.ProcessEnv): InputScannerOptions {
  const pasteKey = parseKeySpec(env.JACKIN_PASTE_KEY || DEFAULT_PASTE_KEY, 'JACKIN_PASTE_KEY');
  const paletteKey = parseKeySpec(env.JACKIN_PALETTE_KEY || DEFAULT_PALETTE_KEY, 'JACKIN_PALETTE_KEY');
  if (pasteKey !== null && paletteKey !== null && pasteKey.c0 === paletteKey.c0) {
    throw new JackinError('E_BAD_KEY_SPEC', `JACKIN_PASTE_KEY and JACKIN_PALETTE_KEY are both ${pasteKey.spec}; choose different keys`);
  }
  return { pasteKey, paletteKey };
}

type Mode = 'normal' | 'paste' | 'paste-passthrough';

export class InputScanner {
  readonly #pasteKey: KeySpec | null;
  readonly #paletteKey: KeySpec | null;
  readonly #maxPaste: number;
  readonly #replies: ReplyExpectations;
  readonly #brackets: () => boolean;
  #mode: Mode = 'normal';
  /** Bytes that may start a sequence (normal) or the end marker (paste modes). */
  #pending: Buffer = Buffer.alloc(0);
  #paste: Buffer[] = [];
  #pasteSize = 0;
  #events: InputEvent[] = [];
  #plain: Buffer[] = [];
  /**
   * Set when a bracketed paste ends: the rest of that read is passed through as typed bytes, never as a
   * trigger. A person cannot press a key inside the same read as a paste's end marker; a paste whose text
   * contains `ESC[201~` (a clipboard the container seeded through OSC 52) can, to smuggle palette keys.
   */
  #afterPaste = false;
  /** Inside the rest of a string reply given up at its length limit: its introducer (0: not). */
  #replyRest = 0;

  constructor(opts: InputScannerOptions = {}) {
    this.#pasteKey = opts.pasteKey === undefined ? parseKeySpec(DEFAULT_PASTE_KEY, 'paste key') : opts.pasteKey;
    this.#paletteKey = opts.paletteKey === undefined ? parseKeySpec(DEFAULT_PALETTE_KEY, 'palette key') : opts.paletteKey;
    this.#maxPaste = opts.maxPasteBytes ?? DEFAULT_MAX_PASTE_BYTES;
    this.#replies = opts.replies ?? new ReplyExpectations();
    this.#brackets = opts.pasteBrackets ?? (() => true);
  }

  /** True while bytes are held: a partial sequence, or a bracketed paste not yet ended. */
  get pending(): boolean {
    return this.#pending.length > 0 || this.#mode !== 'normal' || this.#replyRest !== 0;
  }

  /** True while the bytes held are the start of a terminal reply (more than its introducer), not a lone key. */
  get holdsReply(): boolean {
    const p = this.#pending;
    return (
      this.#replyRest !== 0 || (this.#mode === 'normal' && p.length > 2 && p[0] === ESC && (heldAsStringReply(p, 0, this.#replies) || isLegacyMouseStart(p, 0)))
    );
  }

  /** True inside a bracketed paste (flush() does not end it unless asked). */
  get inPaste(): boolean {
    return this.#mode !== 'normal';
  }

  push(chunk: Buffer): InputEvent[] {
    const data = this.#pending.length === 0 ? chunk : Buffer.concat([this.#pending, chunk]);
    this.#pending = Buffer.alloc(0);
    let i = 0;
    this.#afterPaste = false;
    while (i < data.length) {
      if (this.#afterPaste && this.#mode === 'normal') {
        this.#bytes(data.subarray(i));
        break;
      }
      i = this.#replyRest !== 0 ? this.#restOfReply(data, i) : this.#mode === 'normal' ? this.#normal(data, i) : this.#inPaste(data, i);
      if (i < 0) break; // the rest was kept as pending
    }
    return this.#take();
  }

  /**
   * Releases held bytes as they are: a dangling ESC or partial sequence after the caller's timeout. A
   * bracketed paste is given up only with `endPaste` (its start marker and content pass through).
   */
  flush(opts: { endPaste?: boolean } = {}): InputEvent[] {
    if (this.#replyRest !== 0) {
      // Silence inside the rest of a cut reply: it ended somehow; what comes next is input again.
      if (this.#pending.length > 0) this.#emit({ type: 'reply', kind: 'other', raw: this.#pending });
      this.#pending = Buffer.alloc(0);
      this.#replyRest = 0;
    } else if (this.#mode === 'normal') {
      const p = this.#pending;
      // A string reply that never ended is still a reply: its bytes never become keys.
      // So is a legacy mouse report cut short: the rest of its bytes would be read as keys.
      if (p.length > 1 && p[0] === ESC && (heldAsStringReply(p, 0, this.#replies) || isLegacyMouseStart(p, 0)))
        this.#emit({ type: 'reply', kind: 'other', raw: p });
      else this.#bytes(p);
      this.#pending = Buffer.alloc(0);
    } else if (opts.endPaste) {
      if (this.#mode === 'paste' && this.#brackets()) this.#bytes(PASTE_START);
      for (const p of this.#paste) this.#bytes(p);
      this.#bytes(this.#pending);
      this.#pending = Buffer.alloc(0);
      this.#paste = [];
      this.#pasteSize = 0;
      this.#mode = 'normal';
    }
    return this.#take();
  }

  /**
   * Gives back, as raw input, what the scanner holds (a partial sequence, or a bracketed paste not yet
   * ended), and forgets it: the caller keeps those bytes in order with input read later (input held while
   * a feature works) and scans them again with it. Empty, keeping its state, when what it holds cannot be
   * scanned again as it came (a paste already streaming through, the rest of a reply cut at its limit).
   */
  takeHeld(): Buffer {
    if (this.#replyRest !== 0 || this.#mode === 'paste-passthrough') return Buffer.alloc(0);
    const raw = this.#mode === 'paste' ? Buffer.concat([PASTE_START, ...this.#paste, this.#pending]) : this.#pending;
    this.#pending = Buffer.alloc(0);
    this.#paste = [];
    this.#pasteSize = 0;
    this.#mode = 'normal';
    return raw;
  }

  #take(): InputEvent[] {
    this.#flushPlain();
    const out = this.#events;
    this.#events = [];
    return out;
  }

  #bytes(b: Buffer): void {
    if (b.length > 0) this.#plain.push(b);
  }

  #flushPlain(): void {
    if (this.#plain.length === 0) return;
    const bytes = this.#plain.length === 1 ? this.#plain[0]! : Buffer.concat(this.#plain);
    this.#plain = [];
    this.#events.push({ type: 'bytes', bytes: Buffer.from(bytes) });
  }

  #emit(e: InputEvent): void {
    this.#flushPlain();
    this.#events.push(e);
  }

  /** Processes from `i` in normal mode; returns the next index, or -1 when the rest is pending. */
  #normal(data: Buffer, i: number): number {
    // Fast path: a run of bytes that are neither ESC nor a trigger byte.
    let j = i;
    while (j < data.length) {
      const b = data[j]!;
      if (b === ESC || b === this.#pasteKey?.c0 || b === this.#paletteKey?.c0) break;
      j++;
    }
    if (j > i) {
      this.#bytes(data.subarray(i, j));
      return j;
    }
    const b = data[i]!;
    if (b === this.#pasteKey?.c0) {
      this.#emit({ type: 'paste-key', source: 'c0', raw: Buffer.from([b]) });
      return i + 1;
    }
    if (b === this.#paletteKey?.c0) {
      this.#emit({ type: 'palette-key', source: 'c0', raw: Buffer.from([b]) });
      return i + 1;
    }
    // ESC
    if (i + 1 >= data.length) return this.#keep(data, i);
    const next = data[i + 1]!;
    // ESC before the palette key is not Alt+palette: the palette key keeps working after any byte (so the
    // doubled form sends a literal palette byte whatever was typed before it).
    if (next === ESC || (this.#paletteKey !== null && next === this.#paletteKey.c0)) {
      this.#bytes(data.subarray(i, i + 1));
      return i + 1;
    }
    if (next === 0x50 || next === 0x5d || next === 0x5f || next === 0x5e || next === 0x58) {
      // DCS, OSC, APC, PM, SOS: a terminal reply when it ends in this read (or one is due), else Alt+key.
      const r = scanStringReply(data, i, this.#replies);
      if (r === 'partial') return this.#keep(data, i);
      if (r !== null) {
        this.#emit({ type: 'reply', kind: r.kind, raw: Buffer.from(data.subarray(i, r.end)) });
        if (r.cut) this.#replyRest = next;
        return r.end;
      }
    }
    if (next !== 0x5b /* [ */) {
      // Alt+key (or SS3): two bytes that belong together; ESC + 0x16 is Alt+Ctrl+V, not our key.
      this.#bytes(data.subarray(i, i + 2));
      return i + 2;
    }
    if (data[i + 2] === 0x4d /* M */) {
      // A legacy mouse report, `ESC [ M Cb Cx Cy`: three raw bytes that are the report's, never keys (a
      // terminal that ignored the host's `?1006h`, or one that reported before it took effect).
      if (i + 5 >= data.length) return this.#keep(data, i);
      const raw = Buffer.from(data.subarray(i, i + 6));
      this.#emit({
        type: 'mouse',
        ...reportFromCode(Math.max(0, raw[3]! - 32), raw[4]! - 32, raw[5]! - 32, ((raw[3]! - 32) & 3) !== 3 || raw[3]! - 32 >= 64),
        raw,
      });
      return i + 6;
    }
    // CSI: parameter bytes 0x30-0x3F, intermediates 0x20-0x2F, one final byte 0x40-0x7E.
    let k = i + 2;
    while (k < data.length && data[k]! >= 0x30 && data[k]! <= 0x3f) k++;
    while (k < data.length && data[k]! >= 0x20 && data[k]! <= 0x2f) k++;
    if (k >= data.length) {
      if (k - i > MAX_CSI_BYTES) {
        this.#bytes(data.subarray(i, k));
        return k;
      }
      return this.#keep(data, i);
    }
    const final = data[k]!;
    if (final < 0x40 || final > 0x7e) {
      // Not a CSI sequence after all; pass what we saw and look at the odd byte afresh.
      this.#bytes(data.subarray(i, k));
      return k;
    }
    const seq = data.subarray(i, k + 1);
    this.#csi(seq, data.subarray(i + 2, k).toString('latin1'), String.fromCharCode(final));
    return k + 1;
  }

  /** The rest of a string reply cut at its length limit: the same reply (dropped), up to its terminator. */
  #restOfReply(data: Buffer, i: number): number {
    const { end, hold } = stringReplyRest(data, i, this.#replyRest);
    const to = end < 0 ? data.length - hold : end;
    if (to > i) this.#emit({ type: 'reply', kind: 'other', raw: Buffer.from(data.subarray(i, to)) });
    if (end >= 0) this.#replyRest = 0;
    return hold > 0 ? this.#keep(data, to) : to;
  }

  #keep(data: Buffer, from: number): number {
    this.#pending = Buffer.from(data.subarray(from));
    return -1;
  }

  #csi(seq: Buffer, params: string, final: string): void {
    const p = /^[\x30-\x3f]*/.exec(params)![0];
    const reply = classifyCsiReply(p, params.slice(p.length), final, this.#replies);
    if (reply !== null) {
      this.#emit({ type: 'reply', kind: reply, raw: Buffer.from(seq) });
      return;
    }
    if (final === '~' && params === '200') {
      this.#flushPlain();
      this.#mode = 'paste';
      return;
    }
    if ((final === 'M' || final === 'm') && params.startsWith('<')) {
      const m = /^<(\d+);(\d+);(\d+)$/.exec(params);
      if (m !== null) {
        this.#emit({ type: 'mouse', ...reportFromCode(Number(m[1]), Number(m[2]), Number(m[3]), final === 'M'), raw: Buffer.from(seq) });
        return;
      }
    }
    if (final === 'M') {
      // urxvt's encoding (1015), `CSI Cb ; Cx ; Cy M` in decimal with Cb offset by 32.
      const m = /^(\d{1,5});(\d{1,5});(\d{1,5})$/.exec(params);
      if (m !== null && Number(m[1]) >= 32) {
        const code = Number(m[1]) - 32;
        this.#emit({ type: 'mouse', ...reportFromCode(code, Number(m[2]), Number(m[3]), (code & 3) !== 3 || code >= 64), raw: Buffer.from(seq) });
        return;
      }
    }
    const key = final === 'u' ? parseCsiU(params) : final === '~' ? parseModifyOtherKeys(params) : null;
    if (key?.ctrlOnly && key.press) {
      if (this.#pasteKey !== null && matchesKey(this.#pasteKey, key.codepoint)) {
        this.#emit({ type: 'paste-key', source: key.encoding, raw: Buffer.from(seq) });
        return;
      }
      if (this.#paletteKey !== null && matchesKey(this.#paletteKey, key.codepoint)) {
        this.#emit({ type: 'palette-key', source: key.encoding, raw: Buffer.from(seq) });
        return;
      }
    }
    this.#bytes(seq);
  }

  /** Inside a bracketed paste: collect until ESC[201~, holding a possible partial end marker. */
  #inPaste(data: Buffer, i: number): number {
    const end = data.indexOf(PASTE_END, i);
    if (end < 0) {
      // Keep the longest tail that is a prefix of the end marker.
      let keep = Math.min(PASTE_END.length - 1, data.length - i);
      while (keep > 0 && !PASTE_END.subarray(0, keep).equals(data.subarray(data.length - keep))) keep--;
      this.#pasteData(data.subarray(i, data.length - keep));
      return keep > 0 ? this.#keep(data, data.length - keep) : data.length;
    }
    this.#pasteData(data.subarray(i, end));
    if (this.#mode === 'paste-passthrough') {
      if (this.#brackets()) this.#bytes(PASTE_END);
    } else {
      const content = Buffer.concat(this.#paste, this.#pasteSize);
      if (content.length === 0 && this.#pasteKey !== null) {
        this.#emit({ type: 'paste-key', source: 'empty-paste', raw: Buffer.concat([PASTE_START, PASTE_END]) });
      } else {
        this.#emit({ type: 'paste', content, raw: Buffer.concat([PASTE_START, content, PASTE_END]) });
      }
    }
    this.#paste = [];
    this.#pasteSize = 0;
    this.#mode = 'normal';
    this.#afterPaste = true;
    return end + PASTE_END.length;
  }

  #pasteData(b: Buffer): void {
    if (b.length === 0) return;
    if (this.#mode === 'paste-passthrough') {
      this.#bytes(b);
      return;
    }
    this.#paste.push(Buffer.from(b));
    this.#pasteSize += b.length;
    if (this.#pasteSize > this.#maxPaste) {
      // Too long to be a path: stop holding it and let it stream to the program as typed.
      if (this.#brackets()) this.#bytes(PASTE_START);
      for (const p of this.#paste) this.#bytes(p);
      this.#paste = [];
      this.#pasteSize = 0;
      this.#mode = 'paste-passthrough';
    }
  }
}

/** `ESC [ M` at `i`: the start of a legacy mouse report. */
function isLegacyMouseStart(b: Buffer, i: number): boolean {
  return b[i] === ESC && b[i + 1] === 0x5b && b[i + 2] === 0x4d;
}
