/**
 * The forms of `jackin run --image`'s pass-through options: `--env NAME[=VALUE]`, `--env-file FILE`,
 * `--volume HOST:CONTAINER[:ro|rw]`. Pure (the file system is read only to check that a host path exists
 * and to read an env file). A variable's value is kept apart from its name: the engine gets `-e NAME` on its
 * command line and the value in its own environment, so no value is ever in an argv, a printed command or
 * an error message (errors name the variable or the line number, never the value).
 */
import { readFileSync, statSync } from 'node:fs';
import { isAbsolute, posix, resolve } from 'node:path';
import { JackinError } from '../../errors.ts';

/** A variable for the container: its name and the value the engine process passes on. */
export interface EnvPass {
  name: string;
  value: string;
}

export interface VolumeSpec {
  /** Absolute, existing host path. */
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

function badEnv(message: string): JackinError {
  return new JackinError('E_BAD_ENV', message, { exitCode: 2 });
}

/**
 * How an error names a variable: in full when it has the usual form of a variable name (words of one case,
 * at most 16 characters each, joined by _, as OPENAI_API_KEY or http_proxy; a single word of at most 12, as
 * EDITOR), else only by its length. An `--env "$TOKEN"` written for `--env NAME` puts a value where the name
 * goes, and a value is never echoed, whatever its form: mixed-case, hex, prefixed (ghp_ and 36 characters)
 * and key-id-like (AKIA and 16) values match none of these.
 */
function nameForError(name: string): string {
  const words = /^[A-Z][A-Z0-9]{0,15}(?:_[A-Z0-9]{1,16})*$/.test(name) || /^[a-z][a-z0-9]{0,15}(?:_[a-z0-9]{1,16})*$/.test(name);
  const usual = name.length <= 64 && words && (name.includes('_') || name.length <= 12);
  return usual ? name : `a name of ${[...name].length} characters (not shown: it may be a value)`;
}

function checkEnvName(name: string, where: string): string {
  if (!ENV_NAME.test(name)) {
    throw badEnv(`${where}: ${nameForError(name)} is not a variable name (letters, digits and _, not starting with a digit)`);
  }
  if (RESERVED_ENV.has(name)) throw badEnv(`${where}: ${name} is set by jackin run --image itself (the capsule needs it): leave it out`);
  return name;
}

/** One `--env` value: `NAME=VALUE`, or `NAME` alone for the host's value of NAME. */
export function parseEnvOption(spec: string, hostEnv: NodeJS.ProcessEnv): EnvPass {
  const eq = spec.indexOf('=');
  const name = checkEnvName(eq === -1 ? spec : spec.slice(0, eq), '--env');
  if (eq !== -1) return { name, value: spec.slice(eq + 1) };
  const value = hostEnv[name];
  if (value === undefined) {
    const shown = nameForError(name);
    throw badEnv(`--env ${shown}: ${shown === name ? name : 'it'} is not set in this environment: export it first, or pass --env NAME=VALUE`);
  }
  return { name, value };
}

/**
 * An env file as Docker reads one: a `NAME=VALUE` or `NAME` per line (leading blanks ignored, the value
 * taken as it is, quotes included), blank lines and lines starting with `#` skipped.
 */
export function parseEnvFile(file: string, text: string, hostEnv: NodeJS.ProcessEnv): EnvPass[] {
  const out: EnvPass[] = [];
  const lines = text.split(/\r?\n/);
  for (const [i, raw] of lines.entries()) {
    const line = raw.replace(/^[ \t]+/, '');
    if (line === '' || line.startsWith('#')) continue;
    const where = `--env-file ${file} line ${i + 1}`;
    const eq = line.indexOf('=');
    const name = checkEnvName(eq === -1 ? line.trimEnd() : line.slice(0, eq), where);
    if (eq !== -1) {
      out.push({ name, value: line.slice(eq + 1) });
      continue;
    }
    const value = hostEnv[name];
    if (value === undefined) {
      const shown = nameForError(name);
      throw badEnv(`${where}: ${shown} is not set in this environment: export it first, or write NAME=VALUE`);
    }
    out.push({ name, value });
  }
  return out;
}

/** Reads and parses `--env-file FILE` (relative to `cwd`). */
export function readEnvFile(file: string, cwd: string, hostEnv: NodeJS.ProcessEnv): EnvPass[] {
  let text: string;
  try {
    text = readFileSync(resolve(cwd, file), 'utf8');
  } catch (cause) {
    throw new JackinError('E_BAD_ENV', `--env-file ${file}: cannot read it (${(cause as NodeJS.ErrnoException).code ?? 'error'})`, { cause, exitCode: 2 });
  }
  return parseEnvFile(file, text, hostEnv);
}

/** The variables of `--env-file` (in order) then `--env` (in order): a later one of the same name wins. */
export function collectEnv(files: readonly string[], specs: readonly string[], cwd: string, hostEnv: NodeJS.ProcessEnv): EnvPass[] {
  const byName = new Map<string, EnvPass>();
  for (const f of files) for (const e of readEnvFile(f, cwd, hostEnv)) byName.delete(e.name), byName.set(e.name, e);
  for (const s of specs) {
    const e = parseEnvOption(s, hostEnv);
    byName.delete(e.name);
    byName.set(e.name, e);
  }
  return [...byName.values()];
}

function badVolume(spec: string, why: string): JackinError {
  return new JackinError('E_BAD_VOLUME', `--volume ${JSON.stringify(spec)}: ${why}`, { exitCode: 2 });
}

/** One `--volume HOST:CONTAINER[:ro|rw]`: the host path must exist (a relative one is taken from `cwd`). */
export function parseVolume(spec: string, cwd: string): VolumeSpec {
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
      throw badVolume(spec, `${target} is where jackin run --image mounts ${r === '/workspace' ? 'the workspace (use --workspace)' : 'its own files'}: pick another container path`);
    }
  }
  const host = resolve(cwd, hostPart);
  try {
    statSync(host);
  } catch (cause) {
    throw new JackinError('E_BAD_VOLUME', `--volume ${JSON.stringify(spec)}: the host path ${host} does not exist (${(cause as NodeJS.ErrnoException).code ?? 'error'}): create it first`, { cause, exitCode: 2 });
  }
  return { host, container: target, mode: mode === undefined ? null : mode };
}
