/**
 * Operator gestures the host saw in its own input stream (a palette key, a modifier-click). With an
 * upstream capsule the palette runs inside the container, so the host cannot know which action a key
 * led to; it only honours a capsule's HostOpenUrl / FileExport frame shortly after such a gesture, and
 * at most once per gesture, so a capsule can never act on its own or turn one click into many actions.
 */
import { performance } from 'node:perf_hooks';

/** How long after a gesture a capsule frame may still answer it: a palette round trip plus a slow link. */
const DEFAULT_GESTURE_WINDOW_MS = 3000;
/** Gestures remembered at once; older ones are forgotten (a person does not click faster than this). */
const MAX_PENDING_GESTURES = 16;

export interface GestureGateOptions {
  /** Monotonic clock in milliseconds; injected by tests. */
  readonly now?: () => number;
}

interface Pending<K> {
  readonly at: number;
  readonly kinds: ReadonlySet<K>;
}

/** The operator gestures not yet used up, newest last. */
export class GestureGate<K extends string> {
  readonly #now: () => number;
  #pending: Pending<K>[] = [];

  constructor(options: GestureGateOptions = {}) {
    this.#now = options.now ?? (() => performance.now());
  }

  /**
   * Records one operator gesture at the current time. One gesture may authorise several kinds (a
   * palette key may lead to an open or an export) but is used up by the first consume of any of them.
   */
  gesture(kinds: K | readonly K[]): void {
    const set = new Set<K>(typeof kinds === 'string' ? [kinds as K] : (kinds as readonly K[]));
    this.#pending.push({ at: this.#now(), kinds: set });
    if (this.#pending.length > MAX_PENDING_GESTURES) this.#pending = this.#pending.slice(-MAX_PENDING_GESTURES);
  }

  /**
   * Uses up the newest unused gesture of `kind` made within the last `windowMs` and returns true, or
   * returns false when there is none.
   */
  consume(kind: K, windowMs = DEFAULT_GESTURE_WINDOW_MS): boolean {
    const t = this.#now();
    const pending = this.#pending;
    for (let i = pending.length - 1; i >= 0; i--) {
      const g = pending[i];
      if (g === undefined) continue;
      const age = t - g.at;
      // A negative age would mean a clock going backwards; never treat that as fresh.
      if (age < 0 || age > windowMs || !g.kinds.has(kind)) continue;
      pending.splice(i, 1);
      return true;
    }
    return false;
  }

  /** Forgets every gesture (for example when the operator detaches). */
  clear(): void {
    this.#pending = [];
  }
}

/** The host actions an upstream capsule may ask for after a gesture. */
export type HostRequestKind = 'open' | 'export' | 'clipboard';

/**
 * What each gesture may let through. A palette key (the upstream capsule's palette runs in the container,
 * so the host cannot know which action it led to) may be answered by any one request; a modifier-click by an
 * open or an export, never by a clipboard read.
 */
const GESTURE_AUTHORISES: Readonly<Record<'palette-key' | 'click', readonly HostRequestKind[]>> = {
  'palette-key': ['open', 'export', 'clipboard'],
  click: ['open', 'export'],
};

/**
 * How long after a gesture an upstream capsule's request may answer it. A clipboard read follows the
 * palette key only after the operator found the action in the capsule's palette; a click's open or export
 * follows at once.
 */
const UPSTREAM_REQUEST_WINDOW_MS: Readonly<Record<HostRequestKind, number>> = {
  open: DEFAULT_GESTURE_WINDOW_MS,
  export: DEFAULT_GESTURE_WINDOW_MS,
  clipboard: 15_000,
};

/**
 * The one gate of a session: every feature consumes from it, so one gesture lets exactly one host request
 * through, whichever feature asks first (Node runs one frame handler at a time, so the consume is atomic).
 * Only the palette key and a modifier-click count: a key chosen in our own palette runs its action on the
 * host directly (no capsule request rides on it), detach and navigation keys are not gestures, and
 * pressing the palette key again while its gesture is unused replaces it instead of adding a second.
 */
export class SessionGestures {
  readonly #gate: GestureGate<HostRequestKind>;

  constructor(options: GestureGateOptions = {}) {
    this.#gate = new GestureGate<HostRequestKind>(options);
  }

  /** Records what the operator did; anything but the palette key and a modifier-click is ignored. */
  record(g: string): void {
    if (g !== 'palette-key' && g !== 'click') return;
    // An unused palette-key gesture is the only one that authorises a clipboard read: taking it out lets
    // the new press replace it (the same palette session) rather than stand beside it.
    if (g === 'palette-key') this.#gate.consume('clipboard');
    this.#gate.gesture(GESTURE_AUTHORISES[g]);
  }

  /** Uses up the newest gesture that may authorise `kind`; false when there is none. */
  consume(kind: HostRequestKind, windowMs = UPSTREAM_REQUEST_WINDOW_MS[kind]): boolean {
    return this.#gate.consume(kind, windowMs);
  }

  clear(): void {
    this.#gate.clear();
  }
}
