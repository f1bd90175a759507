/**
 * kitty's desktop notifications (OSC 99 ; metadata ; payload ST, sw.kovidgoyal.net/kitty/desktop-notifications),
 * read for the notification path (docs/terminal-policy.md): metadata is `key=value` pairs joined by `:`;
 * `p=title` (the default) and `p=body` chunks are joined per `i=` id until one says `d=1` (the default),
 * `e=1` payloads are base64. Icons, buttons, actions (`a=`), occasion, urgency, sound, expiry and close
 * events are ignored; `p=?`, `p=alive` and `p=close` are queries and requests for the terminal: ignored,
 * so nothing ever answers the program. Everything held is bounded: the joined text (MAX_NOTIFICATION_BYTES),
 * the ids pending (MAX_PENDING_IDS, the oldest goes first) and how long a pending one waits (PENDING_MAX_MS,
 * checked on the next OSC 99: no timers). Pure but for the clock.
 */
import { performance } from 'node:perf_hooks';
import { randomBytes } from '../../../lazy-builtins.ts';

/** Title and body bytes kept per notification, all chunks together; the rest is not kept (and is cut later anyway). */
export const MAX_NOTIFICATION_BYTES = 4096;
/** Notifications with chunks still to come, at most; a new id past this drops the oldest. */
export const MAX_PENDING_IDS = 8;
/** A notification whose next chunk does not come within this time is dropped. */
export const PENDING_MAX_MS = 30_000;
/** Metadata pairs read at most; more makes the sequence malformed. */
const MAX_METADATA_PAIRS = 32;
/** Longest id kept (kitty's ids are short words). */
const MAX_ID_LENGTH = 64;

/**
 * kitty's metadata grammar: a key is one letter, a value a word of these characters; also `?` (its own
 * `p=?` query) and `=` (base64 padding in `f=` and `n=`), as kitty-aware programs send them.
 */
const KEY = /^[A-Za-z]$/;
const VALUE = /^[A-Za-z0-9\-_/+.,(){}[\]*&^%$#@!`~?=]*$/;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** The metadata jackin reads; null when malformed. Keys it does not use are accepted and ignored. */
export interface Osc99Metadata {
  /** `i=`: the notification's id ('' when absent). */
  id: string;
  /** `d=0`: more chunks follow. */
  more: boolean;
  /** `p=`: what the payload is (`title` when absent). */
  payload: string;
  /** `e=1`: the payload is base64. */
  base64: boolean;
}

export function parseOsc99Metadata(meta: string): Osc99Metadata | null {
  const out: Osc99Metadata = { id: '', more: false, payload: 'title', base64: false };
  if (meta === '') return out;
  const pairs = meta.split(':');
  if (pairs.length > MAX_METADATA_PAIRS) return null;
  for (const pair of pairs) {
    const eq = pair.indexOf('=');
    if (eq < 0) return null;
    const key = pair.slice(0, eq);
    const value = pair.slice(eq + 1);
    if (!KEY.test(key) || !VALUE.test(value)) return null;
    switch (key) {
      case 'i':
        if (value.length > MAX_ID_LENGTH) return null;
        out.id = value;
        break;
      case 'd':
        if (value !== '0' && value !== '1') return null;
        out.more = value === '0';
        break;
      case 'p':
        out.payload = value;
        break;
      case 'e':
        if (value !== '0' && value !== '1') return null;
        out.base64 = value === '1';
        break;
      default:
        // a, c, f, g, n, o, s, t, u, w and anything newer: nothing jackin acts on.
        break;
    }
  }
  return out;
}

/** What one OSC 99 came to. */
export type Osc99Result =
  /** The last chunk of a notification: its title and body (UTF-8, not yet inert, either may be ''). */
  | { kind: 'complete'; title: string; body: string }
  /** A chunk kept for later, or one whose content jackin does not use (an icon, buttons) of a pending one. */
  | { kind: 'pending' }
  /** Nothing to show; `what` is a fixed label (never program text). */
  | { kind: 'ignored'; what: string };

interface Pending {
  title: Buffer[];
  body: Buffer[];
  bytes: number;
  lastAt: number;
}

const utf8 = new TextDecoder('utf-8');

/** Joins the chunks of OSC 99 notifications per id, within the bounds above. */
export class KittyNotifications {
  readonly #pending = new Map<string, Pending>();
  readonly #now: () => number;
  /** Ids of the notifications written again to the operator's terminal: jackin's own, unique per session (made at first use). */
  #idPrefix: string | null = null;
  #written = 0;

  constructor(now: () => number = () => performance.now()) {
    this.#now = now;
  }

  /** A fresh id for a notification written to the operator's terminal in two chunks (title, then body). */
  nextTerminalId(): string {
    this.#idPrefix ??= `jackin-${randomBytes(4).toString('hex')}-`;
    return `${this.#idPrefix}${++this.#written}`;
  }

  /** Ids with chunks pending (tests). */
  get pendingIds(): number {
    return this.#pending.size;
  }

  /** Parts held for all pending ids (tests). */
  get pendingParts(): number {
    let n = 0;
    for (const e of this.#pending.values()) n += e.title.length + e.body.length;
    return n;
  }

  /** One OSC 99: `rest` is everything after `99;` (metadata ; payload). */
  accept(rest: string): Osc99Result {
    const semi = rest.indexOf(';');
    if (semi < 0) return { kind: 'ignored', what: 'OSC 99 without payload' };
    const meta = parseOsc99Metadata(rest.slice(0, semi));
    if (meta === null) return { kind: 'ignored', what: 'OSC 99 (malformed metadata)' };
    const now = this.#now();
    this.#expire(now);
    const raw = rest.slice(semi + 1);
    if (meta.payload === '?' || meta.payload === 'alive' || meta.payload === 'close') {
      // Asks the terminal something or closes a shown one: no answer, and the program's other chunks stay.
      return { kind: 'ignored', what: `OSC 99 p=${meta.payload}` };
    }
    let entry = this.#pending.get(meta.id);
    if (meta.payload === 'title' || meta.payload === 'body') {
      let bytes: Buffer;
      if (meta.base64) {
        if (!BASE64.test(raw) || raw.length % 4 === 1) {
          this.#pending.delete(meta.id);
          return { kind: 'ignored', what: 'OSC 99 (bad base64)' };
        }
        bytes = Buffer.from(raw, 'base64');
      } else bytes = Buffer.from(raw, 'utf8');
      if (entry === undefined) entry = this.#start(meta.id, now);
      const room = MAX_NOTIFICATION_BYTES - entry.bytes;
      const kept = bytes.length <= room ? bytes : bytes.subarray(0, Math.max(0, room));
      // Empty parts are not kept: the parts held are then bounded by the bytes held.
      if (kept.length > 0) (meta.payload === 'title' ? entry.title : entry.body).push(kept);
      entry.bytes += kept.length;
    } else if (entry === undefined && meta.more) {
      // An icon or buttons first: the notification is pending from here (their content is not kept).
      entry = this.#start(meta.id, now);
    }
    if (entry === undefined) return { kind: 'ignored', what: `OSC 99 p=${/^[a-z]{1,16}$/.test(meta.payload) ? meta.payload : '…'}` };
    entry.lastAt = now;
    if (meta.more) return { kind: 'pending' };
    this.#pending.delete(meta.id);
    return { kind: 'complete', title: utf8.decode(Buffer.concat(entry.title)), body: utf8.decode(Buffer.concat(entry.body)) };
  }

  #start(id: string, now: number): Pending {
    if (this.#pending.size >= MAX_PENDING_IDS) {
      // Map order is insertion order: the first key is the oldest notification.
      const oldest = this.#pending.keys().next();
      if (oldest.done !== true) this.#pending.delete(oldest.value);
    }
    const entry: Pending = { title: [], body: [], bytes: 0, lastAt: now };
    this.#pending.set(id, entry);
    return entry;
  }

  #expire(now: number): void {
    for (const [id, entry] of this.#pending) if (now - entry.lastAt >= PENDING_MAX_MS) this.#pending.delete(id);
  }
}
