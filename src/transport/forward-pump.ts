/**
 * The byte pump of one forwarded TCP connection (docs/protocol.md section 8.15), the same on both sides:
 * the host runs it between the browser's connection and its forward connection to the capsule (side
 * 'client'), the capsule between that connection and the container's loopback server (side 'server').
 *
 * - Bytes from the TCP socket go out as ForwardData frames of at most 256 KiB; the socket is paused while
 *   more than FORWARD_QUEUE_BYTES wait to be sent to the peer, and resumed on its 'drain'.
 * - ForwardData from the peer is written to the TCP socket; the peer connection is paused while more than
 *   FORWARD_QUEUE_BYTES wait to be written to the socket. The decoder holds at most one frame.
 * - The TCP socket's EOF is sent as ForwardEnd, and a ForwardEnd ends the socket's write side (half-close:
 *   the socket must have allowHalfOpen). A socket error is sent as ForwardReset with its reason; a
 *   ForwardReset, a bad frame or the peer connection ending before both ends resets the socket.
 *
 * The pump never looks into the bytes: it counts them, and nothing else (the host never reads, stores or
 * logs forwarded bytes).
 */
import type { Socket } from 'node:net';
import type { Readable, Writable } from 'node:stream';
import {
  createForwardDecoder,
  encodeForwardDataHeader,
  encodeForwardFrame,
  MAX_FORWARD_DATA_BYTES,
  type ForwardFrame,
  type ForwardResetReason,
  type ForwardSide,
} from '../protocol/index.ts';

/** Bytes allowed to wait in either direction before the source is paused. */
export const FORWARD_QUEUE_BYTES = 1024 * 1024;

export type ForwardOutcome =
  | { readonly ok: true; readonly sent: number; readonly received: number }
  | {
      readonly ok: false;
      readonly sent: number;
      readonly received: number;
      readonly reason: ForwardResetReason | 'protocol';
      /** Where it ended: this side's TCP socket, or the peer (its reset, a bad frame, its connection). */
      readonly by: 'local' | 'peer';
      readonly message: string;
    };

export interface ForwardPumpOptions {
  /** The side this pump speaks for: its frames carry this side's tags. */
  readonly side: ForwardSide;
  /** The TCP connection (allowHalfOpen, so a half-close travels). */
  readonly local: Socket;
  /** The forward connection to the other side, after the control reply. */
  readonly peer: { readonly readable: Readable; readonly writable: Writable };
  /** Bytes of the peer connection already read past the control reply. */
  readonly initial?: Buffer;
  /** Told how many bytes went each way, as they go (counts only: a login forward closes once idle). */
  readonly onBytes?: (direction: 'sent' | 'received', bytes: number) => void;
}

function resetReason(e: unknown): ForwardResetReason {
  const code = (e as NodeJS.ErrnoException | undefined)?.code;
  return code === 'ETIMEDOUT' ? 'timeout' : code === 'ECONNREFUSED' ? 'refused' : 'reset';
}

/**
 * Pumps until both directions have ended or one side reset; resolves with the outcome (never rejects).
 * On success the peer's writable has been ended; on failure the socket is destroyed. The caller closes the
 * peer connection.
 */
export function pumpForward(o: ForwardPumpOptions): Promise<ForwardOutcome> {
  const { side, local, peer } = o;
  const other: ForwardSide = side === 'client' ? 'server' : 'client';
  const decoder = createForwardDecoder(other);
  let sent = 0;
  let received = 0;
  let sentEnd = false;
  let gotEnd = false;
  let settled = false;
  let resolveOutcome!: (v: ForwardOutcome) => void;
  const outcome = new Promise<ForwardOutcome>((r) => (resolveOutcome = r));

  const send = (f: ForwardFrame): void => {
    if (!peer.writable.destroyed && !peer.writable.writableEnded) peer.writable.write(encodeForwardFrame(side, f));
  };
  // Every listener, so that they are added and removed as one (the handlers are defined below).
  const listeners = (): Array<[NodeJS.EventEmitter, string, Parameters<NodeJS.EventEmitter['on']>[1]]> => [
    [local, 'data', onLocalData],
    [local, 'end', onLocalEnd],
    [local, 'error', onLocalError],
    [local, 'close', onLocalClose],
    [local, 'drain', onLocalDrain],
    [peer.readable, 'data', onPeerData],
    [peer.readable, 'end', onPeerGone],
    [peer.readable, 'close', onPeerGone],
    [peer.readable, 'error', onPeerGone],
    [peer.writable, 'drain', onPeerDrain],
    [peer.writable, 'error', onPeerGone],
  ];
  const cleanup = (): void => {
    for (const [emitter, event, fn] of listeners()) emitter.off(event, fn);
  };
  const finish = (v: ForwardOutcome): void => {
    if (settled) return;
    settled = true;
    cleanup();
    // Later errors of either stream (a write after a reset) must not become uncaught exceptions.
    local.on('error', () => {});
    peer.readable.on('error', () => {});
    peer.writable.on('error', () => {});
    resolveOutcome(v);
  };
  const fail = (reason: ForwardResetReason | 'protocol', by: 'local' | 'peer', message: string): void => {
    if (settled) return;
    // Tell the peer unless it is the one that reset; a broken peer connection hears nothing.
    if (by === 'local' || reason === 'protocol') send({ type: 'ForwardReset', reason: reason === 'protocol' ? 'reset' : reason });
    if (!peer.writable.destroyed) peer.writable.end();
    resetOrDestroy(local);
    finish({ ok: false, sent, received, reason, by, message });
  };
  const maybeDone = (): void => {
    if (!sentEnd || !gotEnd || settled) return;
    // Both ways are over: the socket's writes flush before its close; the peer hears nothing more.
    peer.writable.end();
    finish({ ok: true, sent, received });
  };

  const onLocalData = (chunk: Buffer): void => {
    for (let at = 0; at < chunk.length; at += MAX_FORWARD_DATA_BYTES) {
      const part = chunk.subarray(at, at + MAX_FORWARD_DATA_BYTES);
      peer.writable.cork();
      peer.writable.write(encodeForwardDataHeader(side, part.length));
      peer.writable.write(part);
      peer.writable.uncork();
    }
    sent += chunk.length;
    o.onBytes?.('sent', chunk.length);
    if (peer.writable.writableLength > FORWARD_QUEUE_BYTES) local.pause();
  };
  const onPeerDrain = (): void => {
    if (!settled) local.resume();
  };
  const onLocalEnd = (): void => {
    sentEnd = true;
    send({ type: 'ForwardEnd' });
    maybeDone();
  };
  const onLocalError = (e: Error): void => fail(resetReason(e), 'local', e.message);
  const onLocalClose = (): void => {
    // Closed without EOF or error on our side (destroyed): the stream is cut.
    if (!settled && !(sentEnd && gotEnd)) fail('reset', 'local', 'the connection closed');
  };
  const onLocalDrain = (): void => {
    if (!settled) peer.readable.resume();
  };
  const onPeerData = (chunk: Buffer): void => {
    let items;
    try {
      items = decoder.push(chunk);
    } catch (e) {
      fail('protocol', 'peer', (e as Error).message);
      return;
    }
    for (const item of items) {
      if (settled) return;
      if (!item.ok) return fail('protocol', 'peer', item.error.message);
      const f = item.frame;
      if (f.type === 'ForwardData') {
        if (gotEnd) return fail('protocol', 'peer', 'ForwardData after ForwardEnd');
        received += f.bytes.length;
        local.write(f.bytes);
        o.onBytes?.('received', f.bytes.length);
      } else if (f.type === 'ForwardEnd') {
        if (gotEnd) return fail('protocol', 'peer', 'a second ForwardEnd');
        gotEnd = true;
        local.end();
        maybeDone();
      } else {
        return fail(f.reason, 'peer', `the other side reported ${f.reason}`);
      }
    }
    if (!settled && local.writableLength > FORWARD_QUEUE_BYTES) peer.readable.pause();
  };
  const onPeerGone = (): void => {
    if (!settled) fail('reset', 'peer', 'the connection to the other side ended');
  };

  for (const [emitter, event, fn] of listeners()) emitter.on(event, fn);
  if (o.initial !== undefined && o.initial.length > 0) onPeerData(o.initial);
  // Either side may have gone while the forward was being set up: its 'close' was before our listeners.
  if (local.destroyed) fail('reset', 'local', 'the connection closed before the forward started');
  else if (peer.readable.destroyed) fail('reset', 'peer', 'the connection to the other side closed before the forward started');
  return outcome;
}

/**
 * Resets a TCP connection; a Unix socket (a login callback router's hand-over, which has no reset) is
 * destroyed, and so is one whose end was already sent: a reset with its shutdown pending never finished
 * closing here (Node 20), and the process spun at its exit waiting for it.
 */
export function resetOrDestroy(s: Socket): void {
  if (s.remoteAddress === undefined || s.writableEnded) s.destroy();
  else s.resetAndDestroy();
}
