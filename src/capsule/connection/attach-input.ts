/**
 * Input from the attached host to the program, with backpressure: when the PTY does not take more (the
 * program is not reading), this connection's socket is not read until the PTY drains, so a host that
 * types or pastes faster than the program reads is slowed down instead of buffered without bound.
 */
import type { Disposable } from '../../disposable.ts';
import type { ReadGate } from './frame-queue.ts';

/** What input needs of the program's session. */
export interface InputTarget {
  write(bytes: Buffer): boolean;
  onDrain(listener: () => void): Disposable;
  readonly modes: { focusReporting: boolean };
}

export class AttachInput implements Disposable {
  #drainSub: Disposable | null = null;

  readonly #session: InputTarget;
  readonly #gate: ReadGate;
  constructor(session: InputTarget, gate: ReadGate) {
    this.#session = session;
    this.#gate = gate;
  }

  write(bytes: Buffer): void {
    if (this.#session.write(bytes) || this.#gate.isHeld('input')) return;
    this.#gate.hold('input');
    this.#drainSub = this.#session.onDrain(() => {
      this.#drainSub?.dispose();
      this.#drainSub = null;
      this.#gate.release('input');
    });
  }

  /** FocusIn/FocusOut, passed on only when the program asked for focus reports (?1004h). */
  focus(focusIn: boolean): void {
    if (!this.#session.modes.focusReporting) return;
    this.#session.write(Buffer.from(focusIn ? '\x1b[I' : '\x1b[O', 'latin1'));
  }

  dispose(): void {
    this.#drainSub?.dispose();
    this.#drainSub = null;
  }
}
