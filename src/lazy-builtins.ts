/**
 * Node's own modules that a waiting session never needs, loaded at their first use instead of when a bundle
 * starts: a bundle hoists every import into its start-up, and both binaries stay up for hours doing nothing
 * most of the time. Anonymous memory (smaps_rollup) a module adds for the process's life once loaded, in
 * an otherwise bare `node` 24.22.3: `node:crypto` 1.2 MiB, `node:zlib` 0.55 MiB. In the bench's idle
 * sessions (bench/RESULTS.md), loading them at first use took the capsule from 5.5-5.8 to 5.0-5.1 MiB above
 * a bare node on Node 24 and from 4.7-4.8 to 4.3-4.5 on Node 20, the host from 1.5-1.7 to 1.2 on Node 20.
 * Hashes and random names are needed only once an image, a file or a copy moves; zlib only for a directory
 * export. test/idle-e2e.test.ts and test/import-graph.test.ts keep it so.
 *
 * `node:child_process` (0.7 MiB) is not here: commander, which both binaries parse their arguments with,
 * loads it at start (docs/dependencies.md).
 */
import { createRequire } from 'node:module';
import type * as Crypto from 'node:crypto';
import type * as Zlib from 'node:zlib';

const load = createRequire(import.meta.url);

let crypto: typeof Crypto | undefined;
let zlib: typeof Zlib | undefined;

/** `node:crypto`, loaded at the first call. */
export function nodeCrypto(): typeof Crypto {
  return (crypto ??= load('node:crypto') as typeof Crypto);
}

/** `node:zlib`, loaded at the first call. */
export function nodeZlib(): typeof Zlib {
  return (zlib ??= load('node:zlib') as typeof Zlib);
}

/** `randomBytes(n)` of `node:crypto`, for defaults of injectable random sources. */
export function randomBytes(n: number): Buffer {
  return nodeCrypto().randomBytes(n);
}
