/**
 * Starting an exec relay's process, with nothing but node:child_process, so bin/jackin.js can start one
 * before it loads the CLI (src/cli/early-relay.ts). exec-relay.ts turns a launched relay into an Exec.
 *
 * Two things are set up at once, because a relay may end before anyone reads it (a container that does
 * not exist fails in a few ms): stderr is kept (bounded) from the first byte, and stdout is held. Node
 * drains a child's stdout once the child exits if no one listens yet, and a session that started reading
 * afterwards would miss the bytes and the end (then waited for a handshake timeout); a held stream keeps
 * both until the first 'data' listener arrives.
 */
import { spawn, type ChildProcess } from 'node:child_process';

/** The relay's stderr is kept (bounded) for the one-line reason shown when the session ends badly. */
const RELAY_STDERR_KEEP_BYTES = 4096;

export interface ExecExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** A relay process as launched: its outcome is observed from the start, nothing is thrown. */
export interface LaunchedRelay {
  readonly argv: readonly string[];
  readonly child: ChildProcess;
  /** null once the process has started; the spawn error (ENOENT: not installed) if it could not. */
  readonly started: Promise<NodeJS.ErrnoException | null>;
  readonly exited: Promise<ExecExit>;
  /** The last bytes it wrote on stderr, as text. */
  stderrTail(): string;
}

/** Keeps a readable's bytes and its end until something listens for 'data' (see the module comment). */
function holdUntilRead(stream: NodeJS.ReadableStream & { off(event: string, f: (...a: unknown[]) => void): unknown }): void {
  const hold = (): void => {};
  const release = (event: string | symbol): void => {
    if (event !== 'data') return;
    stream.off('newListener', release as (...a: unknown[]) => void);
    stream.off('readable', hold);
  };
  // A 'readable' listener keeps the stream out of flowing mode, so the resume() Node calls at exit reads nothing.
  stream.on('readable', hold);
  stream.on('newListener', release);
}

/** A relay spawned with piped stdin, stdout and stderr; its stderr is kept (bounded) from the first byte. */
class SpawnedRelay implements LaunchedRelay {
  readonly argv: readonly string[];
  readonly child: ChildProcess;
  readonly started: Promise<NodeJS.ErrnoException | null>;
  readonly exited: Promise<ExecExit>;
  #tail = Buffer.alloc(0);

  constructor(argv: readonly string[], env: NodeJS.ProcessEnv) {
    const [file, ...args] = argv;
    if (file === undefined) throw new TypeError('relay argv is empty');
    const child = spawn(file, args, { stdio: ['pipe', 'pipe', 'pipe'], env });
    this.argv = argv;
    this.child = child;
    child.stderr!.on('data', (b: Buffer) => {
      this.#tail = Buffer.concat([this.#tail, b]);
      if (this.#tail.length > RELAY_STDERR_KEEP_BYTES) this.#tail = this.#tail.subarray(this.#tail.length - RELAY_STDERR_KEEP_BYTES);
    });
    // The capsule may close first; writes after that must not crash jackin with EPIPE.
    child.stdin!.on('error', () => {});
    holdUntilRead(child.stdout!);
    this.started = new Promise<NodeJS.ErrnoException | null>((resolve) => {
      // Kept (not once): an 'error' with no listener would throw; after the start it changes nothing here.
      child.on('error', (e: NodeJS.ErrnoException) => resolve(e));
      child.once('spawn', () => resolve(null));
    });
    this.exited = new Promise<ExecExit>((resolve) => {
      child.once('close', (code, signal) => resolve({ code, signal }));
    });
  }

  stderrTail(): string {
    return this.#tail.toString('utf8');
  }
}

/** Spawns `argv` with piped stdin, stdout and stderr. */
export function launchRelay(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): LaunchedRelay {
  return new SpawnedRelay(argv, env);
}
