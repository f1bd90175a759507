/**
 * PTY output on its way to one attached host: gathered into frames during a flood, split into frames of
 * at most MAX_OUTPUT_FRAME_BYTES, and the PTY held while the socket is not draining.
 *
 * A small read goes out at once (a keystroke's echo, a line of output: never delayed). A large read means
 * the program writes faster than the PTY is read, a flood: then reads are gathered for up to
 * OUTPUT_COALESCE_MS or OUTPUT_COALESCE_BYTES into one frame. The PTY hands over about 4 KiB per read, and
 * one socket write per read woke the host for every 4 KiB: the two processes then spent their time waking
 * each other (measured: the capsule alone relays 65 MiB/s, the host alone 58, the two together 28). The
 * connection flushes what is pending before any other frame, so nothing overtakes output.
 */
import type { Disposable } from '../../disposable.ts';

/** Largest Output frame we send: keeps a repaint from delaying a keystroke's echo behind one huge write. */
export const MAX_OUTPUT_FRAME_BYTES = 256 * 1024;
/** Output gathering during a flood: at most this long, at most this many bytes. */
export const OUTPUT_COALESCE_MS = 4;
export const OUTPUT_COALESCE_BYTES = 256 * 1024;
/** A PTY read at least this large starts gathering; a smaller one is sent at once. */
export const OUTPUT_FLOOD_READ_BYTES = 2048;

/** Calls `write` with consecutive slices of `bytes` of at most MAX_OUTPUT_FRAME_BYTES; returns the last result. */
export function forEachOutputFrame(bytes: Buffer, write: (slice: Buffer) => boolean): boolean {
  let ok = true;
  for (let off = 0; off < bytes.length; off += MAX_OUTPUT_FRAME_BYTES) ok = write(bytes.subarray(off, off + MAX_OUTPUT_FRAME_BYTES));
  return ok;
}

export interface CoalescerTarget {
  /**
   * Writes one Output frame whose payload is `bytes`, or the parts of `bytes` one after the other (at most
   * MAX_OUTPUT_FRAME_BYTES in all: gathered reads go into the frame with one copy, not two); false when the
   * socket asks the writer to wait for 'drain'.
   */
  writeOutput(bytes: Buffer | readonly Buffer[]): boolean;
  /** Calls `fn` once on the socket's next 'drain'; the Disposable cancels that. */
  onceDrain(fn: () => void): Disposable;
  /** Holds / releases the PTY's output (Session.hold/release under one name). */
  holdPty(): void;
  releasePty(): void;
  /** Output went out (the capsule's own notice overlay redraws after it). */
  afterFlush(): void;
  /** False once the connection no longer relays output (a drain hold is then not taken). */
  relaying(): boolean;
}

export class OutputCoalescer implements Disposable {
  #pending: Buffer[] = [];
  #pendingBytes = 0;
  #timer: NodeJS.Timeout | null = null;
  /** Set while the PTY is held until the socket drains. */
  #drainWait: Disposable | null = null;

  readonly #target: CoalescerTarget;
  constructor(target: CoalescerTarget) {
    this.#target = target;
  }

  get hasPending(): boolean {
    return this.#pending.length > 0;
  }

  push(chunk: Buffer): void {
    // What is gathered goes out before a read that would take it past one frame: flushing only once
    // OUTPUT_COALESCE_BYTES were reached left a few KiB over MAX_OUTPUT_FRAME_BYTES, and the two frames
    // that made cost a copy of the whole batch (Buffer.concat) on top of the frame's own.
    if (this.#pendingBytes > 0 && this.#pendingBytes + chunk.length > MAX_OUTPUT_FRAME_BYTES) this.flush();
    this.#pending.push(chunk);
    this.#pendingBytes += chunk.length;
    if (this.#pendingBytes >= OUTPUT_COALESCE_BYTES) {
      this.flush();
      return;
    }
    if (this.#timer !== null) return;
    if (chunk.length < OUTPUT_FLOOD_READ_BYTES) {
      this.flush();
      return;
    }
    this.#timer = setTimeout(() => this.flush(), OUTPUT_COALESCE_MS);
  }

  flush(): void {
    this.#clearTimer();
    if (this.#pending.length === 0) return;
    const parts = this.#pending;
    const total = this.#pendingBytes;
    this.#pending = [];
    this.#pendingBytes = 0;
    const ok =
      total <= MAX_OUTPUT_FRAME_BYTES
        ? this.#target.writeOutput(parts.length === 1 ? parts[0]! : parts)
        : forEachOutputFrame(Buffer.concat(parts, total), (slice) => this.#target.writeOutput(slice));
    this.#target.afterFlush();
    if (!ok && this.#drainWait === null && this.#target.relaying()) {
      this.#target.holdPty();
      this.#drainWait = this.#target.onceDrain(() => this.#releaseDrainHold());
    }
  }

  /** Drops pending output and any drain hold (the connection stopped relaying). */
  dispose(): void {
    this.#clearTimer();
    this.#pending = [];
    this.#pendingBytes = 0;
    this.#releaseDrainHold();
  }

  #releaseDrainHold(): void {
    if (this.#drainWait === null) return;
    this.#drainWait.dispose();
    this.#drainWait = null;
    this.#target.releasePty();
  }

  #clearTimer(): void {
    if (this.#timer === null) return;
    clearTimeout(this.#timer);
    this.#timer = null;
  }
}
