import { spawn, type ChildProcess } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import { JackinError } from '../errors.ts';
import { formatArgv } from './exec-args.ts';
import type { Transport } from './transport.ts';

/** The relay's stderr is kept (bounded) for the one-line reason shown when the session ends badly. */
export const RELAY_STDERR_KEEP_BYTES = 4096;
/** After SIGTERM, how long a relay gets before SIGKILL (docker exec forwards the signal and tidies up). */
export const RELAY_KILL_GRACE_MS = 2_000;

export interface ExecExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** A running relay process: its byte streams, its exit, and a way to stop it. */
export interface Exec {
  readonly argv: readonly string[];
  readonly stdin: Writable;
  readonly stdout: Readable;
  readonly exited: Promise<ExecExit>;
  /** The last bytes it wrote on stderr, as text. */
  stderrTail(): string;
  terminate(): void;
}

/**
 * Spawns `argv` with piped stdin/stdout; stderr is captured rather than shown, because while the operator's
 * terminal is in raw mode a relay's diagnostics would land in the middle of the program's screen.
 * Resolves once the process has spawned; rejects with E_RELAY_SPAWN when the program cannot be started.
 */
export function spawnRelay(argv: readonly string[], { env }: { env?: NodeJS.ProcessEnv } = {}): Promise<Exec> {
  const [file, ...args] = argv;
  if (file === undefined) throw new TypeError('relay argv is empty');
  const child: ChildProcess = spawn(file, args, { stdio: ['pipe', 'pipe', 'pipe'], env: env ?? process.env });
  let tail = Buffer.alloc(0);
  child.stderr!.on('data', (b: Buffer) => {
    tail = Buffer.concat([tail, b]);
    if (tail.length > RELAY_STDERR_KEEP_BYTES) tail = tail.subarray(tail.length - RELAY_STDERR_KEEP_BYTES);
  });
  // The capsule may close first; writes after that must not crash jackin with EPIPE.
  child.stdin!.on('error', () => {});
  const exited = new Promise<ExecExit>((resolve) => {
    child.once('close', (code, signal) => resolve({ code, signal }));
  });
  return new Promise((resolve, reject) => {
    child.once('error', (e: NodeJS.ErrnoException) => {
      const hint = e.code === 'ENOENT' ? `${file} is not installed or not on PATH` : (e.code ?? e.message);
      reject(new JackinError('E_RELAY_SPAWN', `cannot start relay \`${formatArgv(argv)}\`: ${hint}`, { cause: e }));
    });
    child.once('spawn', () => {
      let killTimer: NodeJS.Timeout | undefined;
      void exited.then(() => clearTimeout(killTimer));
      resolve({
        argv,
        stdin: child.stdin!,
        stdout: child.stdout!,
        exited,
        stderrTail: () => tail.toString('utf8'),
        terminate() {
          if (child.exitCode !== null || child.signalCode !== null) return;
          child.stdin!.destroy();
          child.kill('SIGTERM');
          killTimer ??= setTimeout(() => child.kill('SIGKILL'), RELAY_KILL_GRACE_MS);
          killTimer.unref();
        },
      });
    });
  });
}

/** The last non-empty line of a text, trimmed, or null. */
function lastLine(text: string): string | null {
  const lines = text.split(/\r?\n/).map((l) => l.trim()).filter((l) => l.length > 0);
  return lines.at(-1) ?? null;
}

/**
 * The usual reasons an engine's exec fails, said plainly with the fix; null for anything else. Matched on
 * docker's, podman's and kubectl's own wording.
 */
export function relayHint(said: string): string | null {
  if (/no such container|no container with name or id|not found: no such container|pods? ".*" not found/i.test(said)) {
    return 'no such container (or pod) is running: check the name (docker ps / podman ps / kubectl get pods)';
  }
  if (/cannot connect to the docker daemon|is the docker daemon running|error during connect/i.test(said)) {
    return 'the docker engine is not reachable: start it, or pass --via podman if podman runs the container';
  }
  if (/is not running|container state improper|can only (create exec sessions on|exec into) running containers/i.test(said)) {
    return 'the container is not running: start it again (jackin run --image, or your engine\'s start)';
  }
  if (/jackin-capsule.*(not found|no such file)|executable file .* not found/i.test(said)) {
    return 'jackin-capsule is not on the container\'s PATH: install it in the image, or start the container with jackin run --image';
  }
  return null;
}

/** Wraps a relay as a Transport. */
export function relayTransport(exec: Exec): Transport {
  return {
    kind: 'relay',
    readable: exec.stdout,
    writable: exec.stdin,
    description: formatArgv(exec.argv),
    close() {
      exec.terminate();
    },
    async failureDetail() {
      const { code, signal } = await exec.exited;
      const status = signal !== null ? `killed by ${signal}` : `exited with status ${code}`;
      const said = lastLine(exec.stderrTail());
      if (said === null) return `relay ${status}`;
      const hint = relayHint(said);
      return hint === null ? `relay ${status}: ${said}` : `${hint} (relay ${status}: ${said})`;
    },
  };
}
