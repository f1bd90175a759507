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
 * - `fd` (the master's descriptor): read synchronously to the end once the program exited. Fallback: no
 *   such read (output still unread when node-pty destroys the stream is lost).
 */
import type { Writable } from 'node:stream';
import { missingPieces, type PieceReport } from './internals-report.ts';

export type PtyPiece = 'socket' | 'readStop' | 'readStart' | 'ptsName' | 'fd';

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

  constructor(private readonly proc: PublicPty) {
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
    };
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
    this.proc.pause();
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
    this.proc.resume();
  }

  /** Emits what the stream already read (in paused mode read() emits 'data' for what it returns). */
  drainStreamBuffer(): void {
    const stream = this.stream;
    while (stream?.read && (stream.readableLength ?? 0) > 0 && stream.read() !== null) {
      // emitted through the 'data' listener
    }
  }
}
