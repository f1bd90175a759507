/**
 * Loads the two CLIs' CommonJS bundles (`jackin`, `jackin-capsule`) with a V8 code cache made when the
 * package was built, so their code is not compiled again at every start (about a fifth off `jackin
 * --version` and off the capsule's time to its socket: bench/RESULTS.md, Container, notes). The capsule's
 * bundle holds xterm too, and its cache the functions of a first attach (src/cli/code-cache-warm-up.ts). The
 * cache is V8's own, through `vm.Script`'s `cachedData`, not Node's `module.enableCompileCache` (22 and later): that one
 * is written at run time into a directory, and here a cache is made once, by the build (below).
 *
 * V8 accepts a cache only for the exact source, V8 version and flags it was made with; otherwise it
 * compiles as usual (`cachedDataRejected`), so a stale or foreign cache (a package built by another Node)
 * costs a file read and nothing else. A missing or unreadable cache is the same as none.
 *
 * Code compiled through `vm.Script` cannot use `import()` (Node refuses it without an experimental flag):
 * the one ES-only package the CLI loads, `open`, comes through bin/esm-import.js (see src/host/platform/opener.ts).
 * A code cache is code: V8 runs what it holds. It is read only from the package's own dist/, beside the
 * bundle it belongs to and as trusted as that bundle; a container sees the package read-only (`jackin run
 * --image`), and nothing here ever writes a cache at run time.
 *
 * This module is itself bundled as CommonJS and loaded with a plain require() (bin/jackin.js,
 * bin/jackin-capsule.js); scripts/bundle.mjs writes the caches with writeCodeCache. The capsule's is made
 * under CAPSULE_NODE_FLAGS (src/host/instances/container-run-argv.ts), the flags every capsule jackin starts runs
 * with, and the container's `jackin-capsule` shim passes the same; a capsule started without them
 * compiles its bundle as before.
 */
import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { Script } from 'node:vm';

type ModuleFunction = (exports: unknown, require: NodeJS.Require, module: { exports: unknown }, filename: string, dirname: string) => void;

/** The file as a function of what a CommonJS module sees (Node's own wrapper has the same parameters). */
function compile(file: string, cachedData: Buffer | undefined): Script {
  const source = `(function (exports, require, module, __filename, __dirname) { ${readFileSync(file, 'utf8')}\n})`;
  return new Script(source, { filename: file, ...(cachedData !== undefined ? { cachedData } : {}) });
}

export interface LoadedModule {
  /** What the file put in `module.exports`. */
  exports: unknown;
  /** Whether V8 used the cache: refused (another source, V8 or flags) or missing, the file was compiled. */
  cache: 'accepted' | 'rejected' | 'missing';
}

/** Runs the CommonJS file `file` as a module, compiled with the code cache at `cacheFile` when V8 accepts it. */
export function loadWithCodeCache(file: string, cacheFile: string): LoadedModule {
  let cachedData: Buffer | undefined;
  try {
    cachedData = readFileSync(cacheFile);
  } catch {
    cachedData = undefined;
  }
  const script = compile(file, cachedData);
  const mod = { exports: {} as unknown };
  (script.runInThisContext() as ModuleFunction).call(mod.exports, mod.exports, createRequire(file), mod, file, dirname(file));
  return { exports: mod.exports, cache: cachedData === undefined ? 'missing' : script.cachedDataRejected === true ? 'rejected' : 'accepted' };
}

/**
 * Writes the code cache of `file` to `cacheFile` (whole, under a temporary name first): run by the build in
 * a child `node` with the flags the binary runs with (V8 refuses a cache made under other flags). The
 * module is run first, and its `warmUpForCodeCache` export when it has one
 * (src/cli/code-cache-warm-up.ts), so the cache also holds the functions those ran, which V8 compiles
 * only on first use.
 */
export async function writeCodeCache(file: string, cacheFile: string): Promise<number> {
  const script = compile(file, undefined);
  const mod = { exports: {} as { warmUpForCodeCache?: unknown } };
  (script.runInThisContext() as ModuleFunction).call(mod.exports, mod.exports, createRequire(file), mod, file, dirname(file));
  if (typeof mod.exports.warmUpForCodeCache === 'function') await (mod.exports.warmUpForCodeCache as () => Promise<void>)();
  const data = script.createCachedData();
  const tmp = `${cacheFile}.${process.pid}.tmp`;
  try {
    writeFileSync(tmp, data);
    renameSync(tmp, cacheFile);
  } finally {
    rmSync(tmp, { force: true });
  }
  return data.length;
}
