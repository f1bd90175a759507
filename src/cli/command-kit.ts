/**
 * What every command module of both CLIs shares: the status setter a command's action reports through,
 * the package version, a write that resolves once the text is handed to the stream, the one-line form of
 * commander's usage errors, how output that cannot be written ends the program, and how a signal
 * interrupts a command that transfers files.
 */
import { readFileSync, statSync } from 'node:fs';
import { constants } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Command } from 'commander';
import { describeError, errnoOf, JackinError } from '../errors.ts';

/** A command's action reports its exit status through this; the CLI's `run` returns it. */
export type SetStatus = (status: number) => void;

// Works from src/cli (tsx) and dist/cli (built): both are two levels below the package root.
export const PACKAGE_ROOT = fileURLToPath(new URL('../../', import.meta.url));

export function packageVersion(): string {
  try {
    const pkg = JSON.parse(readFileSync(join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { version?: unknown };
    return typeof pkg.version === 'string' ? pkg.version : '0.0.0';
  } catch {
    return '0.0.0';
  }
}

export function writeAll(stream: NodeJS.WriteStream, text: string): Promise<void> {
  return new Promise((res) => {
    if (text.length === 0 || stream.destroyed) return res();
    stream.write(text, () => res());
  });
}

/** Exit status of a command line that is not valid (an unknown command or option, a missing argument). */
export const USAGE_EXIT_STATUS = 2;

/**
 * One line for a usage error commander found: `error: unknown command 'exprot'\n(Did you mean export?)`
 * becomes `jackin: unknown command 'exprot' (did you mean export?); see \`jackin --help\``.
 */
export function usageErrorLine(message: string, helpCommand: string, bin = helpCommand.split(' ')[0]!): string {
  const text = message
    .trim()
    .replace(/^error: /u, '')
    .replace(/\s*\n\s*\(Did you mean (.*)\)$/u, ' (did you mean $1)')
    .replace(/\s*\n\s*/gu, ' ')
    .replace(/\.$/u, '');
  return `${bin}: ${text}; see \`${helpCommand} --help\`\n`;
}

/**
 * Makes commander print each usage error as one line on stderr naming the help to read: the program's
 * own, or the subcommand's for an error in a subcommand. Call once every command is registered.
 */
export function oneLineUsageErrors(program: Command): void {
  const bin = program.name();
  const configure = (command: Command, helpCommand: string): void => {
    command.configureOutput({
      writeErr: (s) => process.stderr.write(s),
      outputError: (message, write) => write(usageErrorLine(message, helpCommand, bin)),
    });
  };
  configure(program, bin);
  for (const command of program.commands) configure(command, `${bin} ${command.name()}`);
}

/** Exit status when the reader of the output went away (`jackin log | head -1`): 128 + SIGPIPE, as a shell reports a program SIGPIPE ended. */
export const CLOSED_PIPE_EXIT_STATUS = 141;

/**
 * Output that cannot be written ends the program plainly, not with Node's stack trace of an unhandled
 * 'error': EPIPE on stdout or stderr (the reader closed early) quietly with CLOSED_PIPE_EXIT_STATUS, as
 * SIGPIPE ends a C program; any other error on stdout (ENOSPC from `> /dev/full`, EIO) with one line on
 * stderr and status 1. Returns what removes the watch, for commands that own a terminal or a relay and
 * handle its errors themselves.
 */
export function endOnOutputError(bin: string): () => void {
  const onStdout = (e: unknown): void => {
    if (errnoOf(e) === 'EPIPE') process.exit(CLOSED_PIPE_EXIT_STATUS);
    process.stderr.write(`${bin}: cannot write the output: ${describeError(e)}\n`, () => process.exit(1));
  };
  const onStderr = (e: unknown): void => process.exit(errnoOf(e) === 'EPIPE' ? CLOSED_PIPE_EXIT_STATUS : 1);
  process.stdout.on('error', onStdout);
  process.stderr.on('error', onStderr);
  return () => {
    process.stdout.off('error', onStdout);
    process.stderr.off('error', onStderr);
  };
}

/**
 * Exits with `status` once what was written to stdout has been handed over, and after the 'error' a failed
 * write emits (on the next tick), so endOnOutputError decides the status when the output was lost.
 */
export function exitAfterOutput(status: number): void {
  const exit = (): void => void setImmediate(() => process.exit(status));
  if (process.stdout.destroyed) exit();
  else process.stdout.write('', exit);
}

/** The signals that interrupt a transfer: Ctrl+C, a supervisor's stop, a closed terminal. */
const INTERRUPTING_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

export interface Interruption {
  /** Aborted by the first signal: the command removes what it started (a partial file) and ends. */
  readonly signal: AbortSignal;
  /** null until a signal came; then 128 + its number (130 for Ctrl+C, 143 for SIGTERM), as a shell reports it. */
  status(): number | null;
  /** Gives the signals back their default action. */
  dispose(): void;
}

/**
 * Turns SIGINT, SIGTERM and SIGHUP into an abort while a command transfers files (jackin export, jackin
 * stage). A second signal, for a clean-up that takes too long, exits at once with the same status; a
 * partial file it leaves is hidden and the next transfer removes it.
 */
export function interruptOnSignals(): Interruption {
  const stop = new AbortController();
  let status: number | null = null;
  const onSignal = (sig: NodeJS.Signals): void => {
    if (status !== null) process.exit(status);
    status = 128 + constants.signals[sig];
    stop.abort();
  };
  for (const s of INTERRUPTING_SIGNALS) process.on(s, onSignal);
  return {
    signal: stop.signal,
    status: () => status,
    dispose: () => {
      for (const s of INTERRUPTING_SIGNALS) process.off(s, onSignal);
    },
  };
}

/** What to do about a system error on a path of the program's own, by its errno; `setting` names where that path comes from. */
function pathErrorFix(errno: string, setting: string): string {
  switch (errno) {
    case 'EACCES':
    case 'EPERM':
      return `check its permissions, or set ${setting} to a directory of yours`;
    case 'ENOSPC':
    case 'EDQUOT':
      return 'free some space on that file system';
    case 'EROFS':
      return `the file system is read-only: set ${setting} to a writable directory`;
    case 'ENOTDIR':
    case 'EEXIST':
    case 'ELOOP':
      return `a part of that path is not a directory: check ${setting}`;
    default:
      return `check that path, or set ${setting} to another directory`;
  }
}

/**
 * A Node system error on a path that no command turned into a JackinError (JACKIN_HOME or the run directory
 * is a file, not writable, on a full disk): `code` with the path, the error and the fix, instead of an
 * internal error. Null for anything else.
 */
export function pathError(e: unknown, code: 'E_HOST_IO' | 'E_RUN_DIR', setting: string): JackinError | null {
  const errno = errnoOf(e);
  if (errno === undefined || !(e instanceof Error) || !('syscall' in e) || typeof e.syscall !== 'string') return null;
  if (!('path' in e) || typeof e.path !== 'string') return null;
  // Node's message is "ENOTDIR: not a directory, scandir '/x'": keep the description.
  const what = /^[A-Z]+: (.*?), \w+/u.exec(describeError(e))?.[1] ?? errno;
  return new JackinError(code, `cannot ${e.syscall} ${e.path}: ${what} (${errno}); ${pathErrorFix(errno, setting)}`, { cause: e });
}

/** The program's working directory (`--workspace` of jackin run and jackin-capsule serve), made absolute; E_USAGE unless it is a directory. */
export function checkWorkspace(dir: string): string {
  const workspace = resolve(dir);
  try {
    if (!statSync(workspace).isDirectory()) throw new Error('not a directory');
  } catch (cause) {
    throw new JackinError('E_USAGE', `workspace ${workspace} is not a directory: pass an existing --workspace`, { cause, exitCode: 2 });
  }
  return workspace;
}
