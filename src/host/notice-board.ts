/**
 * The notices the host draws, from two sources kept apart: the host's own (the outcome of every host
 * action) and the container's (Notice frames, which anything in the container can cause). Container notices
 * have their own small, rate-limited queue, are shown only while no host notice is waiting, and give way
 * at once when a host notice arrives; they can never push a host notice out, delay it, or pass for one
 * (the caller marks them `capsule:`). Same interface as NoticeQueue, so the overlay draws either.
 */
import type { NoticeLevel } from '../protocol/frames.ts';
import { NoticeQueue, type Notice } from '../ui/notices.ts';
import { createRateLimiter, type RateLimiter } from './rate-limiter.ts';

/** Container notices accepted: at most this many in any window; the rest are dropped (and counted). */
export const CONTAINER_NOTICE_RATE = { max: 3, windowMs: 10_000 } as const;

export type NoticeSource = 'host' | 'container';

export class NoticeBoard {
  readonly #host: NoticeQueue;
  readonly #container: NoticeQueue;
  readonly #limit: RateLimiter;
  readonly #now: () => number;
  #dropped = 0;

  constructor(now: () => number = Date.now) {
    this.#now = now;
    this.#host = new NoticeQueue(now);
    this.#container = new NoticeQueue(now);
    this.#limit = createRateLimiter({ ...CONTAINER_NOTICE_RATE, now });
  }

  /** Adds a notice. Returns true when the shown notice changed at once (the caller draws it). */
  post(level: NoticeLevel, text: string, from: NoticeSource = 'host'): boolean {
    if (from === 'host') {
      const wasContainer = this.#host.current === null && this.#container.current !== null;
      const first = this.#host.post(level, text);
      // A host notice never waits behind the container's: it replaces the container notice on screen.
      return first || wasContainer;
    }
    if (!this.#limit.tryTake()) {
      this.#dropped += 1;
      return false;
    }
    const before = this.current;
    this.#container.post(level, text);
    return this.current !== before;
  }

  /** The notice on screen: the host's when one is up, else the container's. */
  get current(): Notice | null {
    return this.#host.current ?? this.#container.current;
  }

  get deadline(): number | null {
    return this.#host.current !== null ? this.#host.deadline : this.#container.deadline;
  }

  /** Advances time for the shown queue. Returns true when the shown notice changed. */
  tick(): boolean {
    const before = this.current;
    if (this.#host.current !== null) this.#host.tick();
    // Container notices whose time ran out while host notices were up are dropped unseen, so a stale
    // one never flashes between two host notices.
    if (this.#host.current === null) {
      while (this.#container.tick()) {
        const due = this.#container.deadline;
        if (due === null || due > this.#now()) break;
      }
    }
    return this.current !== before;
  }

  clear(): void {
    this.#host.clear();
    this.#container.clear();
  }

  get pending(): number {
    return this.#host.pending + this.#container.pending;
  }

  /** Container notices dropped by the rate limit so far. */
  get dropped(): number {
    return this.#dropped;
  }
}
