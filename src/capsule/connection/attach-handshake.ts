/**
 * Where one attach connection stands, as one explicit state machine (protocol.md section 6):
 *
 *   handshake --Hello--> attaching --Welcome and repaint sent--> attached
 *        \___________________\_______________________________\__--> closed
 *
 * `handshake`: no frame handled yet; the first must be Hello. `attaching`: the Hello was taken, the PTY is
 * held and the Welcome and repaint are being prepared (frames wait in the queue). `attached`: output flows.
 * `closed`: nothing more is sent or handled. What the host announced with ExtHello (or that it announced
 * nothing yet) is kept here too: it decides which extension frames the host gets.
 */
import type { Features } from '../../protocol/index.ts';

export type AttachPhase = 'handshake' | 'attaching' | 'attached' | 'closed';

const NEXT: Readonly<Record<AttachPhase, readonly AttachPhase[]>> = {
  handshake: ['attaching', 'closed'],
  attaching: ['attached', 'closed'],
  attached: ['closed'],
  closed: ['closed'],
};

export class AttachHandshake {
  #current: AttachPhase = 'handshake';
  /** What ExtHello announced; null until one arrived. */
  #hostFeatures: Features | null = null;

  get phase(): AttachPhase {
    return this.#current;
  }

  /** Hello taken (attaching) or welcomed (attached). */
  get attached(): boolean {
    return this.#current === 'attaching' || this.#current === 'attached';
  }

  /** Output, notices and extension frames flow only now. */
  get live(): boolean {
    return this.#current === 'attached';
  }

  get closed(): boolean {
    return this.#current === 'closed';
  }

  /** Moves to `next`; a move the diagram above does not have is a bug in the caller. */
  to(next: AttachPhase): void {
    if (!NEXT[this.#current].includes(next)) throw new Error(`attach connection: no transition from ${this.#current} to ${next}`);
    this.#current = next;
  }

  /** The features of the host's ExtHello ({} before one arrived). */
  get negotiated(): Features {
    return this.#hostFeatures ?? {};
  }

  get extHelloSeen(): boolean {
    return this.#hostFeatures !== null;
  }

  extHello(features: Features): void {
    this.#hostFeatures = { ...features };
  }

  /** The host announced `feature` in its ExtHello. */
  hostHas(feature: string): boolean {
    return this.#hostFeatures?.[feature] !== undefined;
  }
}
