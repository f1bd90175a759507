/**
 * Tells the capsule which host ports lead to its container (docs/protocol.md section 8.18), so that
 * `jackin-capsule ports` in the container lists them as host URLs: an `announce-forwards` request on a
 * connection of its own, held open for the forwards' life. Closing it (dispose(), or this process dying)
 * is what takes them off the list; nothing is sent or timed while it stays open, so a forward that waits
 * costs neither side a wake-up.
 *
 * Used by `jackin forward`, by login forwards, and by any later forward: announceForwards(connect, ...).
 */
import type { Disposable } from '../../disposable.ts';
import { JackinError } from '../../errors.ts';
import { ANNOUNCE_FORWARDS_METHOD, encodeControlRequest, type ListedForward, MAX_ANNOUNCED_FORWARDS, readControlReply } from '../../protocol/index.ts';
import { ReplyReader } from '../../transport/control-call.ts';
import type { Transport } from '../../transport/transport.ts';

/** Our capsule answers an announcement at once; one that does not within this is not listing anything. */
const ANNOUNCE_REPLY_TIMEOUT_MS = 5_000;

/**
 * How the announcement went: listed, or why not. `unsupported`: the capsule has no such method (an older or
 * upstream capsule), which is no fault and is said nowhere.
 */
export type AnnounceOutcome = { readonly listed: true } | { readonly listed: false; readonly unsupported: boolean; readonly error: JackinError };

function asJackinError(e: unknown): JackinError {
  return e instanceof JackinError ? e : new JackinError('E_CONTROL_REPLY', e instanceof Error ? e.message : String(e));
}

/** Sends one announcement on `t`; resolves once the capsule answered (the connection then stays open). */
function announceOn(t: Transport, forwards: readonly ListedForward[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const reader = new ReplyReader();
    const done = (e: unknown): void => {
      clearTimeout(timer);
      t.readable.off('data', onData);
      t.readable.off('end', onEnd);
      if (e === null) resolve();
      else reject(asJackinError(e));
    };
    const timer = setTimeout(
      () => done(new JackinError('E_CONTROL_TIMEOUT', `the capsule did not answer announce-forwards within ${ANNOUNCE_REPLY_TIMEOUT_MS} ms`)),
      ANNOUNCE_REPLY_TIMEOUT_MS,
    );
    const onData = (chunk: Buffer): void => {
      try {
        const got = reader.push(chunk);
        if (got === undefined) return;
        readControlReply(ANNOUNCE_FORWARDS_METHOD, got.value);
        done(null);
      } catch (e) {
        done(e);
      }
    };
    const onEnd = (): void => done(new JackinError('E_CONTROL_REPLY', 'the capsule closed the connection without answering announce-forwards'));
    t.readable.on('data', onData);
    t.readable.on('end', onEnd);
    // A relay whose stream errors also ends; what the error says is not needed here.
    t.readable.on('error', () => {});
    t.writable.on('error', () => {});
    t.writable.write(encodeControlRequest(ANNOUNCE_FORWARDS_METHOD, { forwards }));
  });
}

/** Live forwards announced to one capsule, listed there until dispose(). */
export class ForwardAnnouncement implements Disposable {
  readonly #transports: Transport[] = [];
  #disposed = false;
  /** Resolves (never rejects) once the capsule answered every announcement, or one failed. */
  readonly settled: Promise<AnnounceOutcome>;

  constructor(connect: () => Promise<Transport>, forwards: readonly ListedForward[]) {
    const batches: ListedForward[][] = [];
    for (let i = 0; i < forwards.length; i += MAX_ANNOUNCED_FORWARDS) batches.push(forwards.slice(i, i + MAX_ANNOUNCED_FORWARDS));
    this.settled = Promise.all(batches.map((b) => this.#announce(connect, b))).then(
      (): AnnounceOutcome => ({ listed: true }),
      (e: unknown): AnnounceOutcome => {
        const error = asJackinError(e);
        return { listed: false, unsupported: error.code === 'E_UNKNOWN_METHOD', error };
      },
    );
  }

  /** Takes the forwards off the capsule's list: their connections close. */
  dispose(): void {
    this.#disposed = true;
    for (const t of this.#transports.splice(0)) t.close();
  }

  async #announce(connect: () => Promise<Transport>, forwards: readonly ListedForward[]): Promise<void> {
    const t = await connect();
    if (this.#disposed) {
      t.close();
      return;
    }
    this.#transports.push(t);
    try {
      await announceOn(t, forwards);
    } catch (e) {
      t.close();
      throw e;
    }
    // The capsule ends it only when it shuts down: then the connection is let go.
    t.readable.once('end', () => t.close());
    t.readable.resume();
  }
}

/** Announces `forwards` to the capsule `connect` reaches; dispose() the result when they stop. */
export function announceForwards(connect: () => Promise<Transport>, forwards: readonly ListedForward[]): ForwardAnnouncement {
  return new ForwardAnnouncement(connect, forwards);
}
