/**
 * How `jackin run --image` hands the container's variables to the engine without putting them in the
 * engine client's environment. The host's `docker` or `podman` is a program of the operator's, run as the
 * operator: a variable in its environment steers it (LD_PRELOAD loads a library into it, DOCKER_HOST and
 * CONTAINER_HOST send its next `run` to another socket, CONTAINERS_CONF, DOCKER_CONFIG, HOME, TMPDIR and
 * SSL_CERT_FILE reconfigure it), and an env file in the workspace is the container's writing. So the engine
 * runs with the operator's environment exactly: a variable whose value is the operator's own is passed by
 * name (`-e NAME`, the engine reading the value it already has), and every other value is written to a
 * file of jackin's own, passed with the engine's `--env-file` and removed as soon as `ENGINE run -d`
 * returns, on every path (an error, a signal, an exit).
 *
 * The file is `0600` in a fresh `0700` directory in the host's temporary directory, or in jackin's home
 * where a mount would show the temporary directory to a container; never in the run directory or the
 * workspace, which containers see. Docker's and Podman's env files are line based, each value taken as it
 * is up to the end of its line (Go's bufio.Scanner: at most 64 KiB a line, a CR before the newline
 * dropped), so a value holding a line break, a CR or a NUL, or too long a line, cannot travel in one and is
 * refused by name before anything starts.
 */
import { closeSync, constants, mkdtempSync, openSync, realpathSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { JackinError } from '../../errors.ts';
import { nameForError, type EnvPass } from './run-image-options.ts';
import { isWithin } from './workspace-path.ts';

/** The longest line an engine's env file holds: Go's bufio.MaxScanTokenSize (64 KiB) less its newline. */
export const ENV_FILE_LINE_MAX_BYTES = 64 * 1024 - 1;

/** The signals that end jackin while the file exists: Ctrl+C, a supervisor's stop, a closed terminal. */
const ENDING_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

/**
 * The env file's text for `vars` (`NAME=VALUE` lines). Throws E_BAD_ENV, naming the variable and where it
 * was given (never the value), for a value no engine's env file can carry.
 */
export function envFileText(vars: readonly EnvPass[], hostEnv: NodeJS.ProcessEnv): string {
  let text = '';
  for (const e of vars) {
    const line = `${e.name}=${e.value}`;
    const why = /[\n\r\0]/.test(e.value)
      ? 'holds a line break, a carriage return or a NUL'
      : Buffer.byteLength(line) > ENV_FILE_LINE_MAX_BYTES
        ? `makes a line longer than the ${ENV_FILE_LINE_MAX_BYTES} bytes an engine's env file holds`
        : null;
    if (why !== null) {
      throw new JackinError(
        'E_BAD_ENV',
        `${e.from}: the value of ${nameForError(e.name, hostEnv)} ${why}, which the engine's env file cannot carry: export it in this environment and pass --env NAME (by name, as it is), or put it in a file the container reads`,
      );
    }
    text += `${line}\n`;
  }
  return text;
}

/**
 * Where the file's directory goes: the first of `candidates` (existing directories) that none of `mounted`
 * (the host paths a container sees: workspace, run directory, volumes) holds, or the last candidate.
 */
export function privateParent(candidates: readonly string[], mounted: readonly string[]): string {
  const real = (p: string): string => {
    try {
      return realpathSync(p);
    } catch {
      return p;
    }
  };
  const seen = mounted.map(real);
  for (const c of candidates) {
    const r = real(c);
    if (!seen.some((m) => isWithin(r, m))) return c;
  }
  return candidates.at(-1)!;
}

/**
 * Writes `text` to a new `0600` file in a new `0700` directory under `parent`, removed by `remove()`, or when
 * jackin exits or is ended by SIGINT, SIGTERM or SIGHUP first (the signal then ends jackin as it would have).
 */
export class PrivateEnvFile {
  /** The file to pass with `--env-file`. */
  readonly path: string;
  readonly #dir: string;
  #removed = false;
  readonly #onSignal = (sig: NodeJS.Signals): void => {
    this.remove();
    // With no other listener left, the signal's default action ends jackin, as it would have without the file.
    if (process.listenerCount(sig) === 0) process.kill(process.pid, sig);
  };
  readonly #onExit = (): void => this.remove();

  constructor(text: string, parent: string) {
    this.#dir = mkdtempSync(join(parent, 'jackin-env-'));
    this.path = join(this.#dir, 'env');
    for (const s of ENDING_SIGNALS) process.on(s, this.#onSignal);
    process.on('exit', this.#onExit);
    try {
      const fd = openSync(this.path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
      try {
        const bytes = Buffer.from(text, 'utf8');
        for (let off = 0; off < bytes.length; ) off += writeSync(fd, bytes, off);
      } finally {
        closeSync(fd);
      }
    } catch (e) {
      this.remove();
      throw e;
    }
  }

  /** Removes the file and its directory (and forgets the signal and exit handlers); safe to call twice. */
  remove(): void {
    if (this.#removed) return;
    this.#removed = true;
    rmSync(this.#dir, { recursive: true, force: true });
    for (const s of ENDING_SIGNALS) process.off(s, this.#onSignal);
    process.off('exit', this.#onExit);
  }
}

/** The PrivateEnvFile holding `text`, under `parent`. */
export function writePrivateEnvFile(text: string, parent: string): PrivateEnvFile {
  return new PrivateEnvFile(text, parent);
}
