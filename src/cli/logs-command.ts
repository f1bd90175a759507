/**
 * `jackin logs NAME [-f] [--tail N]`: the capsule's own log, as `docker logs` shows a container's. A local
 * capsule writes capsule.log in its run directory; a capsule in a container `jackin run --image` started
 * writes to the container's output, read with `ENGINE logs`. Not `jackin log`, the host's record of host
 * actions. The text comes from the capsule and its program: where it goes to a terminal every control
 * character is shown as an escape (lines and tabs kept), so nothing in it can act on the terminal.
 */
import { spawn } from 'node:child_process';
import { constants, existsSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Command } from './commander.ts';
import { JackinError } from '../errors.ts';
import { jackinHome, socketAnswers } from '../host/instances/instances.ts';
import { readContainerRecord } from '../transport/container-record.ts';
import { checkInstanceName, instanceRunDir, runDirSocketPath } from '../transport/instance-paths.ts';
import { inertText } from '../ui/inert-text.ts';
import type { SetStatus } from './command-kit.ts';
import { remoteMachine } from './transport-options.ts';

/** How often a followed capsule.log is read for more, and its capsule asked whether it is still there. */
const FOLLOW_POLL_MS = 200;
const ALIVE_POLL_MS = 1_000;
const READ_CHUNK = 64 * 1024;

interface LogsFlags {
  follow?: boolean;
  tail?: string;
}

/** One line of log text made inert, its tabs kept (they cannot act on a terminal). */
export function inertLogLine(line: string): string {
  return line
    .split('\t')
    .map((part) => inertText(part, Number.POSITIVE_INFINITY))
    .join('\t');
}

/**
 * Writes log text to stdout: as it is to a pipe or a file, made inert line by line to a terminal. A line
 * is written once its newline has come (`flush` writes what is left).
 */
class LogWriter {
  readonly #inert = process.stdout.isTTY === true;
  readonly #decoder = new StringDecoder('utf8');
  #partial = '';

  async write(bytes: Buffer): Promise<void> {
    if (!this.#inert) return this.#out(bytes);
    const text = this.#partial + this.#decoder.write(bytes);
    const end = text.lastIndexOf('\n');
    this.#partial = text.slice(end + 1);
    if (end >= 0) await this.#out(`${text.slice(0, end).split('\n').map(inertLogLine).join('\n')}\n`);
  }

  async flush(): Promise<void> {
    if (!this.#inert) return;
    const rest = this.#partial + this.#decoder.end();
    this.#partial = '';
    if (rest.length > 0) await this.#out(`${inertLogLine(rest)}\n`);
  }

  #out(chunk: string | Buffer): Promise<void> {
    return new Promise((res) => (process.stdout.destroyed ? res() : process.stdout.write(chunk, () => res())));
  }
}

/** Where the last `lines` lines of the file begin (0 for all of them). */
async function tailOffset(handle: FileHandle, size: number, lines: number): Promise<number> {
  if (lines === 0) return size;
  let pos = size;
  let newlines = 0;
  const buf = Buffer.alloc(READ_CHUNK);
  // A last line without its newline counts as a line.
  let skipLast = true;
  while (pos > 0) {
    const len = Math.min(READ_CHUNK, pos);
    pos -= len;
    const { bytesRead } = await handle.read(buf, 0, len, pos);
    for (let i = bytesRead - 1; i >= 0; i--) {
      if (buf[i] !== 0x0a) {
        skipLast = false;
        continue;
      }
      if (skipLast && pos + i === size - 1) continue;
      if (++newlines === lines) return pos + i + 1;
    }
  }
  return 0;
}

/** Ends with 130 on Ctrl+C (143 on SIGTERM), as `tail -f` does under a shell. */
function onInterrupt(): { promise: Promise<number>; dispose: () => void } {
  let done: (n: number) => void = () => undefined;
  const promise = new Promise<number>((res) => (done = res));
  const int = () => done(130);
  const term = () => done(143);
  process.once('SIGINT', int);
  process.once('SIGTERM', term);
  return {
    promise,
    dispose: () => {
      process.off('SIGINT', int);
      process.off('SIGTERM', term);
    },
  };
}

async function localLogs(name: string, runDir: string, flags: LogsFlags, lines: number | null): Promise<number> {
  const logPath = join(runDir, 'capsule.log');
  let handle: FileHandle;
  try {
    // Not through a symlink, and never waiting on a FIFO: a container may have had this run directory.
    handle = await open(logPath, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (e) {
    throw new JackinError('E_NO_INSTANCE', `instance ${name} has no capsule log (${logPath}: ${(e as NodeJS.ErrnoException).code ?? String(e)})`, { cause: e });
  }
  const writer = new LogWriter();
  const interrupt = flags.follow === true ? onInterrupt() : null;
  try {
    const st = await handle.stat();
    if (!st.isFile()) throw new JackinError('E_NO_INSTANCE', `${logPath} is not a regular file: it is not a capsule log`);
    let pos = lines === null ? 0 : await tailOffset(handle, st.size, lines);
    const buf = Buffer.alloc(READ_CHUNK);
    const drain = async () => {
      for (;;) {
        const { bytesRead } = await handle.read(buf, 0, buf.length, pos);
        if (bytesRead === 0) return;
        pos += bytesRead;
        await writer.write(Buffer.from(buf.subarray(0, bytesRead)));
      }
    };
    await drain();
    if (interrupt === null) return 0;
    const socket = runDirSocketPath(runDir);
    let status: number | null = null;
    void interrupt.promise.then((n) => (status = n));
    let nextAlive = 0;
    while (status === null) {
      await drain();
      if (Date.now() >= nextAlive) {
        nextAlive = Date.now() + ALIVE_POLL_MS;
        // The capsule is gone: what it wrote last is read, then the follow ends.
        if (!(await socketAnswers(socket))) {
          await drain();
          return 0;
        }
      }
      await Promise.race([sleep(FOLLOW_POLL_MS), interrupt.promise]);
    }
    return status;
  } finally {
    interrupt?.dispose();
    await writer.flush();
    await handle.close().catch(() => undefined);
  }
}

async function containerLogs(engine: string, container: string, flags: LogsFlags, lines: number | null): Promise<number> {
  const args = ['logs', ...(flags.follow === true ? ['-f'] : []), ...(lines !== null ? ['--tail', String(lines)] : []), container];
  const code = await relayedLogs([engine, ...args], (e) => new JackinError('E_ENGINE_COMMAND', `${engine} logs failed: ${e.message}`, { cause: e }));
  if (code !== 0 && code < 128) throw new JackinError('E_ENGINE_COMMAND', `${engine} logs ${container} failed (status ${code}): is the container gone?`);
  return code;
}

/**
 * `jackin logs --ssh HOST NAME`: the copied jackin's `logs` on that machine, its output (and its reason on
 * stderr when it fails) shown as a local log is; the remote's exit status is kept.
 */
async function remoteLogs(target: string, name: string, flags: LogsFlags, lines: number | null): Promise<number> {
  const argv = await remoteMachine(target).jackinArgv([
    'logs',
    ...(flags.follow === true ? ['-f'] : []),
    ...(lines !== null ? ['--tail', String(lines)] : []),
    name,
  ]);
  return relayedLogs(argv, (e) => new JackinError('E_SSH_FAILED', `ssh failed: ${e.message}`, { cause: e }));
}

/**
 * Runs a command that prints a log (an engine's `logs`, the remote's `jackin logs`) and shows its stdout and
 * stderr through the LogWriter; resolves with its exit status, or 128 + the signal's number after Ctrl+C.
 */
async function relayedLogs(argv: readonly string[], spawnFailed: (e: Error) => JackinError): Promise<number> {
  const child = spawn(argv[0]!, argv.slice(1), { stdio: ['ignore', 'pipe', 'pipe'] });
  // The engine replays the container's stdout and stderr on its own two: both are the capsule's log here.
  const writer = new LogWriter();
  let chain = Promise.resolve();
  const feed = (b: Buffer) => (chain = chain.then(() => writer.write(b)));
  child.stdout.on('data', feed);
  child.stderr.on('data', feed);
  const interrupt = onInterrupt();
  try {
    const ended = new Promise<number>((res, rej) => {
      child.once('error', (e) => rej(spawnFailed(e)));
      child.once('close', (code) => res(code ?? 1));
    });
    const first = await Promise.race([ended.then((code) => ({ code, signal: null })), interrupt.promise.then((n) => ({ code: null, signal: n }))]);
    if (first.signal !== null) {
      child.kill('SIGTERM');
      return first.signal;
    }
    await chain;
    return first.code;
  } finally {
    interrupt.dispose();
    await chain;
    await writer.flush();
  }
}

async function logsCommand(name: string, flags: LogsFlags & { ssh?: string }): Promise<number> {
  checkInstanceName(name);
  let lines: number | null = null;
  if (flags.tail !== undefined && flags.tail !== 'all') {
    lines = Number(flags.tail);
    if (!/^\d+$/.test(flags.tail) || !Number.isSafeInteger(lines))
      throw new JackinError('E_USAGE', `--tail ${JSON.stringify(flags.tail)} is not a number of lines: pass a whole number, or all`);
  }
  if (flags.ssh !== undefined) return remoteLogs(flags.ssh, name, flags, lines);
  const home = jackinHome();
  const record = readContainerRecord(home, name);
  if (record !== null) return containerLogs(record.engine, record.container, flags, lines);
  const runDir = instanceRunDir(home, name);
  if (!existsSync(runDir)) throw new JackinError('E_NO_INSTANCE', `no instance ${name}: nothing in ${runDir} (jackin ls lists them)`);
  return localLogs(name, runDir, flags, lines);
}

export function registerLogsCommand(program: Command, setStatus: SetStatus): void {
  program
    .command('logs')
    .description("show an instance's capsule log (what its capsule wrote: why it stopped, errors); not jackin log, the host's record of actions")
    .argument('<instance>', 'instance name')
    .option('-f, --follow', 'keep printing what is added, until Ctrl+C (status 130) or the capsule is gone (status 0)')
    .option('--tail <n>', 'show only the last n lines (default: all)')
    .option('--ssh <host>', "that machine's instance ([user@]host[:port]), where jackin run --ssh started it")
    .addHelpText(
      'after',
      `
A local capsule's log is $JACKIN_HOME/sockets/<name>/capsule.log; for a container jackin run --image
started, it is the container's output (ENGINE logs), gone once the container is removed. To a terminal,
control characters in it are shown as escapes (\\x1b), so the log cannot act on your terminal.

Examples:
  jackin logs build
  jackin logs agent --tail 20
  jackin logs -f build
  jackin logs --ssh dev@box build`,
    )
    .action(async (name: string, flags: LogsFlags & { ssh?: string }) => setStatus(await logsCommand(name, flags)));
}
