/**
 * Control calls over a fresh connection to a capsule (docs/protocol.md section 7), shared by every host
 * request that opens one (export, stage, offers): the u32-length JSON reply (read by the method's descriptor
 * in src/protocol/control-methods.ts), in-stream failures, and the idle timer and abort signal that bound
 * the connection.
 */
import { isErrorCode, JackinError, type ErrorCode } from '../errors.ts';
import { encodeControlRequest, MAX_CONTROL_MESSAGE_BYTES, readControlReply, type ControlMethod } from '../protocol/index.ts';
import type { Transport } from './transport.ts';

/** A plain control request (offers, status) answers at once. */
const CONTROL_CALL_TIMEOUT_MS = 5_000;

/**
 * Reads the first u32-length JSON message off a byte stream; the rest are frames (`rest`, a view of the
 * chunk given). Keeps a copy of what it holds between pushes, never the chunk itself: a borrowed read's
 * buffer (borrowed-reads.ts) is read into again at the next one.
 */
export class ReplyReader {
  #buf: Buffer = Buffer.alloc(0);
  push(chunk: Buffer): { value: unknown; rest: Buffer } | undefined {
    const buf = this.#buf.length === 0 ? chunk : Buffer.concat([this.#buf, chunk]);
    const held = (): undefined => {
      this.#buf = buf === chunk ? Buffer.from(chunk) : buf;
      return undefined;
    };
    if (buf.length < 4) return held();
    const len = buf.readUInt32BE(0);
    if (len > MAX_CONTROL_MESSAGE_BYTES) throw new JackinError('E_CONTROL_REPLY', `control reply declares ${len} bytes, over ${MAX_CONTROL_MESSAGE_BYTES}`);
    if (buf.length < 4 + len) return held();
    this.#buf = Buffer.alloc(0);
    let value: unknown;
    try {
      value = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(buf.subarray(4, 4 + len)));
    } catch (e) {
      throw new JackinError('E_CONTROL_REPLY', 'control reply is not UTF-8 JSON', { cause: e });
    }
    return { value, rest: buf.subarray(4 + len) };
  }
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
  what: { timeoutCode: ErrorCode; abortedCode: ErrorCode; aborted: string } = {
    timeoutCode: 'E_EXPORT_TIMEOUT',
    abortedCode: 'E_EXPORT_ABORTED',
    aborted: 'interrupted; nothing was saved',
  },
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
  const onAbort = (): void => stop(new JackinError(what.abortedCode, what.aborted));
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

/** Sends one control request on a fresh connection and returns its reply, checked by the method's descriptor. */
export async function controlCall<Name extends string, Params, Read>(
  connect: () => Promise<Transport>,
  method: ControlMethod<Name, Params, unknown, Read>,
  params: Params,
  timeoutMs = CONTROL_CALL_TIMEOUT_MS,
): Promise<Read> {
  const t = await connect();
  t.writable.write(encodeControlRequest(method, params));
  return withConnection(t, undefined, timeoutMs, async (chunks) => {
    const reader = new ReplyReader();
    for await (const chunk of chunks) {
      const got = reader.push(chunk);
      if (got !== undefined) return readControlReply(method, got.value);
    }
    const detail = await t.failureDetail();
    throw new JackinError(
      'E_CONTROL_REPLY',
      `the capsule closed the control channel without answering ${method.method}${detail === null ? '' : ` (${detail})`}`,
    );
  });
}
