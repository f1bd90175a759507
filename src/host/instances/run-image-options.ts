/**
 * The forms of `jackin run --image`'s pass-through options: `--env NAME[=VALUE]`, `--env-file FILE`,
 * `--volume HOST:CONTAINER[:ro|rw]`. Pure but for the file system, read to resolve a host path and to read an
 * env file. A variable's value is kept apart from its name: it reaches the engine by name from the operator's
 * own environment, or in a private file of jackin's (private-env-file.ts), never in an argv, a printed command
 * or an error message (errors name the variable or the line number, never the value). A host path written
 * inside the workspace, which the container writes, must not lead out of it through a symlink
 * (workspace-path.ts).
 */
import { constants, fstatSync, openSync, closeSync, readFileSync, readlinkSync } from 'node:fs';
import { isAbsolute, posix, resolve } from 'node:path';
import { JackinError } from '../../errors.ts';
import { inertText } from '../../ui/inert-text.ts';
import { resolveHostPath, type ResolvedHostPath } from './workspace-path.ts';

/** A variable for the container: its name, its value, and where it was given (for an error). */
export interface EnvPass {
  name: string;
  value: string;
  /** `--env`, or `--env-file FILE line N`. */
  from: string;
}

export interface VolumeSpec {
  /** Absolute, existing host path, its symlinks resolved (what the engine mounts). */
  host: string;
  /** Absolute container path. */
  container: string;
  mode: 'ro' | 'rw' | null;
}

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** Variables `jackin run --image` sets itself: the capsule needs them as they are. */
const RESERVED_ENV = new Set(['PATH', 'JACKIN_RUN_DIR']);
/** Container paths jackin mounts itself (run directory, lent Node and package, workspace). */
const RESERVED_MOUNTS = ['/jackin/run', '/opt/jackin', '/workspace'];
/** An env file in the workspace is the container's writing: read at most this much of it. */
export const ENV_FILE_MAX_BYTES = 1024 * 1024;

function badEnv(message: string): JackinError {
  return new JackinError('E_BAD_ENV', message);
}

/**
 * How an error names a variable. A value given where a name goes (`--env "$TOKEN"` written for
 * `--env NAME`, or `--env hunter2`) must never be echoed, and no form tells every name from every value. A
 * name is shown when it is set in jackin's environment (then it names a variable here, whatever its form:
 * `http_proxy`), or when it has the form of the usual exported variable: upper-case words of letters and
 * digits joined by `_`, at most 16 characters each (OPENAI_API_KEY), or one such word of at most 12
 * (EDITOR). Any other name is given by its length only: lower-case and mixed-case words, hex, prefixed
 * (`ghp_` and 36 characters) and key-id-like (`AKIA` and 16) values match neither.
 */
export function nameForError(name: string, hostEnv: NodeJS.ProcessEnv): string {
  if (Object.hasOwn(hostEnv, name) && hostEnv[name] !== undefined) return name;
  const upper = /^[A-Z][A-Z0-9]{0,15}(?:_[A-Z0-9]{1,16})*$/.test(name);
  const usual = name.length <= 64 && upper && (name.includes('_') || name.length <= 12);
  return usual ? name : `a name of ${[...name].length} characters (not shown: it may be a value)`;
}

function checkEnvName(name: string, where: string, hostEnv: NodeJS.ProcessEnv): string {
  if (!ENV_NAME.test(name)) {
    throw badEnv(`${where}: ${nameForError(name, hostEnv)} is not a variable name (letters, digits and _, not starting with a digit)`);
  }
  if (RESERVED_ENV.has(name)) throw badEnv(`${where}: ${name} is set by jackin run --image itself (the capsule needs it): leave it out`);
  return name;
}

/** One `--env` value: `NAME=VALUE`, or `NAME` alone for the host's value of NAME. */
export function parseEnvOption(spec: string, hostEnv: NodeJS.ProcessEnv): EnvPass {
  const eq = spec.indexOf('=');
  const name = checkEnvName(eq === -1 ? spec : spec.slice(0, eq), '--env', hostEnv);
  if (eq !== -1) return { name, value: spec.slice(eq + 1), from: '--env' };
  const value = hostEnv[name];
  if (value === undefined) {
    const shown = nameForError(name, hostEnv);
    throw badEnv(`--env ${shown}: ${shown === name ? name : 'it'} is not set in this environment: export it first, or pass --env NAME=VALUE`);
  }
  return { name, value, from: '--env' };
}

/**
 * An env file as Docker reads one: a `NAME=VALUE` or `NAME` per line (leading blanks ignored, the value
 * taken as it is, quotes included), blank lines and lines starting with `#` skipped. In a file the container
 * wrote (`inWorkspace`), a `NAME` line alone is refused: it would hand the operator's own value of any
 * variable the agent names (a token, a cloud key) to the container.
 */
export function parseEnvFile(file: string, text: string, hostEnv: NodeJS.ProcessEnv, inWorkspace = false): EnvPass[] {
  const out: EnvPass[] = [];
  const lines = text.split(/\r?\n/);
  for (const [i, raw] of lines.entries()) {
    const line = raw.replace(/^[ \t]+/, '');
    if (line === '' || line.startsWith('#')) continue;
    const where = `--env-file ${file} line ${i + 1}`;
    const eq = line.indexOf('=');
    const name = checkEnvName(eq === -1 ? line.trimEnd() : line.slice(0, eq), where, hostEnv);
    if (eq !== -1) {
      out.push({ name, value: line.slice(eq + 1), from: where });
      continue;
    }
    if (inWorkspace) {
      throw badEnv(
        `${where}: ${nameForError(name, hostEnv)} alone would take this environment's value, and the file is in the workspace, which the container writes: ` +
          'write NAME=VALUE there, or pass --env NAME yourself',
      );
    }
    const value = hostEnv[name];
    if (value === undefined) {
      const shown = nameForError(name, hostEnv);
      throw badEnv(`${where}: ${shown} is not set in this environment: export it first, or write NAME=VALUE`);
    }
    out.push({ name, value, from: where });
  }
  return out;
}

function unreadable(file: string, cause: unknown, why?: string): JackinError {
  return new JackinError('E_BAD_ENV', `--env-file ${file}: cannot read it (${why ?? (cause as NodeJS.ErrnoException).code ?? 'error'})`, { cause });
}

/**
 * An env file inside the workspace: the container wrote it, and may have made it a symlink, a FIFO (which
 * would hang a plain read) or a file of any size. Its resolved path must be in the workspace; it is opened
 * there without following a symlink at its end, non-blocking, must be a regular file of at most
 * ENV_FILE_MAX_BYTES, and on Linux (where /proc shows what a descriptor is) the file opened must be the one
 * resolved, so a directory swapped for a symlink between the check and the open is caught.
 */
function readWorkspaceEnvFile(file: string, real: string): string {
  let fd: number;
  try {
    fd = openSync(real, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK | constants.O_NOCTTY);
  } catch (cause) {
    throw unreadable(file, cause);
  }
  try {
    if (process.platform === 'linux') {
      let opened: string | null = null;
      try {
        opened = readlinkSync(`/proc/self/fd/${fd}`);
      } catch {
        // No /proc (a restricted mount): the O_NOFOLLOW open is what we have.
      }
      if (opened !== null && opened !== real) throw unreadable(file, null, 'it changed while it was opened');
    }
    const st = fstatSync(fd);
    if (!st.isFile()) throw unreadable(file, null, 'not a regular file');
    if (st.size > ENV_FILE_MAX_BYTES) throw unreadable(file, null, `larger than ${ENV_FILE_MAX_BYTES} bytes`);
    const bytes = readFileSync(fd);
    if (bytes.length > ENV_FILE_MAX_BYTES) throw unreadable(file, null, `larger than ${ENV_FILE_MAX_BYTES} bytes`);
    return bytes.toString('utf8');
  } finally {
    closeSync(fd);
  }
}

/**
 * Reads and parses `--env-file FILE` (relative to `cwd`). A file written inside `workspace` is refused when
 * it leads out of the workspace through a symlink (it would carry a file of the operator's into the
 * container), and is read as readWorkspaceEnvFile says; any other is read as it is (`<(pass show x)`).
 */
export function readEnvFile(file: string, cwd: string, hostEnv: NodeJS.ProcessEnv, workspace: string): EnvPass[] {
  const path = resolve(cwd, file);
  let resolved: ResolvedHostPath | null = null;
  try {
    resolved = resolveHostPath(path, workspace);
  } catch {
    // Not resolvable (a missing file): read below as given, which says why not.
  }
  let text: string;
  if (resolved?.inWorkspace === true) {
    if (resolved.leavesWorkspace) {
      throw new JackinError(
        'E_BAD_ENV',
        `--env-file ${file}: it is in the workspace, which the container writes, and leads out of it through a symlink (to ${inertText(resolved.real)}): nothing was read; name the file itself if you mean it`,
      );
    }
    text = readWorkspaceEnvFile(file, resolved.real);
  } else {
    try {
      text = readFileSync(path, 'utf8');
    } catch (cause) {
      throw unreadable(file, cause);
    }
  }
  return parseEnvFile(file, text, hostEnv, resolved?.inWorkspace === true);
}

/** The variables of `--env-file` (in order) then `--env` (in order): a later one of the same name wins. */
export function collectEnv(files: readonly string[], specs: readonly string[], cwd: string, hostEnv: NodeJS.ProcessEnv, workspace: string): EnvPass[] {
  const byName = new Map<string, EnvPass>();
  for (const f of files) for (const e of readEnvFile(f, cwd, hostEnv, workspace)) byName.delete(e.name), byName.set(e.name, e);
  for (const s of specs) {
    const e = parseEnvOption(s, hostEnv);
    byName.delete(e.name);
    byName.set(e.name, e);
  }
  return [...byName.values()];
}

function badVolume(spec: string, why: string): JackinError {
  return new JackinError('E_BAD_VOLUME', `--volume ${JSON.stringify(spec)}: ${why}`);
}

/**
 * One `--volume HOST:CONTAINER[:ro|rw]`: the host path must exist (a relative one is taken from `cwd`), and
 * is mounted by its resolved path; one written inside `workspace` must not lead out of it through a symlink
 * (workspace-path.ts).
 */
export function parseVolume(spec: string, cwd: string, workspace: string): VolumeSpec {
  if (/[\0\n\r]/.test(spec)) throw badVolume(spec, 'contains a control character');
  const parts = spec.split(':');
  if (parts.length < 2 || parts.length > 3 || parts[0] === '' || parts[1] === '') {
    throw badVolume(spec, 'expected HOST:CONTAINER or HOST:CONTAINER:ro|rw (no other ":" in either path)');
  }
  const [hostPart, container, mode] = parts as [string, string, string | undefined];
  if (mode !== undefined && mode !== 'ro' && mode !== 'rw') throw badVolume(spec, `the mode ${JSON.stringify(mode)} is not ro or rw`);
  if (!isAbsolute(container) || !container.startsWith('/')) throw badVolume(spec, `the container path ${JSON.stringify(container)} is not absolute`);
  const target = posix.normalize(container).replace(/(.)\/+$/, '$1');
  for (const r of RESERVED_MOUNTS) {
    if (target === '/' || target === r || target.startsWith(`${r}/`)) {
      throw badVolume(
        spec,
        `${target} is where jackin run --image mounts ${r === '/workspace' ? 'the workspace (use --workspace)' : 'its own files'}: pick another container path`,
      );
    }
  }
  const host = resolve(cwd, hostPart);
  let resolved: ResolvedHostPath;
  try {
    resolved = resolveHostPath(host, workspace);
  } catch (cause) {
    throw new JackinError(
      'E_BAD_VOLUME',
      `--volume ${JSON.stringify(spec)}: the host path ${host} does not exist (${(cause as NodeJS.ErrnoException).code ?? 'error'}): create it first`,
      { cause },
    );
  }
  if (resolved.leavesWorkspace) {
    throw badVolume(
      spec,
      `the host path ${host} is in the workspace, which the container writes, and leads out of it through a symlink (to ${inertText(resolved.real)}): nothing was mounted; name the target itself if you mean it`,
    );
  }
  return { host: resolved.real, container: target, mode: mode === undefined ? null : mode };
}
