/**
 * A capsule on another machine reached over SSH (`--ssh`), with nothing of jackin installed there first:
 * the host's own Node and the package files a capsule needs (the ones `jackin run --image --capsule host`
 * lends a container) are copied over the session's SSH connection into a cache on the remote,
 * `${XDG_CACHE_HOME:-~/.cache}/jackin/capsule/<hash>/` (hash: SHA-256 of the manifest that lists every
 * file's SHA-256), checked there with sha256sum, published by a rename so that a broken copy never counts,
 * and reused while it stays valid. That is for a remote of the host's own platform and architecture (Linux);
 * any other Linux remote (from a Mac, or of another architecture), or any remote with JACKIN_CAPSULE=runtime,
 * gets the capsule runtime of its architecture (src/host/runtime/) the same way.
 *
 * The capsule is started detached on the remote (setsid, output to its capsule.log), in its run directory
 * `${JACKIN_HOME:-~/.jackin}/sockets/<name>/` there, with the `serve` arguments a local `jackin run` uses,
 * so it outlives the SSH connection; jackin reaches it through an exec relay, the copied
 * `jackin-capsule attach-proxy` over ssh, as `jackin attach --exec` would.
 */
import { createReadStream, readdirSync, readFileSync, realpathSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type TarStream from 'tar-stream';
import type { Header } from 'tar-stream';
import { JackinError } from '../../errors.ts';
import { nodeCrypto } from '../../lazy-builtins.ts';
import { inertText } from '../../ui/inert-text.ts';
import { CAPSULE_NODE_FLAGS } from './container-run-argv.ts';
import { ensureRuntime, runtimeArch, type RuntimeArch } from '../runtime/runtime.ts';
import { capsulePackageFiles, productionTree } from '../runtime/package-tree.ts';
import type { InstanceInfo } from './instances.ts';
import { parseSshTarget, remoteScript, runSsh, sshArgv, sshCommand, sshControlDir, type SshResult, type SshTarget } from './ssh.ts';

/** One file of the runtime: its name in the archive (and the cache) and the host file it comes from. */
interface RuntimeFile {
  readonly name: string;
  readonly path: string;
  readonly mode: number;
  readonly size: number;
  /** What says the file is unchanged since it was last hashed: device, inode, size, mtime, ctime. */
  readonly stamp: string;
}

function addTree(files: RuntimeFile[], name: string, path: string, skip: (name: string) => boolean = () => false): void {
  const st = statSync(path);
  if (st.isDirectory()) {
    for (const entry of readdirSync(path).sort()) if (!skip(entry)) addTree(files, `${name}/${entry}`, join(path, entry));
    return;
  }
  if (!st.isFile()) return;
  // sha256sum's manifest escapes a backslash or a newline in a name; the package has none, and refuses one.
  if (/[\\\n\r]/.test(name)) throw new JackinError('E_INTERNAL', `cannot copy ${JSON.stringify(name)}: a backslash or newline in a file name`);
  files.push({ name, path, mode: st.mode & 0o111 ? 0o755 : 0o644, size: st.size, stamp: `${st.dev}:${st.ino}:${st.size}:${st.mtimeMs}:${st.ctimeMs}` });
}

/** Every file of the runtime: `node` (the host's Node) and `package/...`. */
export function runtimeFiles(packageRoot: string, nodePath: string): RuntimeFile[] {
  const root = realpathSync(packageRoot);
  const files: RuntimeFile[] = [];
  addTree(files, 'node', realpathSync(nodePath));
  // The host's own Node runs them there, so the bundles' code caches go too.
  for (const f of capsulePackageFiles(root, { codeCaches: true })) addTree(files, `package/${f.rel}`, f.abs);
  // The production tree as the runtime assembler lays it out (src/host/runtime/package-tree.ts), with the
  // PTY binary package of this platform: a runtime assembled for a container already holds only its own.
  for (const p of productionTree(root, { keepPty: `@lydell/node-pty-${process.platform}-${process.arch}` })) {
    addTree(files, `package/${p.target}`, p.source, (entry) => entry === 'node_modules');
  }
  return files;
}

async function fileSha256(path: string): Promise<string> {
  const hash = nodeCrypto().createHash('sha256');
  await pipeline(createReadStream(path), hash);
  return hash.digest('hex');
}

/** The runtime's manifest (sha256sum's format, so `sha256sum -c` checks it on the remote) and its hash, the cache key. */
export interface RuntimeManifest {
  readonly files: readonly RuntimeFile[];
  readonly text: string;
  readonly hash: string;
}

/**
 * The manifest of `files`. Hashing the runtime (about 110 MB, most of it Node) took about 0.45 s of every
 * --ssh command, so the manifest is kept in `cacheFile` (when given) with the files' stamps, and reused while
 * every file still has the same device, inode, size, mtime and ctime.
 */
export async function runtimeManifest(files: readonly RuntimeFile[], cacheFile?: string): Promise<RuntimeManifest> {
  const key = nodeCrypto()
    .createHash('sha256')
    .update(JSON.stringify(files.map((f) => [f.name, f.path, f.mode, f.stamp])))
    .digest('hex');
  let text: string | null = null;
  if (cacheFile !== undefined) {
    try {
      const kept = JSON.parse(readFileSync(cacheFile, 'utf8')) as { key?: unknown; text?: unknown };
      if (kept.key === key && typeof kept.text === 'string') text = kept.text;
    } catch {
      // None yet, or unreadable: hashed again below.
    }
  }
  if (text === null) {
    text = '';
    for (const f of files) text += `${await fileSha256(f.path)}  ${f.name}\n`;
    if (cacheFile !== undefined) {
      try {
        // Written whole under a temporary name and renamed: a reader never sees half of it.
        const tmp = `${cacheFile}.${process.pid}.tmp`;
        writeFileSync(tmp, JSON.stringify({ key, text }), { mode: 0o600 });
        renameSync(tmp, cacheFile);
      } catch {
        // Only a cache: the next command hashes again.
      }
    }
  }
  return { files, text, hash: nodeCrypto().createHash('sha256').update(text).digest('hex') };
}

/** Writes the runtime as a tar stream (the manifest as `.manifest`) to `out`. */
async function packRuntime(manifest: RuntimeManifest, out: NodeJS.WritableStream): Promise<void> {
  const tar = createRequire(import.meta.url)('tar-stream') as typeof TarStream;
  const pack = tar.pack();
  const piped = pipeline(pack, out as Writable);
  const entry = (header: Partial<Header> & Pick<Header, 'name'>, source?: string, content?: string): Promise<void> =>
    new Promise((resolve, reject) => {
      const done = (err?: Error | null): void => (err ? reject(err) : resolve());
      if (content !== undefined) {
        pack.entry(header, content, done);
        return;
      }
      const sink = pack.entry(header, done);
      // A remote that stops reading (ssh gone, a full disk there) breaks the pipe: a rejection, never an unhandled error.
      sink.on('error', reject);
      createReadStream(source!).on('error', reject).pipe(sink);
    });
  // The pipe's own failure (EPIPE) is the one reported: pack's entries fail after it with a vaguer error.
  piped.catch(() => undefined);
  try {
    await entry({ name: '.manifest', mode: 0o644, type: 'file' }, undefined, manifest.text);
    for (const f of manifest.files) await entry({ name: f.name, mode: f.mode, size: f.size, type: 'file' }, f.path);
    pack.finalize();
  } catch (e) {
    pack.destroy(e instanceof Error ? e : new Error(String(e)));
  }
  await piped;
}

/** The remote's cache of runtimes, in sh. */
const CACHE = '"${XDG_CACHE_HOME:-$HOME/.cache}/jackin/capsule"';

/**
 * The first command of a session (it opens the shared connection): who the remote is, and whether the
 * runtime "$1" is in its cache. Prints `jackin-remote`, `uname -sm`, then `present DIR` or `absent DIR`. A
 * directory there was checked file by file against its manifest before it was published (INSTALL, below), so
 * here only the manifest's own hash is: re-hashing about 110 MB took 0.3 to 0.5 s of every --ssh command.
 */
const PROBE = `c=${CACHE}; d="$c/$1"
printf 'jackin-remote\\n'; uname -sm
if [ -f "$d/.manifest" ] && [ "$(sha256sum < "$d/.manifest" | cut -d' ' -f1)" = "$1" ]; then
  printf 'present %s\\n' "$d"; else printf 'absent %s\\n' "$d"; fi`;

/**
 * Unpacks a runtime from stdin into a new directory, checks it, and publishes it as "$1" by a rename. The
 * directory goes with the script however it ends: a signal (the link dropped) exits through the EXIT trap.
 * What a SIGKILLed copy left goes at the next copy, once untouched for an hour (no copy under way is).
 */
const INSTALL = `set -e
c=${CACHE}; mkdir -p "$c"
find "$c" -maxdepth 1 -name '.incoming.*' -mmin +60 -exec rm -rf {} + 2>/dev/null || true
tmp=$(mktemp -d "$c/.incoming.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' HUP INT TERM PIPE
tar -xf - -C "$tmp" --no-same-owner
cd "$tmp"
sha256sum -c --status .manifest || { echo "the copied files do not match their manifest" >&2; exit 3; }
[ "$(sha256sum < .manifest | cut -d' ' -f1)" = "$1" ] || { echo "the copied manifest does not match its hash" >&2; exit 3; }
cd "$c"; rm -rf "$1"; mv -T "$tmp" "$1"; trap - EXIT
printf 'installed\\n'`;

/**
 * sh that gives the program (and the capsule) a \`jackin-capsule\` on PATH, the copied one ("$rt", run with the
 * capsule's flags), as a script in "$run/bin": serve --browser's shims run \`jackin-capsule open-url\`, and the
 * program's own \`jackin-capsule open-url\`, \`offer\` and \`copy\` reach its capsule as in a container.
 */
export function programBin(): string {
  return `q=$(printf '%s' "$rt" | sed "s/'/'\\\\\\\\''/g")
mkdir -p "$run/bin"
printf '#!/bin/sh\\nexec '"'%s/node'"' ${CAPSULE_NODE_FLAGS.join(' ')} '"'%s/package/bin/jackin-capsule.js'"' "$@"\\n' "$q" "$q" > "$run/bin/jackin-capsule"
chmod 755 "$run/bin/jackin-capsule"
export PATH="$run/bin:\${PATH:-/usr/local/bin:/usr/bin:/bin}"`;
}

/**
 * Starts a capsule detached: "$1" the runtime, "$2" the name, "$3" 1 to take the first free of name, name-2...,
 * "$4" the workspace (empty: the remote home), "$5" TERM, then the serve arguments after the run directory.
 * Prints `started NAME`, or `exists NAME`, `died` and the log's tail, `timeout`, `no-node`.
 */
function startScript(): string {
  const flags = CAPSULE_NODE_FLAGS.join(' ');
  return `rt=$1; name=$2; auto=$3; ws=$4; term=$5; shift 5
node="$rt/node"
"$node" -e 0 >/dev/null 2>&1 || { printf 'no-node\\n'; exit 0; }
home="\${JACKIN_HOME:-$HOME/.jackin}"
answers() { [ -S "$1" ] && "$node" -e 'const s=require("node:net").connect(process.argv[1]);s.on("connect",()=>process.exit(0));s.on("error",()=>process.exit(1))' "$1"; }
base=$name; i=1
while answers "$home/sockets/$name/jackin.sock"; do
  [ "$auto" = 1 ] || { printf 'exists %s\\n' "$name"; exit 0; }
  i=$((i+1)); name="$base-$i"
done
run="$home/sockets/$name"
mkdir -p "$home/sockets"; mkdir -p "$run"; chmod 700 "$run"
rm -f "$run/jackin.sock"
${programBin()}
[ -n "$ws" ] || ws=$HOME
cd "$ws" || { printf 'no-workspace\\n'; exit 0; }
[ -z "$term" ] || export TERM="$term"
setsid "$node" ${flags} "$rt/package/bin/jackin-capsule.js" serve --run-dir "$run" --workspace "$ws" --name "$name" "$@" </dev/null >>"$run/capsule.log" 2>&1 &
pid=$!; n=0
while [ ! -S "$run/jackin.sock" ]; do
  kill -0 "$pid" 2>/dev/null || { printf 'died\\n'; tail -n 5 "$run/capsule.log"; exit 0; }
  n=$((n+1)); [ "$n" -le 200 ] || { printf 'timeout\\n'; exit 0; }
  sleep 0.05
done
printf 'started %s\\n' "$name"`;
}

/** A manifest hash no runtime has: the first probe of a remote that gets the capsule runtime asks only who it is. */
const NO_RUNTIME = '0'.repeat(64);

/** The capsule runtime's architecture for what `uname -sm` says on the remote, or null for none (not Linux, another machine). */
export function remoteRuntimeArch(uname: string): RuntimeArch | null {
  const m = /^Linux (\S+)$/.exec(uname.trim());
  return m === null ? null : runtimeArch(m[1]!);
}

/** What `uname -sm` says on a machine that runs this host's Node and package, or null off Linux. */
export function expectedUname(platform: NodeJS.Platform = process.platform, arch: string = process.arch): string | null {
  if (platform !== 'linux') return null;
  const machine: Record<string, string> = { x64: 'x86_64', arm64: 'aarch64', arm: 'armv7l', ppc64: 'ppc64le', s390x: 's390x', riscv64: 'riscv64' };
  return machine[arch] === undefined ? null : `Linux ${machine[arch]}`;
}

/** The runtime ready on the remote: its directory there. */
interface Prepared {
  readonly runtime: string;
  /** True when this call copied it (false: the cache had it). */
  readonly copied: boolean;
}

/** Text from the remote, for one line of a message: it is that machine's to choose, so shown inert. */
function said(text: string): string {
  return inertText(text.trim().split('\n').slice(-3).join(' | '), 400);
}

/** One remote machine for one command: its ssh command line, the shared connection, the runtime there. */
export class RemoteMachine {
  readonly target: string;
  readonly #ssh: SshTarget;
  readonly #base: string[];
  readonly #home: string;
  /** Where the runtime's manifest is kept between commands (runtimeManifest). */
  readonly #manifestCache: string;
  readonly #packageRoot: string;
  readonly #nodePath: string;
  readonly #status: (line: string) => void;
  /** `runtime`: copy the capsule runtime (src/host/runtime/) even where the host's own Node would run there. */
  readonly #capsule: 'host' | 'runtime' | undefined;
  #prepared: Prepared | null = null;

  constructor(
    target: string,
    {
      home,
      env,
      packageRoot,
      nodePath,
      status,
      capsule,
    }: { home: string; env: NodeJS.ProcessEnv; packageRoot: string; nodePath: string; status: (line: string) => void; capsule?: 'host' | 'runtime' },
  ) {
    this.target = target;
    this.#ssh = parseSshTarget(target);
    this.#base = sshCommand(env);
    this.#home = home;
    sshControlDir(home); // A directory that is not ours is an error before anything runs.
    this.#manifestCache = join(home, 'runtime-manifest.json');
    this.#packageRoot = packageRoot;
    this.#nodePath = nodePath;
    this.#status = status;
    this.#capsule = capsule;
  }

  /** The argv that runs `script` with `args` on the remote over the shared connection. */
  argv(script: string, args: readonly string[]): string[] {
    // The control directory is made again for each command: a /tmp cleaner may have removed it in between.
    return sshArgv(this.#base, this.#ssh, sshControlDir(this.#home), remoteScript(script, args));
  }

  #failed(what: string, r: SshResult): JackinError {
    const why = r.stderr.trim().length > 0 ? `: ${said(r.stderr)}` : '';
    return new JackinError('E_SSH_FAILED', `${what} on ${inertText(this.target, 200)} failed (ssh exit status ${r.status ?? 'signal'})${why}`);
  }

  /**
   * Opens the connection (the first ssh, on the operator's terminal so a host key or password question
   * reaches them), checks the platform, and makes sure the runtime is in the remote's cache. Once per command.
   */
  async prepare(): Promise<Prepared> {
    if (this.#prepared !== null) return this.#prepared;
    // The host's own Node and package where the remote is this host's platform, else the capsule runtime of
    // the remote's architecture (assembled in, or taken from, jackin's cache here).
    const own = this.#capsule === 'runtime' ? null : expectedUname();
    let what = "this host's Node and jackin";
    let manifest = own !== null ? await runtimeManifest(runtimeFiles(this.#packageRoot, this.#nodePath), this.#manifestCache) : null;
    let probe = await runSsh(this.argv(PROBE, [manifest?.hash ?? NO_RUNTIME]), { interactive: process.stdin.isTTY === true });
    let lines = probe.stdout.toString('utf8').split('\n');
    if (probe.status !== 0 || lines[0] !== 'jackin-remote') throw this.#failed('connecting', probe);
    const uname = (lines[1] ?? '').trim();
    if (manifest === null || uname !== own) {
      const arch = remoteRuntimeArch(uname);
      if (arch === null) {
        throw new JackinError(
          'E_REMOTE_PLATFORM',
          `${inertText(this.target, 200)} is ${inertText(uname, 100) || 'an unknown platform'}: jackin's capsule runs on Linux x86_64 and aarch64 only`,
        );
      }
      const runtime = await ensureRuntime(arch, { say: (line) => this.#status(`jackin: ${line}`) });
      what = `the linux-${arch} capsule runtime`;
      manifest = await runtimeManifest(
        runtimeFiles(runtime.packageRoot, runtime.node),
        join(dirname(this.#manifestCache), `runtime-manifest-linux-${arch}.json`),
      );
      probe = await runSsh(this.argv(PROBE, [manifest.hash]), {});
      lines = probe.stdout.toString('utf8').split('\n');
      if (probe.status !== 0 || lines[0] !== 'jackin-remote') throw this.#failed('reading its cache', probe);
    }
    const [state, ...dirParts] = (lines[2] ?? '').split(' ');
    const runtime = dirParts.join(' ');
    if ((state !== 'present' && state !== 'absent') || !runtime.startsWith('/')) throw this.#failed('reading its cache', probe);
    if (state === 'present') return (this.#prepared = { runtime, copied: false });
    const bytes = manifest.files.reduce((n, f) => n + f.size, 0);
    this.#status(
      `jackin: copying the capsule runtime, ${what} (${Math.ceil(bytes / (1024 * 1024))} MiB), to ${inertText(this.target, 200)}:${inertText(runtime, 400)}`,
    );
    const install = await runSsh(this.argv(INSTALL, [manifest.hash]), { input: (stdin) => packRuntime(manifest, stdin) });
    if (install.status !== 0 || install.stdout.toString('utf8').trim() !== 'installed') throw this.#failed('copying the capsule runtime', install);
    return (this.#prepared = { runtime, copied: true });
  }

  /**
   * Starts a capsule detached on the remote: the name given (or the first free of `name`, `name-2`... when
   * `pickFree`), in `workspace` (empty: the remote home); resolves with the name it runs as.
   */
  async start(name: string, pickFree: boolean, workspace: string, serveArgs: readonly string[]): Promise<string> {
    const { runtime } = await this.prepare();
    const r = await runSsh(this.argv(startScript(), [runtime, name, pickFree ? '1' : '0', workspace, process.env['TERM'] ?? '', ...serveArgs]));
    const out = r.stdout.toString('utf8');
    const [first = '', ...rest] = out.split('\n');
    const where = inertText(this.target, 200);
    if (r.status !== 0) throw this.#failed('starting the capsule', r);
    if (first.startsWith('started ')) return first.slice('started '.length);
    if (first.startsWith('exists ')) {
      throw new JackinError(
        'E_INSTANCE_EXISTS',
        `instance ${inertText(first.slice('exists '.length), 128)} is already running on ${where}: attach with \`jackin attach --ssh ${where} ${inertText(name, 128)}\` or pick another --name`,
      );
    }
    if (first === 'no-node') {
      throw new JackinError('E_REMOTE_PLATFORM', `the copied Node does not run on ${where} (a musl or too old C library there?): it needs glibc 2.28 or later`);
    }
    if (first === 'no-workspace') throw new JackinError('E_CAPSULE_START', `cannot enter the workspace ${inertText(workspace, 400)} on ${where}`);
    const tail = said(rest.join('\n'));
    throw new JackinError(
      'E_CAPSULE_START',
      `the capsule on ${where} ${first === 'timeout' ? 'did not open its socket in time' : 'exited before its socket was ready'}${tail ? `: ${tail}` : ''} (log: ~/.jackin/sockets/${inertText(name, 128)}/capsule.log there)`,
    );
  }

  /** The relay to instance `name`'s socket on the remote: the copied `jackin-capsule attach-proxy`. */
  async relayArgv(name: string): Promise<string[]> {
    const { runtime } = await this.prepare();
    return this.argv('exec "$1/node" "$1/package/bin/jackin-capsule.js" attach-proxy --socket "${JACKIN_HOME:-$HOME/.jackin}/sockets/$2/jackin.sock"', [
      runtime,
      name,
    ]);
  }

  /** Runs the copied `jackin` with `args` on the remote; its output is the remote's, to be re-checked by the caller. */
  async jackin(args: readonly string[]): Promise<SshResult> {
    return runSsh(await this.jackinArgv(args));
  }

  /** The argv that runs the copied `jackin` with `args` on the remote (for a caller that streams its output). */
  async jackinArgv(args: readonly string[]): Promise<string[]> {
    const { runtime } = await this.prepare();
    return this.argv('rt=$1; shift; exec "$rt/node" "$rt/package/bin/jackin.js" "$@"', [runtime, ...args]);
  }
}

const STATES: readonly InstanceInfo['state'][] = ['live', 'stale', 'inaccessible'];

function nullOr<T>(v: unknown, is: (v: unknown) => v is T): v is T | null {
  return v === null || is(v);
}
const isString = (v: unknown): v is string => typeof v === 'string';
const isInt = (v: unknown): v is number => Number.isSafeInteger(v);
const isBool = (v: unknown): v is boolean => typeof v === 'boolean';
const isArgv = (v: unknown): v is string[] => Array.isArray(v) && v.every(isString);

/**
 * The remote's `jackin ls --json`, re-checked field by field (that machine's jackin and its capsules
 * choose every byte of it): the instances, each with only the fields `jackin ls` shows; null when the
 * answer is not such a list.
 */
export function remoteInstanceList(text: string): InstanceInfo[] | null {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  if (!Array.isArray(value)) return null;
  const list: InstanceInfo[] = [];
  for (const item of value as unknown[]) {
    if (typeof item !== 'object' || item === null) return null;
    const i = item as Record<string, unknown>;
    const state = STATES.find((s) => s === i['state']);
    if (
      !isString(i['name']) ||
      state === undefined ||
      !isString(i['socket']) ||
      !isString(i['runDir']) ||
      !nullOr(i['program'], isArgv) ||
      !nullOr(i['pid'], isInt) ||
      !nullOr(i['containerPid'], isInt) ||
      !nullOr(i['workspace'], isString) ||
      !nullOr(i['startedAt'], isString) ||
      !nullOr(i['attached'], isBool) ||
      !nullOr(i['owner'], isInt)
    ) {
      return null;
    }
    list.push({
      name: i['name'],
      state,
      socket: i['socket'],
      runDir: i['runDir'],
      program: i['program'],
      pid: i['pid'],
      containerPid: i['containerPid'],
      workspace: i['workspace'],
      startedAt: i['startedAt'],
      attached: i['attached'],
      owner: i['owner'],
    });
  }
  return list;
}
