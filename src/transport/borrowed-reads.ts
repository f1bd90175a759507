/**
 * A bulk connection (an export) read into one buffer lent to the socket (net.connect's `onread`) instead of
 * a fresh 64 KiB buffer per read: a 1 GiB export otherwise left 16,384 read buffers to the garbage
 * collector, and the reads' stream machinery was about a fifth of the reader's CPU. Measured on Node 24
 * reading 1 GiB from a Unix socket into 1 MiB assemblies and SHA-256: 1.05-1.38 s of CPU and 91-93 MiB peak
 * RSS through `for await`, 1.15-1.21 s and 130 MiB through 'data' events, 0.82-0.98 s and 59 MiB through
 * `onread` (bench/RESULTS.md). Each read is a view of the one buffer, valid until the reader asks for the next one:
 * the socket is paused after every read and resumed by that ask, so a reader that copies what it keeps
 * (FrameDecoder's copyInput) sees every byte once, and backpressure is the reader's pace, as with `for await`.
 */
import type { Readable } from 'node:stream';

/** Largest read: a Unix socket's queue rarely holds more (its default send buffer is about 208 KiB). */
export const BORROWED_READ_BYTES = 256 * 1024;

/** What connect() passes as net.connect's `onread`. */
export interface OnRead {
  readonly buffer: Buffer;
  readonly callback: (bytes: number, buffer: Buffer) => boolean;
}

export class BorrowedReads {
  #pending: Buffer | undefined;
  #wake: (() => void) | undefined;
  #started = false;

  /** For net.connect: every read is held (the socket paused) until chunks() asks for the next one. */
  readonly onread: OnRead = {
    buffer: Buffer.allocUnsafeSlow(BORROWED_READ_BYTES),
    callback: (bytes, buffer) => {
      this.#pending = buffer.subarray(0, bytes);
      this.#wake?.();
      return false;
    },
  };

  /**
   * The reads of `socket` (connected with this.onread) in order, each a view of the lent buffer valid until
   * the next is asked for; ends at the socket's end or close, throws its error.
   */
  async *chunks(socket: Readable): AsyncGenerator<Buffer, void, undefined> {
    if (this.#started) throw new Error('BorrowedReads.chunks() may run only once');
    this.#started = true;
    let ended = socket.readableEnded || socket.destroyed;
    let failed: Error | undefined;
    const onEnd = (): void => {
      ended = true;
      this.#wake?.();
    };
    const onError = (e: Error): void => {
      failed ??= e;
      this.#wake?.();
    };
    socket.on('end', onEnd);
    socket.on('close', onEnd);
    socket.on('error', onError);
    try {
      for (;;) {
        if (this.#pending === undefined && !ended && failed === undefined) {
          await new Promise<void>((resolve) => {
            this.#wake = resolve;
            socket.resume();
          });
          this.#wake = undefined;
        }
        const read = this.#pending;
        if (read !== undefined) {
          this.#pending = undefined;
          yield read;
          continue;
        }
        if (failed !== undefined) throw failed;
        return;
      }
    } finally {
      socket.off('end', onEnd);
      socket.off('close', onEnd);
      socket.off('error', onError);
    }
  }
}
