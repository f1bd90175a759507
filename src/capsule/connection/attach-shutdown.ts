/**
 * How one attach connection ends when the program exits, a host detaches or another host takes over, as
 * one explicit state machine:
 *
 *   running --request, host not welcomed yet--> awaiting-welcome --welcomed--> running (request again)
 *   running --request, exit status for a host whose ExtHello is not in yet--> awaiting-ext-hello
 *   running --request otherwise--> finished
 *   awaiting-welcome --HELLO_GRACE_MS--> finished;  awaiting-ext-hello --ExtHello or EXT_HELLO_GRACE_MS--> finished
 *
 * A host that connected but is not welcomed yet (its Hello is on the way, or the attach is settling) would
 * otherwise be cut off with nothing: it gets HELLO_GRACE_MS to be welcomed, and then the status. A host
 * answers Welcome with ExtHello, and a program that exits at once can end between the two: an ExtHello
 * already received but still queued counts, and one not yet received is waited for up to
 * EXT_HELLO_GRACE_MS, so the exit status still reaches the host (an upstream host, which sends none, gets
 * Shutdown after that grace). `finished` hands over to the target, which sends ExitStatus (when
 * negotiated) and Shutdown and ends the socket.
 */
import { toDisposable, type Disposable } from '../../disposable.ts';
import type { AttachPhase } from './attach-handshake.ts';

/** How long a shutdown waits for a connected host to finish its Hello and be welcomed. */
export const HELLO_GRACE_MS = 1000;
/**
 * How long a capsule whose program ended before any host reached it keeps waiting for the host that started
 * it (`jackin run` of a program that exits at once), so the exit status still reaches that host. A second
 * was too short on a loaded machine: the host, still starting up, connected after it and was told nothing.
 */
export const FIRST_HOST_WAIT_MS = 10_000;
/** How long a shutdown waits for the ExtHello of a host that was just welcomed. */
export const EXT_HELLO_GRACE_MS = 300;
/** After Shutdown and end(), a peer that never reads is cut off after this long. */
export const CLOSE_GRACE_MS = 2000;

/**
 * The one place the HELLO_GRACE_MS clock starts: for a connection that is not welcomed yet (here), and for
 * a socket that has not sent its first byte when the program ends (CapsuleServer.shutdown).
 */
export function startHelloGrace(expired: () => void): Disposable {
  const timer = setTimeout(expired, HELLO_GRACE_MS);
  return toDisposable(() => clearTimeout(timer));
}

export interface ShutdownTarget {
  readonly phase: AttachPhase;
  readonly socketOpen: boolean;
  /** The capsule offers `exit-status`. */
  readonly offersExitStatus: boolean;
  /** Takes an ExtHello still in the queue into account; true when the host's ExtHello is known. */
  takeQueuedExtHello(): boolean;
  /** Sends ExitStatus (when negotiated) and Shutdown to a host past Hello, and ends the socket. */
  finish(reason: string | null, exitStatus: number | null): void;
}

interface Request {
  reason: string | null;
  exitStatus: number | null;
}

export type ShutdownState = { name: 'running' } | ({ name: 'awaiting-welcome' | 'awaiting-ext-hello'; timer: Disposable } & Request) | { name: 'finished' };

export class AttachShutdown implements Disposable {
  #state: ShutdownState = { name: 'running' };

  readonly #target: ShutdownTarget;
  constructor(target: ShutdownTarget) {
    this.#target = target;
  }

  get name(): ShutdownState['name'] {
    return this.#state.name;
  }

  request(reason: string | null, exitStatus: number | null): void {
    const { phase, socketOpen } = this.#target;
    if (this.#state.name !== 'running' || phase === 'closed') return;
    if ((phase === 'handshake' || phase === 'attaching') && socketOpen) {
      this.#state = { name: 'awaiting-welcome', reason, exitStatus, timer: startHelloGrace(() => this.#finish(reason, exitStatus)) };
      return;
    }
    const extHelloKnown = this.#target.takeQueuedExtHello();
    if (phase === 'attached' && !extHelloKnown && exitStatus !== null && this.#target.offersExitStatus && socketOpen) {
      const timer = setTimeout(() => this.#finish(reason, exitStatus), EXT_HELLO_GRACE_MS);
      this.#state = { name: 'awaiting-ext-hello', reason, exitStatus, timer: toDisposable(() => clearTimeout(timer)) };
      return;
    }
    this.#finish(reason, exitStatus);
  }

  /** The host was welcomed: a shutdown that waited for it goes on. */
  welcomed(): void {
    if (this.#state.name !== 'awaiting-welcome') return;
    const { reason, exitStatus, timer } = this.#state;
    timer.dispose();
    this.#state = { name: 'running' };
    this.request(reason, exitStatus);
  }

  /** While waiting for ExtHello, every other frame is dropped (the program is gone). */
  get awaitingExtHello(): boolean {
    return this.#state.name === 'awaiting-ext-hello';
  }

  /** ExtHello arrived (and was noted): true when it ended the wait for it. */
  extHelloArrived(): boolean {
    if (this.#state.name !== 'awaiting-ext-hello') return false;
    this.#finish(this.#state.reason, this.#state.exitStatus);
    return true;
  }

  /** Stops a pending clock (the connection closed some other way). */
  dispose(): void {
    if (this.#state.name === 'awaiting-welcome' || this.#state.name === 'awaiting-ext-hello') this.#state.timer.dispose();
    this.#state = { name: 'finished' };
  }

  #finish(reason: string | null, exitStatus: number | null): void {
    this.dispose();
    this.#target.finish(reason, exitStatus);
  }
}
