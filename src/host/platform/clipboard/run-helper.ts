/**
 * Runs one clipboard helper as a child process with a timeout and a byte cap, collecting stdout as
 * binary. Every backend goes through here, so no helper can hang the paste or fill memory.
 */
import { spawn } from 'node:child_process';
import { JackinError, type ErrorCode } from '../../../errors.ts';

/** One helper invocation: the program and its exact argv (built by the pure functions in argv.ts). */
export interface HelperCommand {
  file: string;
  args: readonly string[];
}

export interface HelperRun {
  timeoutMs: number;
  /** Largest stdout accepted; one byte more kills the helper and throws `overflowCode`. */
  maxBytes: number;
  /** Code thrown when stdout exceeds maxBytes (E_IMAGE_TOO_LARGE for image reads). */
  overflowCode?: ErrorCode;
  /** How to install the program when it is missing, e.g. "apt-get install xclip". */
  installHint: string;
  env?: NodeJS.ProcessEnv;
}

export interface HelperResult {
  stdout: Buffer;
  /** The first few KiB of stderr, for error messages. */
  stderr: string;
  exitCode: number | null;
  signal: NodeJS.Signals | null;
}

/** Stderr kept for messages; a chatty helper cannot grow it past this. */
const MAX_STDERR_BYTES = 4096;

/** The command as a one-line string for messages. */
export function describeCommand(cmd: HelperCommand): string {
  return [cmd.file, ...cmd.args].map((a) => (/^[\w@%+=:,./-]+$/.test(a) ? a : JSON.stringify(a))).join(' ');
}

/**
 * Runs `cmd` and resolves with its output whatever its exit status (callers interpret that). Throws
 * E_CLIPBOARD_BACKEND_MISSING when the program does not exist, E_CLIPBOARD_TIMEOUT, or
 * `overflowCode` (default E_CLIPBOARD_READ_FAILED) when stdout exceeds the cap.
 */
export function runHelper(cmd: HelperCommand, run: HelperRun): Promise<HelperResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd.file, [...cmd.args], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: run.env ?? process.env,
    });
    const chunks: Buffer[] = [];
    let size = 0;
    let stderr = '';
    let failure: JackinError | null = null;
    const fail = (e: JackinError): void => {
      if (failure !== null) return;
      failure = e;
      child.kill('SIGKILL');
    };
    const timer = setTimeout(() => {
      fail(new JackinError('E_CLIPBOARD_TIMEOUT', `${describeCommand(cmd)} did not finish within ${run.timeoutMs} ms; is the clipboard owner responsive?`));
    }, run.timeoutMs);
    child.stdout.on('data', (b: Buffer) => {
      if (failure !== null) return;
      size += b.length;
      if (size > run.maxBytes) {
        fail(new JackinError(run.overflowCode ?? 'E_CLIPBOARD_READ_FAILED', `${describeCommand(cmd)} printed more than the cap of ${run.maxBytes} bytes`));
        return;
      }
      chunks.push(b);
    });
    child.stderr.on('data', (b: Buffer) => {
      if (stderr.length < MAX_STDERR_BYTES) stderr += b.toString('utf8').slice(0, MAX_STDERR_BYTES - stderr.length);
    });
    child.on('error', (e: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      if (e.code === 'ENOENT') {
        reject(
          new JackinError('E_CLIPBOARD_BACKEND_MISSING', `clipboard helper ${JSON.stringify(cmd.file)} is not installed or not on PATH; ${run.installHint}`, {
            cause: e,
          }),
        );
      } else {
        reject(new JackinError('E_CLIPBOARD_READ_FAILED', `could not run ${describeCommand(cmd)}: ${e.message}`, { cause: e }));
      }
    });
    child.on('close', (exitCode, signal) => {
      clearTimeout(timer);
      if (failure !== null) reject(failure);
      else resolve({ stdout: Buffer.concat(chunks, size), stderr: stderr.trim(), exitCode, signal });
    });
  });
}
