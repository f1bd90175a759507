/**
 * The production dependency tree of the installed jackin package, as Node resolves it (each package's
 * `dependencies`, and its optional and peer dependencies when installed), laid out again under the
 * runtime's `pkg/node_modules/`: a package goes to the top when that name is free there, else under the
 * `node_modules/` of the package that needs it, so every `require` in the copy finds the same package it
 * finds in the installed tree, whichever layout npm (or a parent project) gave that one. The PTY package's
 * per-platform binaries are left out: the runtime's comes from the registry (pins.ts).
 */
import { readFileSync, realpathSync, statSync } from 'node:fs';
import { basename, dirname, join, parse, posix } from 'node:path';
import { JackinError } from '../../errors.ts';

/** One package of the tree: where it is installed, and where it goes in the runtime's `pkg/`. */
export interface PlacedPackage {
  readonly name: string;
  readonly version: string;
  /** Its directory in the installed tree (a real path). */
  readonly source: string;
  /** Its directory relative to `pkg/`: `node_modules/<name>`, or nested under the package that needs it. */
  readonly target: string;
}

/**
 * Names the walk leaves out: the PTY package's per-platform binaries (the runtime brings its Linux one); with
 * `keep`, the one named `keep` stays (a copy of this host's own package takes this host's binary).
 */
function leftOut(name: string, keep: string | undefined): boolean {
  return name.startsWith('@lydell/node-pty-') && name !== keep;
}

interface Manifest {
  name?: unknown;
  version?: unknown;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
}

function readManifest(dir: string): Manifest {
  return JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as Manifest;
}

/** Where Node finds package `name` from a module in `dir`: each ancestor's node_modules, nearest first; null when none has it. */
function resolvePackageDir(dir: string, name: string): string | null {
  let at = dir;
  for (;;) {
    if (basename(at) !== 'node_modules') {
      const candidate = join(at, 'node_modules', name);
      try {
        if (statSync(join(candidate, 'package.json')).isFile()) return realpathSync(candidate);
      } catch {
        // not here
      }
    }
    if (at === parse(at).root) return null;
    at = dirname(at);
  }
}

/**
 * The tree of `root`'s production dependencies, placed for the runtime, in a stable order; `keepPty` names
 * the one PTY binary package to keep (`@lydell/node-pty-linux-x64`), none by default.
 */
export function productionTree(root: string, { keepPty }: { keepPty?: string } = {}): PlacedPackage[] {
  const placed: PlacedPackage[] = [];
  /** Target directory -> the source placed there. */
  const byTarget = new Map<string, string>();
  const queue: { source: string; target: string }[] = [{ source: realpathSync(root), target: '' }];
  const seen = new Set<string>();
  while (queue.length > 0) {
    const { source, target } = queue.shift()!;
    const key = `${source}\0${target}`;
    if (seen.has(key)) continue;
    seen.add(key);
    const manifest = readManifest(source);
    const wants: [string, boolean][] = [
      ...Object.keys(manifest.dependencies ?? {}).map((n): [string, boolean] => [n, true]),
      ...Object.keys(manifest.optionalDependencies ?? {}).map((n): [string, boolean] => [n, false]),
      ...Object.keys(manifest.peerDependencies ?? {}).map((n): [string, boolean] => [n, false]),
    ];
    for (const [name, required] of wants.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))) {
      if (leftOut(name, keepPty)) continue;
      const dep = resolvePackageDir(source, name);
      if (dep === null) {
        if (!required) continue;
        throw new JackinError(
          'E_RUNTIME_PACKAGE',
          `the installed jackin package is incomplete: ${name}, a dependency of ${String(manifest.name ?? source)}, is not installed (looked from ${source}); reinstall jackin-bridge`,
        );
      }
      // Node looks in the nearest node_modules first: the first target on the way up that holds `name`
      // decides. The same package there is reused; another one means this one nests under `target`.
      let found: string | undefined;
      for (let at = target; ; at = parentTarget(at)) {
        const t = posix.join(at, 'node_modules', name);
        const there = byTarget.get(t);
        if (there !== undefined) {
          found = there === dep ? t : undefined;
          if (found === undefined) place(posix.join(target, 'node_modules', name), dep);
          break;
        }
        if (at === '') {
          place(posix.join('node_modules', name), dep);
          break;
        }
      }
      if (found !== undefined) continue;
    }
  }
  return placed;

  function place(t: string, dep: string): void {
    const m = readManifest(dep);
    byTarget.set(t, dep);
    placed.push({ name: String(m.name), version: String(m.version), source: dep, target: t });
    queue.push({ source: dep, target: t });
  }
}

/** The package directory a target's `node_modules/` lookups climb to next: `a/node_modules/b` -> `a`... up to ''. */
function parentTarget(target: string): string {
  // A target is `node_modules/<name>` (a scoped name has two segments), possibly nested.
  const i = target.lastIndexOf('node_modules/');
  return i <= 0 ? '' : target.slice(0, i - 1);
}
