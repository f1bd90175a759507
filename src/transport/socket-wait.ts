/**
 * Waiting for a capsule's socket that is about to appear: `jackin run` (a local capsule it started),
 * `jackin run --image` (a container it started) and `jackin attach` (a container started a moment ago).
 */
import type { Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { JackinError } from '../errors.ts';
import type { OnRead } from './borrowed-reads.ts';
import { connectSocket } from './socket.ts';

export interface SocketWait {
  /** How long to keep trying; then `timedOut` says why waiting stopped. */
  readonly timeoutMs: number;
  /** The pause between two tries. */
  readonly pollMs: number;
  /**
   * A try the socket refused (E_SOCKET_UNAVAILABLE: not there yet, nothing listening, a permission refusal).
   * Throws to stop waiting when the refusal is not one that time mends; returns to try again.
   */
  readonly refused?: (e: JackinError) => void;
  /** After each refused try: throws when waiting is pointless (the capsule's process or container ended). */
  readonly check?: () => void | Promise<void>;
  /** The error once `timeoutMs` have passed, given the last refusal. */
  readonly timedOut: (last: JackinError) => Error;
}

/**
 * Connects to the socket at `path`, trying every `pollMs` until it accepts. Any error of a try other than
 * E_SOCKET_UNAVAILABLE is thrown at once; see SocketWait for the rest.
 */
export async function waitForSocket(path: string, wait: SocketWait, onread?: OnRead): Promise<Socket> {
  const deadline = Date.now() + wait.timeoutMs;
  for (;;) {
    let last: JackinError;
    try {
      return await connectSocket(path, onread !== undefined ? { onread } : {});
    } catch (e) {
      if (!(e instanceof JackinError) || e.code !== 'E_SOCKET_UNAVAILABLE') throw e;
      wait.refused?.(e);
      last = e;
    }
    await wait.check?.();
    if (Date.now() > deadline) throw wait.timedOut(last);
    await sleep(wait.pollMs);
  }
}
