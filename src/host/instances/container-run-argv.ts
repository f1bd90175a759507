/**
 * The engine command that starts an agent's container for `jackin run --image`, built by one pure function
 * (so the exact argv is tested, and `--dry-run` prints it for compose files and scripts). It does what the
 * guide otherwise asks of the operator: the run directory bind-mounted at /jackin/run, the workspace, an
 * init as PID 1 (`--init`, so the agent's orphans are reaped), the operator's uid/gid, TERM, and a capsule:
 * the host's own Node and package mounted read-only (no jackin in the image), a Linux runtime from jackin's
 * cache mounted the same way where the host's Node cannot run in the container (a macOS or Windows host, an
 * image of another architecture), or the image's own `jackin-capsule`. The container's browser is
 * jackin's (BROWSER and the xdg-open family make link offers), so are its clipboard tools (copy offers), and what the operator adds passes through:
 * variables by name (`-e NAME`: the engine reads the value from its own environment, the operator's) or in
 * jackin's private env file (`--env-file`, private-env-file.ts), never a value in an argv; mounts, a network,
 * and any other engine argument, placed before the image.
 */
import { JackinError } from '../../errors.ts';
import { termProgramIsMultiplexer } from '../../policy/operator-multiplexer.ts';
import type { ContainerEngine } from '../../transport/container-engine.ts';
import type { VolumeSpec } from './run-image-options.ts';
import { LOADER_NAME, type LentFile } from './host-libraries.ts';

/** Where things are inside the container. */
const CONTAINER_RUN_DIR = '/jackin/run';
const CONTAINER_WORKSPACE = '/workspace';
const CONTAINER_NODE = '/opt/jackin/node';
const CONTAINER_PACKAGE = '/opt/jackin/pkg';
/** The host's loader and libraries for its Node (host-libraries.ts), and the loader in it. */
const CONTAINER_LIB = '/opt/jackin/lib';
const CONTAINER_LOADER = `${CONTAINER_LIB}/${LOADER_NAME}`;
/** Holds the `jackin-capsule` shim (container-bin/ in the package), put first on the container's PATH. */
const CONTAINER_BIN = `${CONTAINER_PACKAGE}/container-bin`;
/**
 * The browser shims (container-bin/browser/ in the package: jackin-browser, xdg-open, sensible-browser,
 * www-browser), each `jackin-capsule open-url`: put on the container's PATH, and BROWSER names the first.
 */
const CONTAINER_BROWSER_BIN = `${CONTAINER_BIN}/browser`;
const CONTAINER_BROWSER = `${CONTAINER_BROWSER_BIN}/jackin-browser`;
/**
 * The clipboard shims (container-bin/clipboard/ in the package: xclip, xsel, wl-copy, wl-paste, pbcopy,
 * pbpaste), each `jackin-capsule clipboard`: a write is a copy offer, a read answers the image last pasted.
 * First on the container's PATH, before any real tool in the image (which would reach no display).
 */
const CONTAINER_CLIPBOARD_BIN = `${CONTAINER_BIN}/clipboard`;
/** The operator's terminal identity besides TERM, passed by name to the program when set (docs/guide.md). */
const TERMINAL_IDENTITY_ENV = ['COLORTERM', 'TERM_PROGRAM', 'TERM_PROGRAM_VERSION'] as const;
/**
 * The TERMINAL_IDENTITY_ENV variables of `env` to pass (set and not empty), except a TERM_PROGRAM (and its
 * version) that names the operator's multiplexer: the program's terminal is jackin's, not tmux.
 */
export function terminalIdentityEnv(env: Readonly<Record<string, string | undefined>>): Array<{ name: string; value: string }> {
  const mux = termProgramIsMultiplexer(env['TERM_PROGRAM']);
  return TERMINAL_IDENTITY_ENV.filter((n) => env[n] !== undefined && env[n] !== '' && !(mux && n !== 'COLORTERM')).map((n) => ({ name: n, value: env[n]! }));
}
/** Marks containers this command started, so a leftover is removed only when it is ours. */
export const CONTAINER_LABEL = 'io.github.jackin-bridge.instance';
/** The PATH of an image that declares none (Docker's and Podman's own default). */
export const DEFAULT_IMAGE_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';
/**
 * Node flags for a capsule jackin starts, locally (`jackin run`) or in a container (`jackin run --image`).
 * A 2 MiB young generation (V8's default grows to 16 MiB per semi-space) keeps the long-running capsule
 * small: measured, its peak RSS over repeated directory exports went from 122 to 102 MiB, with no change in
 * export or relay speed. Optimizing compiles run on the main thread (`--no-concurrent-recompilation`): done
 * on V8's worker threads, they left a malloc arena of their own, about 1.9 MiB of an idle capsule's 6 to 7
 * MiB of anonymous memory above a bare `node` (bench idle section), for compiles that happen a few times in
 * a capsule's life. docs/guide.md shows the same flags for a capsule started by an image's entrypoint.
 */
export const CAPSULE_NODE_FLAGS = ['--max-semi-space-size=2', '--no-concurrent-recompilation'];

export type CapsuleSource =
  /**
   * The host's Node binary and jackin package, mounted read-only; `imagePath` is the image's PATH;
   * `libraries`, the host's loader and the libraries they need (host-libraries.ts), each mounted under
   * /opt/jackin/lib, so any image runs them.
   */
  | { kind: 'host'; node: string; packageRoot: string; imagePath: string; libraries?: readonly LentFile[] }
  /**
   * A Linux runtime of the container's architecture from jackin's cache (src/host/runtime/), mounted as the
   * host's files are: where the host's own Node cannot run in the container (macOS, Windows, an image of
   * another architecture). `libraries` as for `host`, lent only by a Linux glibc host of the same
   * architecture; without them the runtime's Node runs on the image's glibc. `arch` and `root` (the
   * runtime's directory in the cache) are for messages.
   */
  | { kind: 'runtime'; node: string; packageRoot: string; imagePath: string; libraries?: readonly LentFile[]; arch: string; root: string }
  /** The image's own `jackin-capsule` on its PATH. */
  | { kind: 'image' };

export interface ContainerRunSpec {
  engine: ContainerEngine;
  name: string;
  image: string;
  runDir: string;
  workspace: string;
  program: readonly string[];
  /** `--user` value, or null to keep the image's user. */
  user: string | null;
  term: string;
  rows?: number;
  /** `serve --plain`: the program's bytes as they are, for a jackin without a terminal (never in --dry-run's command). */
  plain?: boolean;
  cols?: number;
  capsule: CapsuleSource;
  /** Variables passed by name (`-e NAME`): the engine takes each value from its own environment. */
  envNames?: readonly string[];
  /** jackin's private env file (`--env-file PATH`) and the names of the variables it holds. */
  envFile?: { path: string; names: readonly string[] };
  volumes?: readonly VolumeSpec[];
  /** `--network` value, or absent for the engine's default. */
  network?: string;
  /** Anything else for the engine, as given, just before the image. */
  engineArgs?: readonly string[];
}

/** `-v` takes `src:dst[:opts]`, so a host path with a colon (or a control character) cannot be mounted. */
function hostPath(what: string, path: string): string {
  if (/[:\0\n\r]/.test(path)) {
    throw new JackinError('E_USAGE', `${what} ${JSON.stringify(path)} contains ":" or a control character and cannot be bind-mounted: use another path`);
  }
  return path;
}

function notOption(what: string, value: string): string {
  if (value.length === 0 || value.startsWith('-') || /[\0\n\r]/.test(value)) {
    throw new JackinError('E_USAGE', `${what} ${JSON.stringify(value)} is empty, starts with "-" or contains a control character`);
  }
  return value;
}

/** The argv (engine first) that starts the container detached; the capsule inside opens the socket. */
export function containerRunArgv(s: ContainerRunSpec): string[] {
  const argv: string[] = [s.engine, 'run', '-d', '--init', '--name', notOption('name', s.name), '--label', `${CONTAINER_LABEL}=${s.name}`];
  argv.push('-v', `${hostPath('run directory', s.runDir)}:${CONTAINER_RUN_DIR}`);
  argv.push('-v', `${hostPath('workspace', s.workspace)}:${CONTAINER_WORKSPACE}`, '-w', CONTAINER_WORKSPACE);
  // A TERM the operator passes wins (the engines apply an env file before every -e, so TERM=… would).
  const given = [...(s.envNames ?? []), ...(s.envFile?.names ?? [])];
  if (!given.includes('TERM')) argv.push('-e', `TERM=${s.term}`);
  argv.push('-e', `JACKIN_RUN_DIR=${CONTAINER_RUN_DIR}`);
  if (s.user !== null) argv.push('--user', notOption('user', s.user));
  for (const name of given) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw new TypeError(`not a variable name: ${JSON.stringify(name)}`);
  }
  for (const name of s.envNames ?? []) argv.push('-e', name);
  if (s.envFile !== undefined) argv.push('--env-file', s.envFile.path);
  for (const v of s.volumes ?? [])
    argv.push('-v', `${hostPath('volume', v.host)}:${hostPath('container path', v.container)}${v.mode === null ? '' : `:${v.mode}`}`);
  if (s.network !== undefined) argv.push('--network', notOption('network', s.network));
  const serve = ['serve', '--name', s.name, '--run-dir', CONTAINER_RUN_DIR, '--workspace', CONTAINER_WORKSPACE];
  if (s.rows !== undefined && s.cols !== undefined) serve.push('--rows', String(s.rows), '--cols', String(s.cols));
  if (s.plain === true) serve.push('--plain');
  switch (s.capsule.kind) {
    case 'host':
    case 'runtime':
      argv.push('-v', `${hostPath('node binary', s.capsule.node)}:${CONTAINER_NODE}:ro`);
      argv.push('-v', `${hostPath('jackin package', s.capsule.packageRoot)}:${CONTAINER_PACKAGE}:ro`);
      for (const lib of s.capsule.libraries ?? []) {
        if (!/^[A-Za-z0-9._+-]+$/.test(lib.name)) throw new TypeError(`not a library name: ${JSON.stringify(lib.name)}`);
        argv.push('-v', `${hostPath('library', lib.path)}:${CONTAINER_LIB}/${lib.name}:ro`);
      }
      argv.push('-e', `PATH=${CONTAINER_BIN}:${CONTAINER_CLIPBOARD_BIN}:${CONTAINER_BROWSER_BIN}:${s.capsule.imagePath}`, '-e', `BROWSER=${CONTAINER_BROWSER}`);
      argv.push(...(s.engineArgs ?? []));
      // With the host's libraries, Node starts through their loader: nothing of the image's C library is used.
      argv.push(
        '--entrypoint',
        s.capsule.libraries !== undefined ? CONTAINER_LOADER : CONTAINER_NODE,
        notOption('image', s.image),
        ...(s.capsule.libraries !== undefined ? ['--library-path', CONTAINER_LIB, CONTAINER_NODE] : []),
        ...CAPSULE_NODE_FLAGS,
        `${CONTAINER_PACKAGE}/bin/jackin-capsule.js`,
        ...serve,
        '--',
        ...s.program,
      );
      return argv;
    case 'image':
      // The image's own package holds the same shims: its capsule puts them on the program's PATH.
      argv.push(...(s.engineArgs ?? []));
      argv.push('--entrypoint', 'jackin-capsule', notOption('image', s.image), ...serve, '--browser', '--clipboard', '--', ...s.program);
      return argv;
    default: {
      const never: never = s.capsule;
      throw new TypeError(`unexpected capsule source ${JSON.stringify(never)}`);
    }
  }
}

/** The PATH from an image's `Config.Env` (as `inspect --format '{{json .Config.Env}}'` prints it). */
export function imagePathFromEnv(json: string): string {
  try {
    const env = JSON.parse(json) as unknown;
    if (Array.isArray(env)) {
      for (const e of env) if (typeof e === 'string' && e.startsWith('PATH=') && e.length > 5) return e.slice(5);
    }
  } catch {
    // not JSON: fall through
  }
  return DEFAULT_IMAGE_PATH;
}

/**
 * Why a container whose capsule never opened its socket stopped, from its logs: a failed exec of the
 * entrypoint means the host's Node cannot run in the image (no glibc: musl/Alpine), or the image has no
 * `jackin-capsule`. Null when the logs say something else (shown as they are).
 */
export function explainStartFailure(logs: string, capsule: CapsuleSource, image: string): JackinError | null {
  const execFailed = /failed to exec|executable file .* not found|no such file or directory|exec format error|not found in \$PATH/i.test(logs);
  if (!execFailed) return null;
  // With the host's own loader and libraries lent, the image's C library plays no part: the logs say why.
  if (capsule.kind !== 'image' && capsule.libraries !== undefined) return null;
  if (capsule.kind === 'runtime') {
    if (/exec format error/i.test(logs)) {
      return new JackinError(
        'E_CAPSULE_START',
        `the capsule runtime's Node (linux-${capsule.arch}) could not start in image ${image}: this machine cannot run linux-${capsule.arch} binaries ` +
          "(no emulation registered with binfmt, e.g. qemu-user-static): use an image of this machine's architecture",
      );
    }
    return new JackinError(
      'E_IMAGE_NOT_GLIBC',
      `the capsule runtime's Node (linux-${capsule.arch}, ${capsule.root}) could not start in image ${image}: it needs the image's glibc and libstdc++, ` +
        `and this host lends no C library to an image (${process.platform}/${process.arch}; only a Linux glibc host of the image's architecture does). ` +
        'Use a glibc image (Debian, Ubuntu), or install jackin-bridge in the image (npm install -g jackin-bridge-<version>.tgz, with node-pty built for musl) and pass --capsule image',
    );
  }
  if (capsule.kind === 'host') {
    return new JackinError(
      'E_IMAGE_NOT_GLIBC',
      `the host's Node could not start in image ${image}: this host could not lend its C library (\`ldd\` did not list Node's libraries), and the image has no glibc (musl/Alpine?). ` +
        'Use a glibc image (Debian, Ubuntu), or install jackin-bridge in the image (npm install -g jackin-bridge-<version>.tgz, with node-pty built for musl) and pass --capsule image',
    );
  }
  return new JackinError(
    'E_IMAGE_NO_CAPSULE',
    `image ${image} has no jackin-capsule on its PATH, and this host cannot lend its own (${process.platform}): ` +
      'add it to the image (COPY jackin-bridge-<version>.tgz /tmp/ and RUN npm install -g /tmp/jackin-bridge-<version>.tgz; see docs/guide.md)',
  );
}
