/**
 * A garbage collection after every so many bytes of program output: a minor one, and every fourth a full one.
 *
 * In a flood, the capsule's garbage is mostly the output chunks it has passed on: buffers outside V8's heap,
 * which V8 frees only at collections that little else triggers once the PTY is read on (session.ts,
 * READ_ON_FROM); chunks still in flight at a minor one are promoted and need a full one. Collecting by output
 * keeps the capsule's peak RSS in a flood under 100 MiB at no CPU cost (measurements: bench/RESULTS.md,
 * Container, notes).
 *
 * The collector is V8's `gc` function. Node hands it out only with --expose-gc, so it is looked up once:
 * the global when the capsule was started with the flag, else the flag is set at run time and the function
 * taken from a new context (the capsule's own global stays without `gc`). Where neither works, nothing is
 * collected early and V8 collects on its own schedule, as before.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** Output between two collections: minor ones, and every MAJOR_GC_EVERY-th a full one. */
export const OUTPUT_GC_BYTES = 4 * 1024 * 1024;
export const MAJOR_GC_EVERY = 4;

export type GcKind = 'minor' | 'major';
type GcFunction = (options?: { type: 'minor' }) => void;

/** V8's `gc` function, or null where it cannot be had. */
export function lookUpGc(): GcFunction | null {
  try {
    const global = (globalThis as { gc?: unknown }).gc;
    if (typeof global === 'function') return global as GcFunction;
    setFlagsFromString('--expose-gc');
    const fromContext: unknown = runInNewContext('gc');
    return typeof fromContext === 'function' ? (fromContext as GcFunction) : null;
  } catch {
    return null;
  }
}

/** Counts output and runs `collect` once every `everyBytes`: a major collection every `majorEvery`-th time. */
export class OutputCollector {
  #since = 0;
  #collections = 0;

  readonly #collect: (kind: GcKind) => void;
  readonly #everyBytes;
  readonly #majorEvery;
  constructor(collect: (kind: GcKind) => void, everyBytes = OUTPUT_GC_BYTES, majorEvery = MAJOR_GC_EVERY) {
    this.#collect = collect;
    this.#everyBytes = everyBytes;
    this.#majorEvery = majorEvery;
  }

  count(bytes: number): void {
    this.#since += bytes;
    if (this.#since < this.#everyBytes) return;
    this.#since = 0;
    this.#collections++;
    this.#collect(this.#collections % this.#majorEvery === 0 ? 'major' : 'minor');
  }
}

let processGc: GcFunction | null | undefined;

/**
 * A collection through the process's `gc` (looked up on first use); a no-op where there is none. A full one is
 * `gc()` with no argument: in Node 20's V8, `gc({ type: 'major' })` (any options object) returns in under a
 * millisecond and leaves promoted buffers alone (output-gc.test.ts), where `gc()` frees them.
 */
export function collectGarbage(kind: GcKind): void {
  if (processGc === undefined) processGc = lookUpGc();
  if (kind === 'major') processGc?.();
  else processGc?.({ type: 'minor' });
}
