/**
 * The production dependency tree of the installed jackin package, as Node resolves it (each package's
 * `dependencies`, and its optional and peer dependencies when installed), laid out again under the
 * runtime's `pkg/node_modules/`: a package goes to the top when that name is free there, else under the
 * `node_modules/` of the package that needs it, so every `require` in the copy finds the same package it
 * finds in the installed tree, whichever layout npm (or a parent project) gave that one. The PTY package's
 * per-platform binaries are left out: the runtime's comes from the registry (pins.ts). With it, the package's
 * own files that every copy of the capsule takes (capsulePackageFiles): the runtime's and the --ssh copy's.
 */
import { readdirSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { basename, dirname, join, parse, posix, relative, sep } from 'node:path';
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

/** One file of the package's own (not of a dependency): its path relative to the package, and on disk. */
export interface PackageFile {
  readonly rel: string;
  readonly abs: string;
}

/** Every regular file under `dir` (recursively, symlinks and the directories named in `skipDirs` left out), relative to `base`, sorted. */
export function filesUnder(base: string, dir: string, skipDirs: readonly string[] = []): PackageFile[] {
  const out: PackageFile[] = [];
  const walk = (at: string): void => {
    for (const e of readdirSync(at, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
      const abs = join(at, e.name);
      if (e.isDirectory()) {
        if (!skipDirs.includes(e.name)) walk(abs);
      } else if (e.isFile()) out.push({ rel: relative(base, abs).split(sep).join('/'), abs });
    }
  };
  walk(dir);
  return out;
}

/**
 * The capsule's own files of the package at `root`, for every copy of it that runs elsewhere (the runtime of
 * runtime.ts, the --ssh copy of remote-capsule.ts): package.json, bin/ and container-bin/ (the binaries and
 * the container's shims), policies/ (the capsule reads policies/default.json), the bundles (dist/*.bundle.cjs:
 * they keep every package but xterm's and commander external, so the production tree of productionTree goes
 * too), and with `codeCaches` their code caches (dist/*.bundle.cache), which only a Node of this very build
 * accepts. Throws E_RUNTIME_PACKAGE, naming the fix, for a package without its binaries or capsule bundle.
 */
export function capsulePackageFiles(root: string, { codeCaches }: { codeCaches: boolean }): PackageFile[] {
  const files: PackageFile[] = [{ rel: 'package.json', abs: join(root, 'package.json') }];
  for (const dir of ['bin', 'container-bin', 'policies']) {
    try {
      if (statSync(join(root, dir)).isDirectory()) files.push(...filesUnder(root, join(root, dir)));
    } catch {
      if (dir !== 'policies') throw new JackinError('E_RUNTIME_PACKAGE', `the jackin package at ${root} has no ${dir}/; reinstall jackin-bridge`);
    }
  }
  const bundle = codeCaches ? /\.bundle\.(cjs|cache)$/ : /\.bundle\.cjs$/;
  let bundles: string[] = [];
  try {
    bundles = readdirSync(join(root, 'dist'), { withFileTypes: true })
      .filter((e) => e.isFile() && bundle.test(e.name))
      .map((e) => e.name)
      .sort();
  } catch {
    bundles = [];
  }
  if (!bundles.includes('jackin-capsule.bundle.cjs')) {
    throw new JackinError(
      'E_RUNTIME_PACKAGE',
      `the jackin package at ${root} has no dist/jackin-capsule.bundle.cjs: build it (npm run build) or reinstall jackin-bridge`,
    );
  }
  files.push(...bundles.map((b) => ({ rel: `dist/${b}`, abs: join(root, 'dist', b) })));
  return files;
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
