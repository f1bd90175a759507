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
 * - `userBuffer` (the handle's useUserBuffer(), its onread callback and its bytesRead count, what Node's own
 *   net.Socket `onread` option is built on): every read lands in a slab after the previous one and goes to
 *   the session as a view, with no buffer allocated and no stream event per read. Fallback: the stream's
 *   'data' events.
 */
import type { Writable } from 'node:stream';
import { toDisposable, type Disposable } from '../disposable.ts';
import { missingPieces, type PieceReport } from './internals-report.ts';

export type PtyPiece = 'socket' | 'readStop' | 'readStart' | 'ptsName' | 'fd' | 'userBuffer';

/**
 * PTY reads land one after another in slabs of this size; a new slab is taken once less than
 * READ_MIN_ROOM is left (a PTY hands over about 4 KiB per read; 64 KiB is what Node lends a stream read).
 * A slab is never written again: the views handed out keep it alive until their consumers drop them.
 */
export const READ_SLAB_BYTES = 256 * 1024;
export const READ_MIN_ROOM = 64 * 1024;

/** The public calls used when a piece is missing. */
export interface PublicPty {
  pause(): void;
  resume(): void;
}

interface Handle {
  reading?: boolean;
  readStop?: () => number;
  readStart?: () => number;
  useUserBuffer?: (buffer: Uint8Array) => void;
  onread?: unknown;
  bytesRead?: unknown;
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
      userBuffer: typeof handle?.useUserBuffer === 'function' && typeof handle.onread === 'function' && typeof handle.bytesRead === 'number',
    };
  }

  /**
   * Delivers every read of the PTY to `onChunk` as a view into a slab (READ_SLAB_BYTES), straight from the
   * stream's libuv handle, instead of as 'data' events: Node allocates a 64 KiB buffer for each read and
   * shrinks it, then pushes it through the stream, for the 4 KiB a PTY read brings (measured on `cat` of
   * 64 MiB: about a sixth of the capsule's user CPU). The handle reads into the slab's free part, which the
   * callback hands back for the next read; the read's length is the growth of the handle's bytesRead.
   * A read that brings nothing (the end, an error) goes to Node's own callback, which ends or destroys the
   * stream as before, so node-pty still sees the PTY close. Once the result is disposed, reads are dropped
   * (as a stream's are once its 'data' listener is gone). Returns undefined, changing nothing, when a piece is
   * missing: then the caller listens for 'data'.
   */
  readIntoSlabs(onChunk: (chunk: Buffer) => void): Disposable | undefined {
    const handle = this.found.userBuffer ? this.stream?._handle : undefined;
    if (!handle || typeof handle.useUserBuffer !== 'function' || typeof handle.onread !== 'function') return undefined;
    let delivering = true;
    const nodeOnRead = handle.onread as (this: unknown, ...args: unknown[]) => unknown;
    let slab = Buffer.allocUnsafeSlow(READ_SLAB_BYTES);
    let used = 0;
    let seen = handle.bytesRead as number;
    handle.useUserBuffer(slab);
    handle.onread = function onPtyRead(this: unknown, ...args: unknown[]): unknown {
      const total = handle.bytesRead as number;
      const length = total - seen;
      seen = total;
      if (!(length > 0)) return nodeOnRead.apply(this, args);
      const chunk = slab.subarray(used, used + length);
      used += length;
      if (slab.length - used < READ_MIN_ROOM) {
        slab = Buffer.allocUnsafeSlow(READ_SLAB_BYTES);
        used = 0;
      }
      // The free part is returned whatever onChunk does: a throw here would leave the handle reading over
      // the chunk just handed out. The error still ends up uncaught, as from a 'data' listener.
      try {
        if (delivering) onChunk(chunk);
      } catch (e) {
        process.nextTick(() => {
          throw e;
        });
      }
      return slab.subarray(used);
    };
    return toDisposable(() => (delivering = false));
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
