/**
 * A sliding-window limit on host actions an untrusted side can ask for (opening links and files), so a
 * flood of requests cannot become a flood of browser tabs even with a gesture behind each.
 */
import { performance } from 'node:perf_hooks';
import { JackinError } from '../../errors.ts';

/** Default: at most 3 opens in any 5 seconds, more than a person clicks, far fewer than a script sends. */
export const DEFAULT_OPEN_RATE = { max: 3, windowMs: 5000 } as const;

export interface RateLimiterOptions {
  readonly max: number;
  readonly windowMs: number;
  /** Monotonic clock in milliseconds; injected by tests. */
  readonly now?: () => number;
}

export interface RateLimiter {
  /** Records one use and returns true, or returns false (recording nothing) when the window is full. */
  tryTake(): boolean;
  /** Like tryTake, but throws JackinError E_RATE_LIMITED when the window is full. */
  take(what: string): void;
}

export function createRateLimiter(options: RateLimiterOptions): RateLimiter {
  return new SlidingWindowLimiter(options);
}

class SlidingWindowLimiter implements RateLimiter {
  readonly #max: number;
  readonly #windowMs: number;
  readonly #now: () => number;
  readonly #stamps: number[] = [];

  constructor(options: RateLimiterOptions) {
    const { max, windowMs } = options;
    if (!Number.isInteger(max) || max < 1) throw new RangeError(`rate limit max must be a positive integer, got ${max}`);
    if (!(windowMs > 0)) throw new RangeError(`rate limit window must be positive, got ${windowMs}`);
    this.#max = max;
    this.#windowMs = windowMs;
    this.#now = options.now ?? (() => performance.now());
  }

  tryTake(): boolean {
    const t = this.#now();
    this.#prune(t);
    if (this.#stamps.length >= this.#max) return false;
    this.#stamps.push(t);
    return true;
  }

  take(what: string): void {
    if (!this.tryTake()) {
      throw new JackinError(
        'E_RATE_LIMITED',
        `refused to open ${what}: more than ${this.#max} opens in ${this.#windowMs / 1000} s; wait a moment and try again`,
      );
    }
  }

  #prune(t: number): void {
    const stamps = this.#stamps;
    while (stamps.length > 0 && t - (stamps[0] ?? t) >= this.#windowMs) stamps.shift();
  }
}
