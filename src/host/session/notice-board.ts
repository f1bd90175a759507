/**
 * The notices the host draws, from two sources kept apart: the host's own (the outcome of every host
 * action) and the container's (Notice frames, which anything in the container can cause). Container notices
 * have their own small, rate-limited queue, are shown only while no host notice is up, and give way at once
 * when a host notice arrives (their time starts again when they are visible again); they can never push a
 * host notice out, delay it, or pass for one (the caller marks them `capsule:`). Same interface as
 * NoticeQueue, so the overlay draws either.
 */
import type { NoticeLevel } from '../../protocol/frames.ts';
import { inertText } from '../../ui/inert-text.ts';
import { NOTICE_MAX_COLUMNS, NOTICE_MIN_MS, NOTICE_MS, NoticeQueue, type Notice } from '../../ui/notices.ts';
import { createRateLimiter, type RateLimiter } from '../platform/rate-limiter.ts';

/** Container notices accepted: at most this many in any window; the rest are dropped (and counted). */
export const CONTAINER_NOTICE_RATE = { max: 10, windowMs: 10_000 } as const;
/** Container notices kept waiting at most; a newer one replaces the oldest waiting. */
const CONTAINER_NOTICE_QUEUE_MAX = 4;

export type NoticeSource = 'host' | 'container';

export class NoticeBoard {
  readonly #host: NoticeQueue;
  /** Container notices; the first is shown whenever no host notice is up. */
  #container: Notice[] = [];
  /** When the shown container notice ends; null while it waits under a host notice. */
  #containerUntil: number | null = null;
  readonly #limit: RateLimiter;
  readonly #now: () => number;
  #dropped = 0;

  constructor(now: () => number = Date.now) {
    this.#now = now;
    this.#host = new NoticeQueue(now);
    this.#limit = createRateLimiter({ ...CONTAINER_NOTICE_RATE, now });
  }

  /** Adds a notice. Returns true when the shown notice changed at once (the caller draws it). */
  post(level: NoticeLevel, text: string, from: NoticeSource = 'host'): boolean {
    if (from === 'host') {
      const coveredContainer = this.#host.current === null && this.#container.length > 0;
      // The container notice under it waits, and gets its full time when it shows again.
      if (coveredContainer) this.#containerUntil = null;
      return this.#host.post(level, text) || coveredContainer;
    }
    if (!this.#limit.tryTake()) {
      this.#dropped += 1;
      return false;
    }
    this.#container.push({ level, text: inertText(text, NOTICE_MAX_COLUMNS) });
    // Too many waiting: the oldest waiting one goes (never the one on screen).
    if (this.#container.length > CONTAINER_NOTICE_QUEUE_MAX) this.#container.splice(1, 1);
    if (this.#host.current !== null || this.#container.length > 1) {
      if (this.#containerUntil !== null)
        this.#containerUntil = Math.min(this.#containerUntil, Math.max(this.#now(), this.#containerUntil - NOTICE_MS + NOTICE_MIN_MS));
      return false;
    }
    this.#containerUntil = this.#now() + NOTICE_MS;
    return true;
  }

  /** The notice on screen: the host's when one is up, else the container's. */
  get current(): Notice | null {
    return this.#host.current ?? this.#container[0] ?? null;
  }

  get deadline(): number | null {
    if (this.#host.current !== null) return this.#host.deadline;
    return this.#container.length > 0 ? this.#containerUntil : null;
  }

  /** Advances time for the shown notice. Returns true when the shown notice changed. */
  tick(): boolean {
    const now = this.#now();
    if (this.#host.current !== null) {
      const changed = this.#host.tick();
      if (this.#host.current === null && this.#container.length > 0) this.#containerUntil = now + NOTICE_MS;
      return changed;
    }
    if (this.#container.length === 0 || this.#containerUntil === null || now < this.#containerUntil) return false;
    this.#container.shift();
    this.#containerUntil = this.#container.length === 0 ? null : now + (this.#container.length > 1 ? NOTICE_MIN_MS : NOTICE_MS);
    return true;
  }

  /** Takes back a host notice (NoticeQueue.withdraw); true when the shown notice changed. */
  withdraw(text: string): boolean {
    const changed = this.#host.withdraw(text);
    if (changed && this.#host.current === null && this.#container.length > 0) this.#containerUntil = this.#now() + NOTICE_MS;
    return changed;
  }

  clear(): void {
    this.#host.clear();
    this.#container = [];
    this.#containerUntil = null;
  }

  get pending(): number {
    return this.#host.pending + Math.max(0, this.#container.length - (this.#host.current === null ? 1 : 0));
  }

  /** Container notices dropped by the rate limit so far. */
  get dropped(): number {
    return this.#dropped;
  }
}
