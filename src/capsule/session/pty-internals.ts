/**
 * The node-pty internals the session relies on (node-pty is pinned exactly in package.json), looked up once
 * per PTY, each with a fallback when a newer node-pty no longer has it. `found` reports which were there;
 * pty-internals.test.ts checks the installed node-pty provides every piece and names the one that vanished.
 *
 * - `socket` (UnixTerminal._socket, the tty stream): its write() result is the input backpressure and its
 *   'drain' event the resume; node-pty's public write() drops that result. Fallback: the public write,
 *   unbounded (no backpressure), and no read of the stream's buffer at exit.
 * - `readStop` / `readStart` (the stream's libuv handle): output backpressure that reads nothing while held,
 *   so nothing is buffered and lost when the stream is destroyed at exit. Fallback: the public pause() and
 *   resume() (a paused stream keeps what it read, which can be lost at exit).
 * - `ptsName` (the slave's path): lets the session hold the slave open until the tail of the output was
 *   read. Fallback: no hold (the last KiB of output can be lost under load).
 * - `fd` (the master's descriptor): read synchronously to the end once the program exited, and input
 *   written to it; used only with `socket`, whose state says whether node-pty closed it (openFd).
 *   Fallback: no such read (output still unread when node-pty destroys the stream is lost), input through
 *   the stream or the public write.
 * - `exitHook` (the native binding's `fork`, whose last argument is the exit callback): the session hears of
 *   the program's exit the moment node-pty's own thread has reaped it, before node-pty arms the timer that
 *   destroys the stream (see spawnWithExitHook). Fallback: the session checks for the exit on a timer.
 */
import { createRequire } from 'node:module';
import type { Writable } from 'node:stream';
import { missingPieces, type PieceReport } from './internals-report.ts';

export type PtyPiece = 'socket' | 'readStop' | 'readStart' | 'ptsName' | 'fd' | 'exitHook';

/** The public calls used when a piece is missing. */
export interface PublicPty {
  pause(): void;
  resume(): void;
}

interface Handle {
  reading?: boolean;
  readStop?: () => number;
  readStart?: () => number;
}

type PtyStream = Writable & { _handle?: Handle | null; read?: () => unknown; readableLength?: number };

export class PtyInternals {
  readonly found: PieceReport<PtyPiece>;
  /** The tty stream, when found. */
  readonly stream: PtyStream | undefined;
  readonly ptsName: string | undefined;
  readonly fd: number | undefined;

  readonly #proc: PublicPty;
  constructor(
    proc: PublicPty,
    /** Whether the exit hook was in place when this PTY was spawned (spawnWithExitHook). */
    exitHooked = false,
  ) {
    this.#proc = proc;
    const raw = proc as unknown as { _socket?: unknown; ptsName?: unknown; fd?: unknown };
    const stream = raw._socket as PtyStream | undefined;
    this.stream = stream !== null && typeof stream === 'object' && typeof stream.write === 'function' ? stream : undefined;
    const handle = this.stream?._handle;
    this.ptsName = typeof raw.ptsName === 'string' && raw.ptsName.startsWith('/dev/') ? raw.ptsName : undefined;
    this.fd = typeof raw.fd === 'number' ? raw.fd : undefined;
    this.found = {
      socket: this.stream !== undefined,
      readStop: typeof handle?.readStop === 'function',
      readStart: typeof handle?.readStart === 'function',
      ptsName: this.ptsName !== undefined,
      fd: this.fd !== undefined,
      exitHook: exitHooked,
    };
  }

  /**
   * The master's descriptor while node-pty's tty stream still has it open; undefined from the moment the
   * stream is destroyed. node-pty closes the descriptor only by destroying that stream (EIO after the
   * program's exit, its timer 200 ms after the exit, destroy()), and from then on the number is free: any
   * thread of this process may open a file under it (a /proc table the port watch reads, a staged file).
   * Read, it would pass that file off as the program's output; written, it would get keystrokes. The stream
   * is marked destroyed, and its handle dropped, in the same call on this thread that closes the
   * descriptor, so asked right before each synchronous read or write, the answer cannot be stale.
   */
  get openFd(): number | undefined {
    const stream = this.stream;
    if (this.fd === undefined || stream === undefined || stream.destroyed || stream._handle == null) return undefined;
    return this.fd;
  }

  /** The pieces not found (each falls back as described above). */
  get missing(): PtyPiece[] {
    return missingPieces(this.found);
  }

  /**
   * Stops reading the PTY: at the libuv handle when it has readStop, else the public pause(). Backpressure
   * is applied at the handle, never by pausing the Node stream: a paused stream keeps what it already read
   * in its buffer, and when the program exits the next read hits EIO, node-pty destroys the stream and that
   * buffer is discarded (output lost at exit). With the handle stopped nothing is read, so nothing is
   * buffered, and on release every read is emitted at once. The handle is read from the stream at each
   * call because a destroyed stream drops it (then the public call is used, as when it was never there).
   */
  pause(): void {
    const handle = this.found.readStop ? this.stream?._handle : undefined;
    if (handle && typeof handle.readStop === 'function') {
      if (handle.reading) {
        handle.reading = false;
        handle.readStop();
      }
      return;
    }
    this.#proc.pause();
  }

  /** Reads the PTY again: at the handle when it has readStart (and the stream is alive), else resume(). */
  resume(): void {
    const handle = this.found.readStart ? this.stream?._handle : undefined;
    if (handle && typeof handle.readStart === 'function') {
      if (handle.reading === false && !(this.stream?.destroyed ?? true)) {
        handle.reading = true;
        handle.readStart();
      }
      return;
    }
    this.#proc.resume();
  }

  /** Emits what the stream already read (in paused mode read() emits 'data' for what it returns). */
  drainStreamBuffer(): void {
    const stream = this.stream;
    while (stream?.read && (stream.readableLength ?? 0) > 0 && stream.read() !== null) {
      // emitted through the 'data' listener
    }
  }
}

/** node-pty's native binding as unixTerminal.js calls it: `fork(file, args, env, cwd, cols, rows, uid, gid, utf8, helper, onexit)`. */
interface NativePty {
  fork: (...args: unknown[]) => unknown;
}

/** The exit listener of the spawn in progress, taken by the wrapped fork (spawns are synchronous). */
let pendingExit: (() => void) | null = null;
/** Set by the wrapped fork when it gave the pending listener to the spawn's exit callback. */
let listenerAttached = false;
/** Whether the native fork is wrapped: null until first tried. */
let forkWrapped: boolean | null = null;

/**
 * Wraps node-pty's native `fork` once, so that the exit callback it is given first calls the listener of
 * that spawn. node-pty's callback runs on the main thread right after its waitpid() thread reaped the child,
 * and only then arms the 200 ms timer after which it destroys the PTY stream: the listener runs before it.
 * The binding is the module node-pty itself loaded (the same file resolved from node-pty's own folder, so
 * the same cached exports). False when it cannot be wrapped (another node-pty layout, a frozen binding).
 */
function wrapNativeFork(ptyPackage: string): boolean {
  if (forkWrapped !== null) return forkWrapped;
  forkWrapped = false;
  try {
    const fromPty = createRequire(ptyPackage);
    const native = fromPty(`@lydell/node-pty-${process.platform}-${process.arch}/pty.node`) as NativePty;
    const fork = native.fork;
    if (typeof fork !== 'function') return false;
    native.fork = function wrappedFork(this: unknown, ...args: unknown[]): unknown {
      const listener = pendingExit;
      pendingExit = null;
      const onexit = args[args.length - 1];
      if (listener !== null && typeof onexit === 'function') {
        args[args.length - 1] = function exitFirst(this: unknown, ...exit: unknown[]): void {
          try {
            listener();
          } finally {
            // node-pty's own handling (its stream timer, then the public exit event) always follows.
            (onexit as (...a: unknown[]) => unknown).apply(this, exit);
          }
        };
        listenerAttached = true;
      }
      return fork.apply(this, args);
    };
    forkWrapped = native.fork !== fork;
  } catch {
    forkWrapped = false;
  }
  return forkWrapped;
}

/**
 * Spawns through `spawn` (a node-pty spawn call) with `onChildExit` called as soon as node-pty learns the
 * child was reaped (see wrapNativeFork); `hooked` says whether it will be (else the caller must watch).
 * `ptyPackage` is the path of node-pty's entry (require.resolve('@lydell/node-pty')).
 */
export function spawnWithExitHook<T>(ptyPackage: string, spawn: () => T, onChildExit: () => void): { proc: T; hooked: boolean } {
  const wrapped = process.platform !== 'win32' && wrapNativeFork(ptyPackage);
  pendingExit = wrapped ? onChildExit : null;
  listenerAttached = false;
  try {
    const proc = spawn();
    return { proc, hooked: listenerAttached };
  } finally {
    pendingExit = null;
    listenerAttached = false;
  }
}
