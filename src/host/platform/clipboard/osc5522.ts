/**
 * The kitty clipboard protocol (OSC 5522, https://sw.kovidgoyal.net/kitty/clipboard/), the read side only:
 * what jackin asks the operator's terminal for when it has no clipboard of its own (a session reached over
 * SSH), and the decoding of what the terminal answers. Pure: no I/O, no clock.
 *
 * Wire forms (OSC is ESC ], ST is ESC \):
 * - detection: `CSI ? 5522 $ p`, answered `CSI ? 5522 ; Ps $ y` (DECRPM; Ps 1 or 2: supported, 0 or 4: not);
 * - read: `OSC 5522 ; type=read[:id=..] ; base64("image/png") ST`;
 * - replies: `type=read:status=OK`, then `status=DATA:mime=base64(type) ; base64(chunk)` packets, then
 *   `status=DONE`; or instead of OK an error status (EPERM, EBUSY, ENOSYS; EIO, EINVAL are the spec's write
 *   errors, accepted here too).
 * - paste events (mode 5522, `CSI ? 5522 h`, set as a host need in terminal-filter/modes.ts): on a paste the terminal sends, unasked, the OK/DATA/DONE of a
 *   list of the clipboard's types, the OK packet carrying a one-use password (`pw`) that a read then quotes.
 *
 * Everything the terminal sends is untrusted: every packet is bounded, every field checked, and a packet that
 * is not of this form is refused as a whole (never partly used).
 */

/** Asks whether the terminal knows mode 5522 (DECRQM). */
export const DETECT_QUERY = Buffer.from('\x1b[?5522$p');

/**
 * Longest packet body accepted (between `ESC ]` and the terminator). The spec's chunks are at most 4096 bytes
 * before base64 (5462 after); metadata is a few short fields. 64 KiB leaves room for a terminal that sends
 * larger chunks and still bounds what is held while one arrives.
 */
export const MAX_PACKET_BYTES = 64 * 1024;
/** Longest metadata section accepted. */
const MAX_METADATA_BYTES = 1024;
/** Longest MIME type accepted (decoded). */
const MAX_FIELD_BYTES = 256;

const ESC = 0x1b;
const OSC_PREFIX = Buffer.from('\x1b]5522;');
/** An OSC 52 answer (the clipboard's text, asked when the terminal has no 5522): `ESC ] 52 ; c ; base64 ST`. */
const OSC52_PREFIX = Buffer.from('\x1b]52;');
/** The OSC 52 question for the clipboard's text. */
export const OSC52_QUERY = Buffer.from('\x1b]52;c;?\x1b\\');
const DECRPM_PREFIX = Buffer.from('\x1b[?5522;');
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const METADATA = /^[A-Za-z0-9=:+/._-]*$/;
const ID = /^[A-Za-z0-9_+.-]{1,64}$/;
/** A password as quoted back: base64, at most 344 characters (256 bytes). */
const PW = /^(?=.{4,344}$)[A-Za-z0-9+/]*={0,2}$/;

/** The error statuses the spec names; any other status is still an error, reported as unknown. */
type ReadErrorStatus = 'EPERM' | 'EBUSY' | 'ENOSYS' | 'EIO' | 'EINVAL';
const KNOWN_ERRORS: readonly ReadErrorStatus[] = ['EPERM', 'EBUSY', 'ENOSYS', 'EIO', 'EINVAL'];

/** One decoded reply packet. */
export interface Packet {
  type: string;
  status: string | null;
  /** The decoded `mime` field, when present. */
  mime: string | null;
  /**
   * The one-use password of a paste event's OK packet, as the terminal sent it (base64 of whatever bytes it
   * chose): only ever quoted back, so it is never decoded, only checked to be base64 of a bounded length.
   */
  pw: string | null;
  id: string | null;
  loc: string | null;
  /** The payload's decoded bytes (empty when there is none). */
  data: Buffer;
}

function b64(text: string): string {
  return Buffer.from(text, 'utf8').toString('base64');
}

/** Strict base64 (RFC 4648, padded, no whitespace): the bytes, or null. */
function decodeBase64(text: string): Buffer | null {
  if (text.length % 4 !== 0 || !BASE64.test(text)) return null;
  const bytes = Buffer.from(text, 'base64');
  // Node decodes leniently; re-encoding gives the canonical text back only for a canonical input.
  return bytes.toString('base64') === text ? bytes : null;
}

/** A decoded short field (a MIME type): printable ASCII only, bounded, or null. */
function decodeField(text: string): string | null {
  const bytes = decodeBase64(text);
  if (bytes === null || bytes.length === 0 || bytes.length > MAX_FIELD_BYTES) return null;
  for (const c of bytes) if (c < 0x20 || c > 0x7e) return null;
  return bytes.toString('latin1');
}

/**
 * The read request for `mimes` (`.` lists the clipboard's types). `pw` quotes a paste event's password as the
 * terminal sent it (base64), with `name`, the human-friendly name that must go with a password (base64
 * encoded here); `id` is echoed back by the terminal.
 */
export function encodeReadRequest(mimes: readonly string[], opts: { id?: string; pw?: string; name?: string } = {}): Buffer {
  const meta = ['type=read'];
  if (opts.id !== undefined) {
    if (!ID.test(opts.id)) throw new TypeError(`bad OSC 5522 id ${JSON.stringify(opts.id)}`);
    meta.push(`id=${opts.id}`);
  }
  if (opts.pw !== undefined) {
    if (!PW.test(opts.pw)) throw new TypeError('bad OSC 5522 password');
    meta.push(`pw=${opts.pw}`);
    meta.push(`name=${b64(opts.name ?? 'jackin')}`);
  }
  return Buffer.from(`\x1b]5522;${meta.join(':')};${b64(mimes.join(' '))}\x1b\\`, 'latin1');
}

/**
 * A packet body (the bytes between `ESC ]` and the terminator, `5522;...`) decoded, or null when it is not a
 * well-formed OSC 5522 packet: over the limits, a metadata key without a value, a field that is not strict
 * base64, a payload that is not strict base64.
 */
export function parsePacket(body: Buffer): Packet | null {
  if (body.length > MAX_PACKET_BYTES) return null;
  const text = body.toString('latin1');
  if (!text.startsWith('5522;')) return null;
  const rest = text.slice(5);
  const semi = rest.indexOf(';');
  const metadata = semi < 0 ? rest : rest.slice(0, semi);
  const payload = semi < 0 ? '' : rest.slice(semi + 1);
  if (metadata.length > MAX_METADATA_BYTES || !METADATA.test(metadata)) return null;
  const fields = new Map<string, string>();
  for (const pair of metadata.split(':')) {
    const eq = pair.indexOf('=');
    if (eq <= 0) return null;
    const key = pair.slice(0, eq);
    if (fields.has(key)) return null;
    fields.set(key, pair.slice(eq + 1));
  }
  const type = fields.get('type');
  if (type === undefined || type === '') return null;
  const data = decodeBase64(payload);
  if (data === null) return null;
  const field = (key: string): string | null | undefined => {
    const v = fields.get(key);
    return v === undefined ? null : (decodeField(v) ?? undefined);
  };
  const mime = field('mime');
  const pw = fields.get('pw') ?? null;
  if (mime === undefined || (pw !== null && (!PW.test(pw) || pw.length % 4 !== 0))) return null;
  const id = fields.get('id') ?? null;
  if (id !== null && !ID.test(id)) return null;
  return { type, status: fields.get('status') ?? null, mime, pw, id, loc: fields.get('loc') ?? null, data };
}

/** Whether a DECRPM value says the terminal knows mode 5522 (set or reset). */
export function decrpmSupported(ps: number): boolean {
  return ps === 1 || ps === 2;
}

/** What one read assembled, or why it failed. */
export type ReadOutcome =
  | { kind: 'more' }
  /** Every type the terminal sent, with its bytes (a type listing: `.` maps to the offered types' text). */
  | { kind: 'done'; parts: ReadonlyMap<string, Buffer>; pw: string | null; loc: string | null }
  | { kind: 'error'; status: string; known: ReadErrorStatus | null }
  | { kind: 'malformed'; reason: string }
  | { kind: 'too-large' };

/**
 * Assembles one read's replies (OK, DATA..., DONE, or an error status) into each type's bytes. Bounded:
 * more than `maxBytes` decoded in total ends the read as too large, and nothing more is kept. After an
 * outcome other than 'more' it is finished and takes no more packets.
 */
export class ReadAssembler {
  readonly #maxBytes: number;
  readonly #id: string | null;
  #opened = false;
  #finished = false;
  #total = 0;
  #pw: string | null = null;
  #loc: string | null = null;
  readonly #parts = new Map<string, Buffer[]>();
  #current: string | null = null;

  readonly #listing: boolean;

  /** `listing`: the answer lists the clipboard's types (a paste event), whose DATA may come without a `mime` (kitty's kitten reads it so). */
  constructor(opts: { maxBytes: number; id?: string; listing?: boolean }) {
    this.#maxBytes = opts.maxBytes;
    this.#id = opts.id ?? null;
    this.#listing = opts.listing === true;
  }

  get finished(): boolean {
    return this.#finished;
  }

  /** True when the packet answers this read (a read reply with our id, or none): the caller feeds those only. */
  accepts(p: Packet): boolean {
    return p.type === 'read' && (p.id === null || this.#id === null || p.id === this.#id);
  }

  push(p: Packet): ReadOutcome {
    if (this.#finished) return { kind: 'malformed', reason: 'a packet after the read ended' };
    const end = (o: ReadOutcome): ReadOutcome => {
      if (o.kind !== 'more') {
        this.#finished = true;
        if (o.kind !== 'done') this.#parts.clear();
      }
      return o;
    };
    if (!this.accepts(p)) return end({ kind: 'malformed', reason: `a packet of type ${p.type}` });
    const status = p.status;
    if (!this.#opened) {
      if (status === 'OK') {
        this.#opened = true;
        this.#pw = p.pw;
        this.#loc = p.loc;
        return { kind: 'more' };
      }
      if (status === null || status === 'DATA' || status === 'DONE') return end({ kind: 'malformed', reason: `status ${status ?? 'missing'} before OK` });
      const known = KNOWN_ERRORS.find((k) => k === status) ?? null;
      return end({ kind: 'error', status, known });
    }
    switch (status) {
      case 'DATA': {
        const mime = p.mime ?? (this.#listing ? '.' : null);
        if (mime === null) return end({ kind: 'malformed', reason: 'a DATA packet without its type' });
        if (mime !== this.#current && this.#parts.has(mime)) return end({ kind: 'malformed', reason: 'a type sent twice' });
        this.#current = mime;
        this.#total += p.data.length;
        if (this.#total > this.#maxBytes) return end({ kind: 'too-large' });
        const list = this.#parts.get(mime) ?? [];
        list.push(p.data);
        this.#parts.set(mime, list);
        return { kind: 'more' };
      }
      case 'DONE': {
        const parts = new Map<string, Buffer>();
        for (const [mime, chunks] of this.#parts) parts.set(mime, Buffer.concat(chunks));
        return end({ kind: 'done', parts, pw: this.#pw, loc: this.#loc });
      }
      default: {
        // The spec sends an error instead of OK; a terminal that sends one later ends the read just the same.
        const known = KNOWN_ERRORS.find((k) => k === status) ?? null;
        return status === null || status === 'OK'
          ? end({ kind: 'malformed', reason: `status ${status ?? 'missing'} after OK` })
          : end({ kind: 'error', status, known });
      }
    }
  }
}

/** What the extractor found in one read of the terminal's input. */
export interface Extracted {
  /** Whole OSC 5522 packet bodies (without `ESC ]` and the terminator), in order. */
  packets: Buffer[];
  /** DECRPM values about mode 5522, in order. */
  decrpm: number[];
  /** Whole OSC 52 answers, each what follows `ESC ] 52 ;` (`c;base64`), in order. */
  osc52: Buffer[];
  /** Packets given up: over MAX_PACKET_BYTES before their end. */
  dropped: number;
  /** Every other byte, in order, for the keyboard. */
  rest: Buffer;
}

/**
 * Takes OSC 5522 packets and 5522 DECRPM replies out of the terminal's input stream, wherever reads split
 * them, and gives back every other byte in order. A read that ends inside one (or inside what may begin one)
 * is held for the next; a packet over MAX_PACKET_BYTES is dropped as a whole, up to its terminator, never
 * passed on as typing. `release()` gives back what is held that is not (yet) a packet, for when the caller
 * stops extracting.
 */
export class ReplyExtractor {
  #held: Buffer = Buffer.alloc(0);
  /** Inside a packet being dropped for its length: skip to its terminator. */
  #skipping = false;

  push(chunk: Buffer): Extracted {
    const data = this.#held.length === 0 ? chunk : Buffer.concat([this.#held, chunk]);
    this.#held = Buffer.alloc(0);
    const out: Extracted = { packets: [], decrpm: [], osc52: [], dropped: 0, rest: Buffer.alloc(0) };
    const rest: Buffer[] = [];
    let i = 0;
    let from = 0;
    if (this.#skipping) {
      const end = terminatorEnd(data, 0);
      if (end < 0) {
        // Still inside it: keep a trailing ESC that may begin its ST.
        if (data[data.length - 1] === ESC) this.#held = data.subarray(data.length - 1);
        return out;
      }
      this.#skipping = false;
      i = from = end;
    }
    while (i < data.length) {
      const at = data.indexOf(ESC, i);
      if (at < 0) break;
      const osc5522 = prefixMatch(data, at, OSC_PREFIX);
      const osc52 = prefixMatch(data, at, OSC52_PREFIX);
      const osc = osc5522 === 'yes' || osc52 === 'yes' ? 'yes' : osc5522 === 'partial' || osc52 === 'partial' ? 'partial' : 'no';
      const rpm = prefixMatch(data, at, DECRPM_PREFIX);
      if (osc === 'partial' || rpm === 'partial') {
        rest.push(data.subarray(from, at));
        this.#held = Buffer.from(data.subarray(at));
        from = data.length;
        break;
      }
      if (osc === 'yes') {
        const end = terminatorEnd(data, at + (osc52 === 'yes' ? OSC52_PREFIX.length : OSC_PREFIX.length));
        if (end < 0) {
          rest.push(data.subarray(from, at));
          from = data.length;
          if (data.length - at > MAX_PACKET_BYTES + 2) {
            out.dropped += 1;
            this.#skipping = true;
            if (data[data.length - 1] === ESC) this.#held = data.subarray(data.length - 1);
          } else {
            this.#held = Buffer.from(data.subarray(at));
          }
          break;
        }
        rest.push(data.subarray(from, at));
        const body = data.subarray(at + 2, end - (data[end - 1] === 0x07 ? 1 : 2));
        if (body.length > MAX_PACKET_BYTES) out.dropped += 1;
        else if (osc52 === 'yes') out.osc52.push(Buffer.from(body.subarray(OSC52_PREFIX.length - 2)));
        else out.packets.push(Buffer.from(body));
        i = from = end;
        continue;
      }
      if (rpm === 'yes') {
        const m = /^\x1b\[\?5522;(\d{0,3})(\$?)(y?)/.exec(data.toString('latin1', at, Math.min(data.length, at + 16)));
        const whole = m !== null && m[3] === 'y' && m[2] === '$' && m[1] !== '';
        if (whole) {
          rest.push(data.subarray(from, at));
          out.decrpm.push(Number(m[1]));
          i = from = at + m[0].length;
          continue;
        }
        if (m !== null && at + m[0].length === data.length) {
          // Ends inside the reply: wait for its end.
          rest.push(data.subarray(from, at));
          this.#held = Buffer.from(data.subarray(at));
          from = data.length;
          break;
        }
      }
      i = at + 1;
    }
    if (from < data.length) rest.push(data.subarray(from));
    out.rest = rest.length === 1 ? rest[0]! : Buffer.concat(rest);
    return out;
  }

  /** What is held that is no whole packet yet (a lone ESC, a cut prefix): given back, and forgotten. */
  release(): Buffer {
    const held = this.#skipping ? Buffer.alloc(0) : this.#held;
    this.#held = Buffer.alloc(0);
    this.#skipping = false;
    // A packet cut short is the terminal's, never typing.
    const cut = held.subarray(0, OSC_PREFIX.length).equals(OSC_PREFIX) || held.subarray(0, OSC52_PREFIX.length).equals(OSC52_PREFIX);
    return cut ? Buffer.alloc(0) : held;
  }
}

/** Whether `data[at..]` begins with `prefix` ('yes'), ends inside it ('partial'), or neither. */
function prefixMatch(data: Buffer, at: number, prefix: Buffer): 'yes' | 'partial' | 'no' {
  const n = Math.min(prefix.length, data.length - at);
  for (let k = 0; k < n; k++) if (data[at + k] !== prefix[k]) return 'no';
  return n === prefix.length ? 'yes' : 'partial';
}

/** Index just past the ST (ESC \) or BEL ending a string that runs from `from`, or -1. */
function terminatorEnd(data: Buffer, from: number): number {
  for (let j = from; j < data.length; j++) {
    const c = data[j];
    if (c === 0x07) return j + 1;
    if (c === ESC && data[j + 1] === 0x5c) return j + 2;
  }
  return -1;
}

/**
 * The text of an OSC 52 answer (`c;base64`, what follows `ESC ] 52 ;`), or null for an empty clipboard or an
 * answer that is not of that form (strict base64; at most `maxBytes` decoded; valid UTF-8 only).
 */
export function decodeOsc52(body: Buffer, maxBytes: number): string | null {
  const m = /^([a-z0-9]{0,8});([A-Za-z0-9+/]*={0,2})$/.exec(body.toString('latin1'));
  if (m === null || m[2]!.length === 0 || m[2]!.length % 4 !== 0) return null;
  const bytes = Buffer.from(m[2]!, 'base64');
  if (bytes.length === 0 || bytes.length > maxBytes) return null;
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return null;
  }
}
