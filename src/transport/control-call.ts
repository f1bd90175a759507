/**
 * Control calls over a fresh connection to a capsule (docs/protocol.md section 7), shared by every host
 * request that opens one (export, stage, offers): the u32-length JSON reply, its checks, in-stream failures,
 * and the idle timer and abort signal that bound the connection.
 */
import { isErrorCode, JackinError, type ErrorCode } from '../errors.ts';
import { encodeControlMessage, MAX_CONTROL_MESSAGE_BYTES } from '../protocol/index.ts';
import type { Transport } from './transport.ts';

/** A plain control request (offers, status) answers at once. */
const CONTROL_CALL_TIMEOUT_MS = 5_000;

/** Reads the first u32-length JSON message off a byte stream; the rest are frames. */
export class ReplyReader {
  private buf: Buffer = Buffer.alloc(0);
  push(chunk: Buffer): { value: unknown; rest: Buffer } | undefined {
    this.buf = this.buf.length === 0 ? chunk : Buffer.concat([this.buf, chunk]);
    if (this.buf.length < 4) return undefined;
    const len = this.buf.readUInt32BE(0);
    if (len > MAX_CONTROL_MESSAGE_BYTES) throw new JackinError('E_CONTROL_REPLY', `control reply declares ${len} bytes, over ${MAX_CONTROL_MESSAGE_BYTES}`);
    if (this.buf.length < 4 + len) return undefined;
    let value: unknown;
    try {
      value = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(this.buf.subarray(4, 4 + len)));
    } catch (e) {
      throw new JackinError('E_CONTROL_REPLY', 'control reply is not UTF-8 JSON', { cause: e });
    }
    return { value, rest: this.buf.subarray(4 + len) };
  }
}

function record(v: unknown): Record<string, unknown> | null {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
}

/** Turns an `ok:false` reply into its JackinError; returns the record of an `ok:true` reply. */
/** The transfer id a successful reply names under `field` (a decimal u64 as a string); E_CONTROL_REPLY otherwise. */
export function replyTransferId(reply: Record<string, unknown>, what: string, field: string): bigint {
  const id = reply[field];
  if (typeof id !== 'string' || !/^\d{1,20}$/.test(id) || BigInt(id) > 0xffffffffffffffffn) {
    throw new JackinError('E_CONTROL_REPLY', `${what} reply has no valid ${field}: ${JSON.stringify(id)?.slice(0, 100)}`);
  }
  return BigInt(id);
}

export function checkReply(value: unknown, what: string): Record<string, unknown> {
  const r = record(value);
  if (r === null || typeof r['ok'] !== 'boolean') throw new JackinError('E_CONTROL_REPLY', `${what}: malformed reply ${JSON.stringify(value)?.slice(0, 200)}`);
  if (r['ok'] === true) return r;
  const message = typeof r['message'] === 'string' ? r['message'] : `${what} failed`;
  // A code this host does not know (a newer capsule's, or garbage) stays visible in the message.
  if (isErrorCode(r['code'])) throw new JackinError(r['code'], message);
  throw new JackinError('E_CONTROL_REPLY', typeof r['code'] === 'string' ? `${JSON.stringify(r['code']).slice(0, 60)}: ${message}` : message);
}

/** A capsule's in-stream failure: a Notice frame whose text is `E_CODE: message`. */
export function streamFailure(text: string): JackinError {
  const m = /^(E_[A-Z0-9_]+): ([\s\S]*)$/.exec(text);
  return m !== null && isErrorCode(m[1]) ? new JackinError(m[1], m[2] ?? text) : new JackinError('E_EXPORT_FAILED', `the capsule reported: ${text}`);
}

/** Runs `body` over the transport's bytes with an idle timer and the abort signal; closes the transport after. */
export async function withConnection<T>(
  t: Transport,
  signal: AbortSignal | undefined,
  idleMs: number,
  body: (chunks: AsyncIterable<Buffer>, touch: () => void, stoppedBy: () => JackinError | undefined, stop: (e: JackinError) => void) => Promise<T>,
  what: { timeoutCode: ErrorCode; abortedCode: ErrorCode; aborted: string } = { timeoutCode: 'E_EXPORT_TIMEOUT', abortedCode: 'E_EXPORT_ABORTED', aborted: 'interrupted; nothing was saved' },
): Promise<T> {
  let stopped: JackinError | undefined;
  const stop = (e: JackinError): void => {
    stopped ??= e;
    t.close();
  };
  let timer: NodeJS.Timeout | undefined;
  const touch = (): void => {
    clearTimeout(timer);
    timer = setTimeout(() => stop(new JackinError(what.timeoutCode, `no data from the capsule for ${idleMs} ms (${t.description})`)), idleMs);
  };
  const onAbort = (): void => stop(new JackinError(what.abortedCode, what.aborted, { exitCode: 130 }));
  if (signal?.aborted === true) onAbort();
  signal?.addEventListener('abort', onAbort, { once: true });
  touch();
  try {
    // A result is returned even when a stop came while it was being made: the body finished (an export was
    // verified and published), so saying it was interrupted would be untrue. The body checks stoppedBy()
    // before anything it cannot take back.
    return await body(t.readable as AsyncIterable<Buffer>, touch, () => stopped, stop);
  } catch (e) {
    throw stopped ?? e;
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener('abort', onAbort);
    t.close();
  }
}

/** Sends one control request on a fresh connection and returns its (checked) reply. */
export async function controlCall(connect: () => Promise<Transport>, request: { method: string; [k: string]: unknown }, timeoutMs = CONTROL_CALL_TIMEOUT_MS): Promise<Record<string, unknown>> {
  const t = await connect();
  t.writable.write(encodeControlMessage(request));
  return withConnection(t, undefined, timeoutMs, async (chunks) => {
    const reader = new ReplyReader();
    for await (const chunk of chunks) {
      const got = reader.push(chunk);
      if (got !== undefined) return checkReply(got.value, request.method);
    }
    const detail = await t.failureDetail();
    throw new JackinError('E_CONTROL_REPLY', `the capsule closed the control channel without answering ${request.method}${detail === null ? '' : ` (${detail})`}`);
  });
}
