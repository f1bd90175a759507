/**
 * The capsule runtime (`--capsule runtime`, issue 46): a Linux Node of the line jackin is tested on, the
 * PTY package's Linux binary, and this package's capsule files, assembled from the npm registry into the
 * user's cache, for a container whose architecture or C library the host's own Node cannot serve (a macOS
 * or Windows host, an arm64 image on an x64 host).
 *
 * Layout of a runtime's `root` (`<cache>/runtime/<name>/`): `node` (a Linux ELF of the arch), `pkg/` (a
 * jackin package tree: package.json, bin/, container-bin/, policies/, dist/*.bundle.cjs [+ the capsule's
 * code cache when this host could make it], node_modules/ with the production dependencies and
 * @lydell/node-pty-linux-<arch>), `manifest.json` (every file with its sha256 and size, the versions and
 * integrities). The name holds the arch, Node's version, jackin's version and a hash of the package files
 * copied, so a rebuilt jackin assembles a new one. A runtime is assembled in a temporary directory beside
 * it and published by rename, so no partial runtime is ever under a final name; of two concurrent
 * assemblers the one that loses the rename uses the winner's.
 */
import { execFile } from 'node:child_process';
import { createReadStream, readFileSync } from 'node:fs';
import { copyFile, mkdir, readFile, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { errnoOf, JackinError } from '../../errors.ts';
import { nodeCrypto, randomBytes } from '../../lazy-builtins.ts';
import { PACKAGE_ROOT } from '../../package-root.ts';
import { ELF_MACHINE, elfMachine } from './elf.ts';
import { capsulePackageFiles, filesUnder, productionTree, type PackageFile, type PlacedPackage } from './package-tree.ts';
import { PINNED, spec, type PinnedPackage, type RuntimeArch, type RuntimePins } from './pins.ts';
import { registryUrl, tarballsFrom, verifiedTarballs, type Progress } from './registry.ts';
import { extractTarball } from './tarball.ts';

export type { RuntimeArch } from './pins.ts';

/** An assembled, verified runtime in the cache. */
export interface Runtime {
  arch: RuntimeArch;
  /** Absolute, in the cache. */
  root: string;
  /** join(root, 'node'). */
  node: string;
  /** join(root, 'pkg'). */
  packageRoot: string;
  /** The pty.node under pkg/node_modules/@lydell/node-pty-linux-<arch>/. */
  ptyBinary: string;
  /** Whether pkg/dist/jackin-capsule.bundle.cache was made by this runtime's node. */
  codeCache: boolean;
}

/** Map an engine's architecture name (amd64, x86_64, arm64, aarch64, arm64/v8) to ours; null otherwise. */
export function runtimeArch(engineArch: string): RuntimeArch | null {
  const a = engineArch.trim().toLowerCase();
  if (a === 'amd64' || a === 'x86_64' || a === 'x64' || a === 'linux/amd64') return 'x64';
  if (/^(linux\/)?(arm64|aarch64)(\/v8)?$/u.test(a)) return 'arm64';
  return null;
}

/** jackin's cache directory: JACKIN_CACHE_DIR, else the platform's user cache directory + `jackin`. */
export function cacheDir(env: NodeJS.ProcessEnv = process.env, platform: NodeJS.Platform = process.platform): string {
  const set = env['JACKIN_CACHE_DIR'];
  // Absolute, whatever the working directory: a runtime's paths are mounted into containers.
  if (set !== undefined && set !== '') return resolve(set);
  const home = env['HOME'] || homedir();
  if (platform === 'darwin') return join(home, 'Library', 'Caches', 'jackin');
  if (platform === 'win32') return join(env['LOCALAPPDATA'] || join(home, 'AppData', 'Local'), 'jackin', 'cache');
  const xdg = env['XDG_CACHE_HOME'];
  return join(xdg !== undefined && xdg !== '' ? xdg : join(home, '.cache'), 'jackin');
}

/** `<cache>/runtime`: the runtimes, and their verified tarballs under `tarballs/`. */
export function runtimesDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(cacheDir(env), 'runtime');
}

/** What a runtime is made from and where: tests give their own pins, package and cache. */
export interface AssembleOptions {
  readonly env?: NodeJS.ProcessEnv;
  readonly pins?: RuntimePins;
  /** The jackin package whose capsule files are copied (default: this one). */
  readonly packageRoot?: string;
  /** A directory of `npm pack` tarballs to take the registry's packages from instead of the network. */
  readonly from?: string | undefined;
  readonly say?: ((line: string) => void) | undefined;
  readonly progress?: Progress | undefined;
  /** Whether to make the capsule's code cache with the runtime's node; default: when this host can run it. */
  readonly codeCache?: boolean;
}

const MANIFEST = 'manifest.json';
const MANIFEST_FORMAT = 1;

interface FileEntry {
  sha256: string;
  size: number;
}

/** manifest.json of a runtime. */
export interface RuntimeManifest {
  format: number;
  name: string;
  arch: RuntimeArch;
  jackin: string;
  packageHash: string;
  node: PinnedPackage;
  pty: PinnedPackage;
  codeCache: boolean;
  /** Path relative to the root (with `/`) -> its sha256 and size; every file but the manifest. */
  files: Record<string, FileEntry>;
}

/** What of the package at `root` a runtime holds, and the hash that names it. */
interface PackagePlan {
  readonly root: string;
  readonly version: string;
  readonly files: readonly PackageFile[];
  readonly tree: readonly PlacedPackage[];
  readonly hash: string;
}

/**
 * The capsule's files of the package at `root` (capsulePackageFiles) and its production tree. A code cache
 * the host made is left out: made by another V8, the runtime's node would refuse it.
 */
function packagePlan(root: string, pins: RuntimePins, arch: RuntimeArch): PackagePlan {
  const pkgJson = join(root, 'package.json');
  let version: string;
  try {
    version = String((JSON.parse(readFileSync(pkgJson, 'utf8')) as { version?: unknown }).version ?? '0.0.0');
  } catch (e) {
    throw new JackinError('E_RUNTIME_PACKAGE', `the jackin package at ${root} has no readable package.json (${String(e)})`, { cause: e });
  }
  const files = capsulePackageFiles(root, { codeCaches: false });
  const tree = productionTree(root);
  const hash = nodeCrypto().createHash('sha256');
  const a = pins[arch];
  hash.update(`${arch}\0${spec(a.node)}\0${a.node.integrity}\0${spec(a.pty)}\0${a.pty.integrity}\0`);
  for (const f of files) hash.update(`${f.rel}\0${nodeCrypto().createHash('sha256').update(readFileSync(f.abs)).digest('hex')}\0`);
  // The dependencies by name, version and place: the package's own files (dist/) change with every
  // build, a dependency's only with its version.
  for (const p of tree) hash.update(`${p.target}\0${p.name}@${p.version}\0`);
  return { root, version, files, tree, hash: hash.digest('hex').slice(0, 12) };
}

/** The runtime's directory name for `plan`: arch, Node's version, jackin's version, the package hash. */
function runtimeName(arch: RuntimeArch, pins: RuntimePins, plan: PackagePlan): string {
  const safe = (s: string): string => s.replace(/[^A-Za-z0-9.+-]/gu, '_');
  return `${arch}-node${safe(pins[arch].node.version)}-jackin${safe(plan.version)}-${plan.hash}`;
}

function runtimeAt(arch: RuntimeArch, root: string, pty: PinnedPackage, codeCache: boolean): Runtime {
  const packageRoot = join(root, 'pkg');
  return { arch, root, node: join(root, 'node'), packageRoot, ptyBinary: join(packageRoot, 'node_modules', ...pty.name.split('/'), 'pty.node'), codeCache };
}

/** The runtime at `root` when its manifest and node are there (a cheap check: nothing is hashed). */
async function publishedRuntime(arch: RuntimeArch, root: string, pty: PinnedPackage): Promise<Runtime | null> {
  let manifest: RuntimeManifest;
  try {
    manifest = JSON.parse(await readFile(join(root, MANIFEST), 'utf8')) as RuntimeManifest;
    if (!(await stat(join(root, 'node'))).isFile()) return null;
  } catch {
    return null;
  }
  if (manifest.format !== MANIFEST_FORMAT || manifest.arch !== arch) return null;
  return runtimeAt(arch, root, pty, manifest.codeCache === true);
}

/** The cached runtime for `arch` of this package (or the options'), or null; never touches the network. */
export async function findRuntime(arch: RuntimeArch, options: AssembleOptions = {}): Promise<Runtime | null> {
  const pins = options.pins ?? PINNED;
  const plan = packagePlan(options.packageRoot ?? PACKAGE_ROOT, pins, arch);
  return publishedRuntime(arch, join(runtimesDir(options.env), runtimeName(arch, pins, plan)), pins[arch].pty);
}

/** The cached runtime for `arch`, or null; never touches the network. */
export async function cachedRuntime(arch: RuntimeArch): Promise<Runtime | null> {
  return findRuntime(arch);
}

/** sha256 and size of a file. */
async function fileEntry(file: string): Promise<FileEntry> {
  const hash = nodeCrypto().createHash('sha256');
  let size = 0;
  for await (const chunk of createReadStream(file)) {
    hash.update(chunk as Buffer);
    size += (chunk as Buffer).length;
  }
  return { sha256: hash.digest('hex'), size };
}

/** Every file under `root` but the manifest, hashed, by path relative to it. */
async function hashTree(root: string): Promise<Record<string, FileEntry>> {
  const files: Record<string, FileEntry> = {};
  for (const f of filesUnder(root, root)) if (f.rel !== MANIFEST) files[f.rel] = await fileEntry(f.abs);
  return files;
}

/** Whether this host can run a Linux `arch` node from the registry: Linux of that arch, with glibc. */
function hostRunsNode(arch: RuntimeArch): boolean {
  if (process.platform !== 'linux' || process.arch !== arch) return false;
  const header = (process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined)?.header;
  return typeof header?.glibcVersionRuntime === 'string';
}

/**
 * CAPSULE_NODE_FLAGS of src/host/instances/container-run-argv.ts, the flags every capsule runs with and so
 * the ones its code cache must be made under. A copy, not an import: container-run-argv.ts mounts a
 * runtime and may import this module, and the two must not import each other (test/import-graph.test.ts);
 * runtime-arch.test.ts keeps the copy equal.
 */
export const CODE_CACHE_FLAGS: readonly string[] = ['--max-semi-space-size=2', '--no-concurrent-recompilation'];

/**
 * Writes pkg/dist/jackin-capsule.bundle.cache with the runtime's own node under CAPSULE_NODE_FLAGS, as
 * scripts/bundle.mjs does for the host's; true when it was made.
 */
async function writeCapsuleCodeCache(root: string, say: (line: string) => void): Promise<boolean> {
  const dist = join(root, 'pkg', 'dist');
  const writer = `require(process.argv[1]).writeCodeCache(process.argv[2], process.argv[2].replace(/\\.cjs$/, '.cache'))
  .then((size) => { console.log(size); process.exit(0); }, (e) => { console.error(e); process.exit(1); });`;
  const env = { ...process.env };
  delete env['NODE_OPTIONS'];
  return new Promise((resolve) => {
    execFile(
      join(root, 'node'),
      [...CODE_CACHE_FLAGS, '-e', writer, join(dist, 'code-cache.bundle.cjs'), join(dist, 'jackin-capsule.bundle.cjs')],
      { env, timeout: 120_000, encoding: 'utf8' },
      (error, stdout, stderr) => {
        if (error === null && Number(stdout.trim()) > 0) return resolve(true);
        say(
          `the capsule's code cache could not be made with the runtime's node (${(stderr || error?.message || stdout).trim().split('\n')[0]}): the capsule compiles its bundle at each start`,
        );
        void rm(join(dist, 'jackin-capsule.bundle.cache'), { force: true }).then(() => resolve(false));
      },
    );
  });
}

/** Refuses a binary that is not an ELF file for `arch`. */
async function checkMachine(file: string, what: string, arch: RuntimeArch): Promise<void> {
  const machine = await elfMachine(file);
  if (machine !== ELF_MACHINE[arch]) {
    throw new JackinError(
      'E_RUNTIME_ARCH',
      `${what} of the ${arch} runtime is ${machine === null ? 'not an ELF file' : `built for ELF machine ${machine}`}, not ${arch} (${ELF_MACHINE[arch]}): it is not used`,
    );
  }
}

/** Checks the runtime at `root` against its manifest: every file there with its size and sha256, the ELF machines. */
export async function verifyRuntime(root: string): Promise<RuntimeManifest> {
  const manifest = JSON.parse(await readFile(join(root, MANIFEST), 'utf8')) as RuntimeManifest;
  const actual = await hashTree(root);
  const want = Object.keys(manifest.files).sort();
  const have = Object.keys(actual).sort();
  const extra = have.filter((f) => !(f in manifest.files));
  const bad = want.filter((f) => actual[f]?.sha256 !== manifest.files[f]!.sha256 || actual[f]?.size !== manifest.files[f]!.size);
  if (extra.length > 0 || bad.length > 0) {
    throw new JackinError(
      'E_RUNTIME_CHECK',
      `the runtime at ${root} does not match its manifest (${[...bad.map((f) => `${f} differs`), ...extra.map((f) => `${f} is not listed`)].slice(0, 5).join(', ')}): remove it with \`jackin runtime rm --arch ${manifest.arch}\` and fetch it again`,
    );
  }
  await checkMachine(join(root, 'node'), 'node', manifest.arch);
  await checkMachine(join(root, 'pkg', 'node_modules', ...manifest.pty.name.split('/'), 'pty.node'), 'pty.node', manifest.arch);
  return manifest;
}

/** An assembly or removal directory older than this was left by a process that died: it is removed. */
const LEFTOVER_AGE_MS = 60 * 60 * 1000;

/** Removes what assemblers and removals that died left in `dir` (`.tmp-*`, `.rm-*`), once it is old enough not to be running. */
async function sweepLeftovers(dir: string): Promise<void> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return;
  }
  for (const name of names) {
    if (!name.startsWith('.tmp-') && !name.startsWith('.rm-')) continue;
    try {
      if (Date.now() - (await stat(join(dir, name))).mtimeMs > LEFTOVER_AGE_MS) await rm(join(dir, name), { recursive: true, force: true });
    } catch {
      // gone already, or not ours to remove
    }
  }
}

/** A JackinError as it is; any other (a system error writing the cache) as E_RUNTIME_CACHE naming the directory. */
function cacheError(e: unknown, arch: RuntimeArch, dir: string): JackinError {
  if (e instanceof JackinError) return e;
  return new JackinError(
    'E_RUNTIME_CACHE',
    `the ${arch} runtime could not be written under ${dir}: ${e instanceof Error ? e.message : String(e)}; free space there, or set JACKIN_CACHE_DIR to a writable directory`,
    { cause: e },
  );
}

/**
 * The runtime for `arch`: from the cache when there, else assembled from the registry (or `from`) and
 * published. Nothing is ever left under the final name unless it is whole and checked.
 */
export async function assembleRuntime(arch: RuntimeArch, options: AssembleOptions = {}): Promise<Runtime> {
  const pins = options.pins ?? PINNED;
  const say = options.say ?? ((): void => {});
  const env = options.env ?? process.env;
  const plan = packagePlan(options.packageRoot ?? PACKAGE_ROOT, pins, arch);
  const dir = runtimesDir(env);
  const name = runtimeName(arch, pins, plan);
  const final = join(dir, name);
  const { node: nodePin, pty: ptyPin } = pins[arch];
  const existing = await publishedRuntime(arch, final, ptyPin);
  if (existing !== null) return existing;

  const source = { registry: registryUrl(env), dir: join(dir, 'tarballs'), say, progress: options.progress };
  let nodeTarball: string | undefined;
  let ptyTarball: string | undefined;
  try {
    [nodeTarball, ptyTarball] =
      options.from !== undefined ? await tarballsFrom(arch, [nodePin, ptyPin], options.from, source) : await verifiedTarballs(arch, [nodePin, ptyPin], source);
  } catch (e) {
    throw cacheError(e, arch, dir);
  }

  await sweepLeftovers(dir);
  say(`assembling the ${arch} runtime in ${final}`);
  const tmp = join(dir, `.tmp-${name}-${process.pid}-${randomBytes(4).toString('hex')}`);
  try {
    await mkdir(tmp, { recursive: true });
    const nodeFiles = await extractTarball(nodeTarball!, { label: spec(nodePin), dest: tmp, select: (p) => (p === 'bin/node' ? 'node' : null) });
    if (!nodeFiles.includes('node')) throw new JackinError('E_RUNTIME_TARBALL', `${spec(nodePin)}: the tarball holds no package/bin/node`);
    const pkg = join(tmp, 'pkg');
    for (const f of plan.files) {
      const to = join(pkg, ...f.rel.split('/'));
      await mkdir(dirname(to), { recursive: true });
      await copyFile(f.abs, to);
    }
    for (const p of plan.tree) {
      for (const f of filesUnder(p.source, p.source, ['node_modules'])) {
        const to = join(pkg, ...p.target.split('/'), ...f.rel.split('/'));
        await mkdir(dirname(to), { recursive: true });
        await copyFile(f.abs, to);
      }
    }
    const ptyDir = join('pkg', 'node_modules', ...ptyPin.name.split('/'));
    const ptyFiles = await extractTarball(ptyTarball!, { label: spec(ptyPin), dest: join(tmp, ptyDir), select: (p) => p });
    if (!ptyFiles.includes('pty.node')) throw new JackinError('E_RUNTIME_TARBALL', `${spec(ptyPin)}: the tarball holds no package/pty.node`);
    await checkMachine(join(tmp, 'node'), `node (${spec(nodePin)})`, arch);
    await checkMachine(join(tmp, ptyDir, 'pty.node'), `pty.node (${spec(ptyPin)})`, arch);

    let codeCache = false;
    if (options.codeCache ?? hostRunsNode(arch)) {
      say("making the capsule's code cache with the runtime's node");
      codeCache = await writeCapsuleCodeCache(tmp, say);
    }
    const manifest: RuntimeManifest = {
      format: MANIFEST_FORMAT,
      name,
      arch,
      jackin: plan.version,
      packageHash: plan.hash,
      node: nodePin,
      pty: ptyPin,
      codeCache,
      files: await hashTree(tmp),
    };
    await writeFile(join(tmp, MANIFEST), `${JSON.stringify(manifest, null, 2)}\n`);
    await verifyRuntime(tmp);
    try {
      await rename(tmp, final);
    } catch (e) {
      // Another assembler published first (a directory that is not empty cannot be renamed over): use its.
      if (errnoOf(e) !== 'ENOTEMPTY' && errnoOf(e) !== 'EEXIST' && errnoOf(e) !== 'EPERM') throw e;
      const winner = await publishedRuntime(arch, final, ptyPin);
      if (winner === null) throw e;
      return winner;
    }
    say(`the ${arch} runtime is ready: ${final}`);
    return runtimeAt(arch, final, ptyPin, codeCache);
  } catch (e) {
    throw cacheError(e, arch, dir);
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
}

/** A one-line download progress on a terminal's stderr, cleared before the next line is said. */
export class TerminalProgress {
  readonly #out: Pick<NodeJS.WriteStream, 'write'>;
  #shown = false;

  constructor(out: Pick<NodeJS.WriteStream, 'write'>) {
    this.#out = out;
  }

  readonly progress: Progress = (label, received, total) => {
    const mb = (n: number): string => (n / 1048576).toFixed(1);
    this.#out.write(`\r\x1b[K  ${label}: ${mb(received)}${total === null ? '' : `/${mb(total)}`} MB`);
    this.#shown = true;
  };

  /** Wraps `say` so its line starts on a clean row. */
  wrap(say: (line: string) => void): (line: string) => void {
    return (line) => {
      if (this.#shown) this.#out.write('\r\x1b[K');
      this.#shown = false;
      say(line);
    };
  }

  end(): void {
    if (this.#shown) this.#out.write('\r\x1b[K');
    this.#shown = false;
  }
}

/**
 * The runtime for `arch`: from the cache when there, else assembled (network: the npm registry) and
 * cached. `say` gets one line per step ("jackin: ..."-less text; the caller prefixes), progress on a TTY.
 */
export async function ensureRuntime(arch: RuntimeArch, opts: { say?: (line: string) => void } = {}): Promise<Runtime> {
  const say = opts.say ?? ((): void => {});
  if (process.stderr.isTTY !== true) return assembleRuntime(arch, { say });
  const bar = new TerminalProgress(process.stderr);
  try {
    return await assembleRuntime(arch, { say: bar.wrap(say), progress: bar.progress });
  } finally {
    bar.end();
  }
}

/** A runtime in the cache, as `jackin runtime ls` shows it. */
export interface RuntimeEntry {
  name: string;
  arch: RuntimeArch;
  nodeVersion: string;
  jackinVersion: string;
  path: string;
  /** Bytes of every file the manifest lists. */
  size: number;
  codeCache: boolean;
  /** Whether it was assembled from this jackin package (the one `--capsule runtime` uses). */
  current: boolean;
}

/** Every runtime in the cache (manifest.json present), sorted by name. */
export async function listRuntimes(options: AssembleOptions = {}): Promise<RuntimeEntry[]> {
  const dir = runtimesDir(options.env);
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return [];
  }
  const pins = options.pins ?? PINNED;
  const currentNames = new Set<string>();
  for (const arch of ['x64', 'arm64'] as const) {
    try {
      currentNames.add(runtimeName(arch, pins, packagePlan(options.packageRoot ?? PACKAGE_ROOT, pins, arch)));
    } catch {
      // an incomplete package: nothing is current
    }
  }
  const out: RuntimeEntry[] = [];
  for (const name of names.sort()) {
    if (name.startsWith('.') || name === 'tarballs') continue;
    let m: RuntimeManifest;
    try {
      m = JSON.parse(await readFile(join(dir, name, MANIFEST), 'utf8')) as RuntimeManifest;
    } catch {
      continue;
    }
    out.push({
      name,
      arch: m.arch,
      nodeVersion: m.node.version,
      jackinVersion: m.jackin,
      path: join(dir, name),
      size: Object.values(m.files).reduce((n, f) => n + f.size, 0),
      codeCache: m.codeCache === true,
      current: currentNames.has(name),
    });
  }
  return out;
}

/**
 * Removes the cached runtimes of `arch` (every one when undefined), with their tarballs and any assembly
 * left unfinished; each is renamed away first, so no half-removed runtime stays under its name. Returns
 * the paths removed.
 */
export async function removeRuntimes(arch: RuntimeArch | undefined, options: AssembleOptions = {}): Promise<string[]> {
  const dir = runtimesDir(options.env);
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return [];
  }
  const removed: string[] = [];
  const archs: readonly RuntimeArch[] = arch === undefined ? ['x64', 'arm64'] : [arch];
  for (const name of names) {
    if (name === 'tarballs' || !archs.some((a) => name.startsWith(`${a}-`) || name.startsWith(`.tmp-${a}-`))) continue;
    const gone = join(dir, `.rm-${name}-${process.pid}-${randomBytes(4).toString('hex')}`);
    try {
      await rename(join(dir, name), gone);
    } catch {
      continue;
    }
    await rm(gone, { recursive: true, force: true });
    removed.push(join(dir, name));
  }
  const pins = options.pins ?? PINNED;
  const tarballs = join(dir, 'tarballs');
  let files: string[] = [];
  try {
    files = await readdir(tarballs);
  } catch {
    files = [];
  }
  const prefixes = archs.flatMap((a) => [pins[a].node, pins[a].pty].map((p) => p.name.replace(/^@/u, '').replace('/', '-')));
  for (const f of files) {
    if (!prefixes.some((p) => f.startsWith(`${p}-`))) continue;
    await rm(join(tarballs, f), { force: true });
    removed.push(join(tarballs, f));
  }
  return removed;
}
