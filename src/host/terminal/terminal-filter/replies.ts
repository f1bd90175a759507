/**
 * Terminal replies on the host's input (docs/terminal-policy.md, "Replies"). The output filter lets a few
 * queries out (DA, CPR, DECRQM, kitty keyboard flags, XTVERSION, colour queries) and records here that a
 * reply is due; the input scanner recognises replies as whole units (so no byte of one acts as a key) and
 * asks here whether one was expected. A reply nobody asked for through the filter is dropped; an OSC 52
 * reply (clipboard contents) never reaches the program. Pure but for the clock of ReplyExpectations.
 */

export type ReplyKind =
  | 'cpr' // CSI r;c R, CSI ? r;c;p R
  | 'status' // CSI 0 n
  | 'da1' // CSI ? ... c
  | 'da2' // CSI > ... c
  | 'decrqm' // CSI ? Ps;Pm $ y, CSI Ps;Pm $ y
  | 'kitty-flags' // CSI ? flags u
  | 'xtversion' // DCS > | text ST
  | 'osc-color' // OSC 4/10/11/12 ; ... ST
  | 'focus' // CSI I, CSI O (focus reporting, the program's own mode)
  | 'clipboard' // OSC 52: never forwarded
  | 'kitty-clipboard' // OSC 5522: the terminal's answer to the host's own clipboard read, never forwarded
  | 'other'; // any other report (window, DA3, DECRQSS, XTGETTCAP, APC...): never asked for, dropped

/** Replies each kind may have outstanding; a query flood cannot make the host accept a reply flood. */
export const MAX_PENDING_REPLIES = 32;
/** Longest string reply (DCS/OSC/APC...) held on the input before it is discarded as a whole. */
const MAX_STRING_REPLY_BYTES = 64 * 1024;

/**
 * How long a reply stays due after its query. Terminals answer within milliseconds, or never (a query they do
 * not know): without a limit one unanswered XTVERSION or colour query would keep a string reply due for the
 * whole session, and the operator's Alt+P or Alt+] (ESC P, ESC ]) would be held as its start and dropped.
 */
export const REPLY_WAIT_MS = 5_000;

/**
 * Counts of replies due, per kind; shared by the output filter (expect) and the input side (take). Pure but
 * for the clock, which tests pass in.
 */
export class ReplyExpectations {
  readonly #due = new Map<ReplyKind, { n: number; until: number }>();
  readonly #now: () => number;

  constructor(opts: { now?: () => number } = {}) {
    this.#now = opts.now ?? (() => performance.now());
  }

  #count(kind: ReplyKind): number {
    const d = this.#due.get(kind);
    if (d === undefined) return 0;
    if (this.#now() > d.until) {
      this.#due.delete(kind);
      return 0;
    }
    return d.n;
  }

  expect(kind: ReplyKind, count = 1): void {
    this.#due.set(kind, { n: Math.min(MAX_PENDING_REPLIES, this.#count(kind) + count), until: this.#now() + REPLY_WAIT_MS });
  }

  /** True when a reply of this kind was due (and counts it as received). */
  take(kind: ReplyKind): boolean {
    const n = this.#count(kind);
    if (n === 0) return false;
    this.#due.get(kind)!.n = n - 1;
    return true;
  }

  due(kind: ReplyKind): boolean {
    return this.#count(kind) > 0;
  }

  /** True when a reply arriving as a string (DCS or OSC) is due. */
  stringDue(introducer: number): boolean {
    return introducer === 0x50 ? this.due('xtversion') : introducer === 0x5d ? this.due('osc-color') : false;
  }

  clear(): void {
    this.#due.clear();
  }
}

/**
 * The reply kind of a complete CSI sequence on the input, or null when it is a key (or mouse report).
 * `CSI r;c R` is a key too (modified F3 in xterm's legacy encoding) unless a cursor position report is due.
 */
export function classifyCsiReply(params: string, intermediates: string, final: string, expectations: ReplyExpectations): ReplyKind | null {
  const prefix = params.length > 0 && params.charCodeAt(0) >= 0x3c ? params[0]! : '';
  if (intermediates === '$' && final === 'y') return 'decrqm';
  if (intermediates !== '') return null;
  switch (final) {
    case 'R':
      if (prefix === '?') return 'cpr';
      return prefix === '' && /^\d+;\d+$/.test(params) && expectations.due('cpr') ? 'cpr' : null;
    case 'c':
      return prefix === '?' ? 'da1' : prefix === '>' ? 'da2' : prefix === '=' ? 'other' : null;
    case 'n':
      return prefix === '' && params === '0' ? 'status' : prefix !== '' || params === '3' ? 'other' : null;
    case 'u':
      return prefix === '?' ? 'kitty-flags' : null;
    case 't':
      return 'other';
    case 'I':
    case 'O':
      return params === '' ? 'focus' : null;
    default:
      return null;
  }
}

/** The reply kind of a complete string on the input: `introducer` is P (DCS), ] (OSC), _ ^ X. */
export function classifyStringReply(introducer: number, content: Buffer): ReplyKind {
  if (introducer === 0x50) return content[0] === 0x3e && content[1] === 0x7c ? 'xtversion' : 'other';
  if (introducer !== 0x5d) return 'other';
  const semi = content.indexOf(0x3b);
  const ps = content.subarray(0, semi < 0 ? content.length : semi).toString('latin1');
  if (ps === '52') return 'clipboard';
  if (ps === '5522') return 'kitty-clipboard';
  return ps === '4' || ps === '10' || ps === '11' || ps === '12' ? 'osc-color' : 'other';
}

/**
 * Whether a recognised reply goes to the program: only one that was due (its query passed the filter),
 * focus events only while the program asked for focus reporting, clipboard contents never.
 */
export function shouldForwardReply(kind: ReplyKind, expectations: ReplyExpectations, programFocus: boolean): boolean {
  switch (kind) {
    case 'clipboard':
    case 'kitty-clipboard':
    case 'other':
      return false;
    case 'focus':
      return programFocus;
    default:
      return expectations.take(kind);
  }
}

/** A string reply found on the input: its bytes are `data[start, end)`, its content between the markers. */
export interface StringReply {
  kind: ReplyKind;
  end: number;
  /** Given up at MAX_STRING_REPLY_BYTES before its end: what follows, up to its terminator, is still this reply. */
  cut?: true;
}

/**
 * Looks for a string reply (DCS, OSC, APC, PM, SOS) starting at `data[i]` (an ESC). Returns it when its
 * terminator (ST, or BEL for OSC) is in `data`; 'partial' when it is not yet but such a reply is due or it
 * begins as one (hold the bytes, see heldAsStringReply); null when this is no reply (Alt+P, Alt+] and the like are keys). A due reply longer than
 * MAX_STRING_REPLY_BYTES is given up as 'other' up to where it has arrived.
 */
export function scanStringReply(data: Buffer, i: number, expectations: ReplyExpectations): StringReply | 'partial' | null {
  const intro = data[i + 1];
  if (intro !== 0x50 && intro !== 0x5d && intro !== 0x5f && intro !== 0x5e && intro !== 0x58) return null;
  for (let j = i + 2; j < data.length; j++) {
    const c = data[j]!;
    if (c === 0x07 && intro === 0x5d) return { kind: classifyStringReply(intro, data.subarray(i + 2, j)), end: j + 1 };
    // An 8-bit ST, raw or as UTF-8 (C2 9C); a 0x9c after another byte of 0x80 or more is part of a UTF-8
    // character (U+B734 is EB 9C B4), not a terminator, as for the output filter.
    if (c === 0x9c) {
      const prev = data[j - 1]!;
      if (prev < 0x80) return { kind: classifyStringReply(intro, data.subarray(i + 2, j)), end: j + 1 };
      if (prev === 0xc2) return { kind: classifyStringReply(intro, data.subarray(i + 2, j - 1)), end: j + 1 };
    }
    if (c === 0x1b) {
      if (j + 1 >= data.length) break;
      if (data[j + 1] === 0x5c) return { kind: classifyStringReply(intro, data.subarray(i + 2, j)), end: j + 2 };
      return null; // ESC and something else: not a string reply after all
    }
  }
  // A read that ends inside what may still begin a reply waits for the next (a few bytes, released as keys
  // by the Escape key's short flush if nothing follows): where a read ends never decides whether a reply is typed.
  if (!heldAsStringReply(data, i, expectations)) return beginsAsReply(intro, data, i + 2) === 'maybe' ? 'partial' : null;
  return data.length - i > MAX_STRING_REPLY_BYTES ? { kind: 'other', end: data.length, cut: true } : 'partial';
}

/**
 * The rest of a string reply given up at the limit (introducer `intro`), from `data[from]`: `end` just past
 * its terminator (ST, raw or as UTF-8, or BEL for an OSC), or -1 when it is not in `data`; then `hold` is the
 * number of bytes at the end that may begin the terminator (a trailing ESC) and must wait for the next read.
 */
export function stringReplyRest(data: Buffer, from: number, intro: number): { end: number; hold: number } {
  for (let j = from; j < data.length; j++) {
    const c = data[j]!;
    if (c === 0x07 && intro === 0x5d) return { end: j + 1, hold: 0 };
    if (c === 0x9c && (j === from || data[j - 1]! < 0x80 || data[j - 1] === 0xc2)) return { end: j + 1, hold: 0 };
    if (c === 0x1b && data[j + 1] === 0x5c) return { end: j + 2, hold: 0 };
  }
  return { end: -1, hold: data[data.length - 1] === 0x1b ? 1 : 0 };
}

/** How a DCS reply begins: `>|` (XTVERSION), `1$r`/`0$r` (DECRQSS), `1+r`/`0+r` (XTGETTCAP). An OSC reply: its number and `;`. */
const DCS_REPLY_STARTS = ['>|', '1$r', '0$r', '1+r', '0+r'];
const OSC_REPLY_START = /^\d{1,5};/;
const OSC_REPLY_START_SO_FAR = /^\d{0,5}$/;

/**
 * Whether the content of a string (after ESC and its introducer `intro`) begins as a reply does: 'yes';
 * 'maybe' when it has not yet said (it ends inside such a beginning: `ESC ] 1` of `ESC ] 11;…`); else 'no'.
 */
function beginsAsReply(intro: number, data: Buffer, from: number): 'yes' | 'maybe' | 'no' {
  const head = data.toString('latin1', from, Math.min(data.length, from + 8));
  const whole = from + head.length === data.length;
  if (intro === 0x5d) return OSC_REPLY_START.test(head) ? 'yes' : whole && OSC_REPLY_START_SO_FAR.test(head) ? 'maybe' : 'no';
  if (intro !== 0x50) return 'no';
  if (DCS_REPLY_STARTS.some((s) => head.startsWith(s))) return 'yes';
  return whole && DCS_REPLY_STARTS.some((s) => s.length > head.length && s.startsWith(head)) ? 'maybe' : 'no';
}

/**
 * Whether an unterminated string starting at `data[i]` (ESC and its introducer) is held as the start of a
 * reply: when one is due, or when its content begins as a reply does, due or not (an OSC 52 reply with the
 * operator's clipboard, split across reads, must not become typing). Alt+] or Alt+P, alone or followed by
 * what a person types, begins like neither.
 */
export function heldAsStringReply(data: Buffer, i: number, expectations: ReplyExpectations): boolean {
  const intro = data[i + 1]!;
  return expectations.stringDue(intro) || beginsAsReply(intro, data, i + 2) === 'yes';
}
