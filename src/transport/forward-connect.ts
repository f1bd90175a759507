/**
 * The host's side of one forwarded TCP connection (docs/protocol.md section 8.15): a fresh connection to the
 * capsule (socket or exec relay), the `forward` request naming the port, the capsule's reply (which of the
 * container's loopbacks it reached), then the byte pump until both ways end.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Socket } from 'node:net';
import { hasCode, JackinError } from '../errors.ts';
import { encodeControlRequest, FORWARD_METHOD, FORWARD_PROBE, readControlReply, type ForwardLoopback } from '../protocol/index.ts';
import { ReplyReader } from './control-call.ts';
import { pumpForward, resetOrDestroy, type ForwardOutcome } from './forward-pump.ts';
import type { Transport } from './transport.ts';

/** The capsule tries 127.0.0.1 then ::1, 5 s each; its reply comes within that, or it is wedged. */
const FORWARD_REPLY_TIMEOUT_MS = 12_000;

/**
 * Sends the `forward` request on `t` and waits for the reply. Resolves with the loopback the capsule
 * reached and the bytes read past the reply; rejects with the capsule's code (E_FORWARD_REFUSED,
 * E_FORWARD_TIMEOUT, E_FORWARD_LIMIT), E_FORWARD_UNSUPPORTED for a capsule without forwards,
 * E_FORWARD_PROTOCOL for one that answers wrong, E_FORWARD_TIMEOUT / E_FORWARD_RESET for no answer.
 */
function requestForward(t: Transport, port: number, timeoutMs = FORWARD_REPLY_TIMEOUT_MS): Promise<{ address: ForwardLoopback; rest: Buffer }> {
  return new Promise((resolve, reject) => {
    const reader = new ReplyReader();
    const done = (e: Error | null, v?: { address: ForwardLoopback; rest: Buffer }): void => {
      clearTimeout(timer);
      t.readable.off('data', onData);
      t.readable.off('end', onEnd);
      t.readable.off('error', onEnd);
      if (e !== null) reject(e);
      else resolve(v!);
    };
    const timer = setTimeout(
      () => done(new JackinError('E_FORWARD_TIMEOUT', `the capsule did not answer the forward of port ${port} within ${timeoutMs} ms`)),
      timeoutMs,
    );
    const onData = (chunk: Buffer): void => {
      let got;
      try {
        got = reader.push(chunk);
        if (got === undefined) return;
        // A reply that names anything but a loopback address is E_CONTROL_REPLY, made E_FORWARD_PROTOCOL below.
        const { address } = readControlReply(FORWARD_METHOD, got.value);
        // Nothing else may be read before the pump listens: pause, and hand over what came with the reply.
        t.readable.pause();
        done(null, { address, rest: got.rest });
      } catch (e) {
        const unsupported = e instanceof JackinError && e.code === 'E_UNKNOWN_METHOD';
        done(
          unsupported
            ? new JackinError('E_FORWARD_UNSUPPORTED', 'this capsule has no forwards (an older jackin-capsule); update it in the container', { cause: e })
            : e instanceof JackinError && e.code === 'E_CONTROL_REPLY'
              ? new JackinError('E_FORWARD_PROTOCOL', e.message, { cause: e })
              : (e as Error),
        );
      }
    };
    // Our capsule always answers; one that is busy (its limit of connections in handshake) or going away
    // closes first. A capsule without forwards answers E_UNKNOWN_METHOD, above.
    const onEnd = (): void => done(new JackinError('E_FORWARD_RESET', `the capsule closed the connection without answering the forward of port ${port}`));
    t.readable.on('data', onData);
    t.readable.on('end', onEnd);
    t.readable.on('error', onEnd);
    t.writable.write(encodeControlRequest(FORWARD_METHOD, { port }));
  });
}

/** Tries of one forwarded connection whose capsule closed it unanswered (busy), and the growing pause between them. */
const BUSY_RETRIES = 8;
const BUSY_RETRY_STEP_MS = 25;

export interface ForwardConnectionOptions {
  /** Opens a new connection to the capsule (never the attach connection). */
  readonly connect: () => Promise<Transport>;
  /** The container port. */
  readonly port: number;
  /** Told which loopback the capsule reached, once it did. */
  readonly onConnected?: (address: ForwardLoopback) => void;
  readonly onBytes?: (direction: 'sent' | 'received', bytes: number) => void;
}

/**
 * Forwards one accepted TCP connection (`local`, allowHalfOpen) to the container's loopback. Resolves with
 * the pump's outcome, or rejects with why the forward could not start (then `local` is destroyed).
 */
export async function forwardConnection(local: Socket, o: ForwardConnectionOptions): Promise<ForwardOutcome> {
  // Bytes the browser sends while the capsule connects wait in the socket, unread.
  local.pause();
  let t: Transport | undefined;
  try {
    let answered: { carrier: Transport; reply: Awaited<ReturnType<typeof requestForward>> } | undefined;
    // A capsule takes a few connections in handshake at once and closes the others before reading them: a
    // burst (a page opening many connections) tries again, a little later each time, before giving up.
    for (let attempt = 1; answered === undefined; attempt++) {
      const attemptT = await o.connect();
      t = attemptT;
      try {
        answered = { carrier: attemptT, reply: await requestForward(attemptT, o.port) };
      } catch (e) {
        attemptT.close();
        t = undefined;
        if (!(e instanceof JackinError && e.code === 'E_FORWARD_RESET') || attempt >= BUSY_RETRIES || local.destroyed) throw e;
        await sleep(BUSY_RETRY_STEP_MS * attempt);
      }
    }
    t = answered.carrier;
    const { address, rest } = answered.reply;
    o.onConnected?.(address);
    const outcome = pumpForward({ side: 'client', local, peer: t, initial: rest, ...(o.onBytes !== undefined ? { onBytes: o.onBytes } : {}) });
    local.resume();
    t.readable.resume();
    const result = await outcome;
    // A clean end: the capsule closes once it has our ForwardEnd; a relay is let go once its output ended.
    if (!result.ok || t.readable.readableEnded) t.close();
    else {
      const carrier = t;
      const timer = setTimeout(() => carrier.close(), 5_000).unref();
      carrier.readable.once('end', () => {
        clearTimeout(timer);
        carrier.close();
      });
      carrier.readable.resume();
    }
    return result;
  } catch (e) {
    t?.close();
    resetOrDestroy(local);
    throw e;
  }
}

/**
 * Whether the capsule has forwards, without connecting anywhere: a `forward` request without a port is
 * E_BAD_REQUEST from a capsule that has the method, E_UNKNOWN_METHOD (or no answer) from one that does not.
 */
export async function capsuleHasForwards(connect: () => Promise<Transport>, timeoutMs = FORWARD_REPLY_TIMEOUT_MS): Promise<boolean> {
  const t = await connect();
  try {
    return await new Promise<boolean>((resolve) => {
      const reader = new ReplyReader();
      const timer = setTimeout(() => resolve(false), timeoutMs);
      const done = (v: boolean): void => {
        clearTimeout(timer);
        resolve(v);
      };
      t.readable.on('data', (chunk: Buffer) => {
        try {
          const got = reader.push(chunk);
          if (got === undefined) return;
          readControlReply(FORWARD_PROBE, got.value);
          done(false);
        } catch (e) {
          done(hasCode(e, 'E_BAD_REQUEST'));
        }
      });
      t.readable.once('end', () => done(false));
      t.readable.once('error', () => done(false));
      t.writable.write(encodeControlRequest(FORWARD_PROBE, {}));
    });
  } finally {
    t.close();
  }
}
