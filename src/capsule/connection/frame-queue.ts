/**
 * The order in which one attach connection handles its frames: strictly one after the other. A step that
 * needs time (preparing a repaint) runs exclusively: later frames wait in the queue behind it and the
 * socket is not read meanwhile. The socket is also not read while the PTY does not take input (input
 * backpressure): the ReadGate pauses it while any reason holds it and resumes it when none does.
 */
import type { Socket } from 'node:net';

/** Why the socket is not read: an exclusive step runs, or the PTY does not drain input. */
export type ReadHold = 'exclusive' | 'input';

export class ReadGate {
  readonly #holds = new Set<ReadHold>();

  readonly #socket: Socket;
  readonly #open: () => boolean;
  constructor(
    socket: Socket,
    /** False once the connection is closed: the socket then stays as it is. */
    open: () => boolean,
  ) {
    this.#socket = socket;
    this.#open = open;
  }

  isHeld(reason: ReadHold): boolean {
    return this.#holds.has(reason);
  }

  hold(reason: ReadHold): void {
    this.#holds.add(reason);
    this.#socket.pause();
  }

  release(reason: ReadHold): void {
    this.#holds.delete(reason);
    if (this.#holds.size === 0 && this.#open()) this.#socket.resume();
  }
}

export class FrameQueue<T> {
  readonly #items: T[] = [];
  #busy = false;

  readonly #gate: ReadGate;
  readonly #handle: (item: T) => void;
  readonly #open: () => boolean;
  readonly #fail: (e: Error) => void;
  constructor(
    gate: ReadGate,
    /** Handles one item (synchronously; it may start an exclusive step). */
    handle: (item: T) => void,
    open: () => boolean,
    /** An exclusive step failed: log and drop the connection. */
    fail: (e: Error) => void,
  ) {
    this.#gate = gate;
    this.#handle = handle;
    this.#open = open;
    this.#fail = fail;
  }

  /** Items received but not handled yet (shutdown reads a queued ExtHello). */
  get queued(): readonly T[] {
    return this.#items;
  }

  push(items: readonly T[]): void {
    this.#items.push(...items);
    this.#pump();
  }

  clear(): void {
    this.#items.length = 0;
  }

  /** Runs an async step with the socket paused and later items queued behind it. */
  runExclusive(step: () => Promise<void>): void {
    this.#busy = true;
    this.#gate.hold('exclusive');
    step()
      .catch((e: unknown) => this.#fail(e as Error))
      .finally(() => {
        this.#busy = false;
        if (!this.#open()) return;
        this.#gate.release('exclusive');
        this.#pump();
      });
  }

  #pump(): void {
    while (!this.#busy && this.#items.length > 0 && this.#open()) this.#handle(this.#items.shift()!);
  }
}
