/**
 * The host's side of one `export` request on the control channel (docs/protocol.md section 7): open a
 * fresh connection to the capsule (a socket or the session's exec relay; the caller says how), send the
 * request, read the JSON reply, then feed the FileExportStart/Chunk/End frames that follow into an
 * ExportSink, which verifies byte count and SHA-256 and publishes without ever replacing a file.
 *
 * Backpressure runs from the host's disk to the capsule: the connection is read with `for await`, so no
 * further bytes are pulled while a chunk is being written; the capsule's socket then stops draining and its
 * reads wait. Any failure, an abort (SIGINT), a capsule that dies, a wrong digest or a short stream removes
 * the temporary file: nothing appears under a final name unless it is complete and verified.
 */
import { isErrorCode, JackinError, type ErrorCode } from '../errors.ts';
import {
  createServerFrameDecoder,
  encodeControlMessage,
  MAX_CONTROL_MESSAGE_BYTES,
  capForTag,
  SERVER_TAGS,
  type ServerFrame,
} from '../protocol/index.ts';
import type { Transport } from '../transport/transport.ts';
import { createExportSink } from './export-sink.ts';
import { progressWatchdog, type MinProgress } from './progress-watchdog.ts';
import { exportNameFor } from './sanitize-name.ts';

/** Payload bytes of a full FileExportChunk frame, and its data part. */
const FILE_EXPORT_CHUNK_FRAME_BYTES = capForTag(SERVER_TAGS.FileExportChunk);
const EXPORT_CHUNK_DATA_BYTES = 1024 * 1024;

/** Silence on the connection longer than this fails the export. Generous: a directory is archived before the reply. */
export const EXPORT_IDLE_TIMEOUT_MS = 5 * 60_000;
/** Bytes of chunks handed to the sink before waiting for its writes (bounds host memory). */
export const EXPORT_WRITE_QUEUE_BYTES = 4 * 1024 * 1024;
/**
 * An export that, once bytes flow, moves less than `bytes` in any `windowMs` window before its end fails
 * with E_EXPORT_STALLED (a capsule trickling one byte every 2 s would otherwise hold a partial file open
 * for ever). A live export on any working link or disk moves megabytes per second.
 */
export const EXPORT_MIN_PROGRESS: MinProgress = { bytes: 64 * 1024, windowMs: 30_000 };
/** A plain control request (offers, status) answers at once. */
export const CONTROL_CALL_TIMEOUT_MS = 5_000;

export interface ExportRequest {
  /** Container path; relative resolves against the capsule's workspace. */
  readonly path: string;
  readonly reveal?: boolean;
  readonly open?: boolean;
  /** The operator confirmed a path outside the roots (policy outsideRoots = confirm). */
  readonly confirmOutside?: boolean;
}

export interface ExportProgress {
  readonly name: string;
  readonly bytes: number;
  readonly total: number;
  /** `total` is an upper bound (a directory archived while it streams), not the exact size. */
  readonly atMost?: boolean;
}

export interface ExportClientOptions {
  /** Opens a new connection to the capsule (never the attach connection itself). */
  readonly connect: () => Promise<Transport>;
  /** Destination directory (created 0700). */
  readonly directory: string;
  /** Host-side cap; default the sink's. */
  readonly maxBytes?: number;
  readonly freeSpaceMargin?: number;
  readonly onProgress?: (p: ExportProgress) => void;
  readonly signal?: AbortSignal;
  readonly idleTimeoutMs?: number;
  /** Default EXPORT_MIN_PROGRESS. */
  readonly minProgress?: MinProgress;
}

export interface ExportedFile {
  /** The container path as requested. */
  readonly source: string;
  readonly destination: string;
  readonly bytes: number;
  /** Lower-case hex. */
  readonly sha256: string;
}

/** Payload buffers of this size (a full FileExportChunk frame) are pooled. */
const POOLED_FRAME_BYTES = FILE_EXPORT_CHUNK_FRAME_BYTES;

/**
 * Payload buffers for the frame decoder, handed back once a chunk is written and hashed: a 1 GiB export
 * then reuses a few buffers instead of leaving 1,024 to the garbage collector, which had let the host's
 * RSS and its page faults grow with the file.
 */
export class FramePool {
  readonly #free: Buffer[] = [];
  readonly #ours = new WeakSet<ArrayBufferLike>();
  readonly #keep: number;

  constructor(keep: number) {
    this.#keep = keep;
  }

  allocate = (n: number): Buffer => {
    // Only payloads near the full size share the pooled buffers: the write queue counts payload bytes, so a
    // capsule sending small chunks must not pin a whole 1 MiB buffer for each (at most twice the bytes).
    if (n < POOLED_FRAME_BYTES / 2 || n > POOLED_FRAME_BYTES) return Buffer.allocUnsafe(n);
    let b = this.#free.pop();
    if (b === undefined) {
      b = Buffer.allocUnsafeSlow(POOLED_FRAME_BYTES);
      this.#ours.add(b.buffer);
    }
    return b.subarray(0, n);
  };

  /** Give back the buffer under `bytes` (a view into a pooled payload); anything else is left to the GC. */
  release(bytes: Uint8Array): void {
    if (!this.#ours.has(bytes.buffer) || this.#free.length >= this.#keep) return;
    this.#free.push(Buffer.from(bytes.buffer, 0, POOLED_FRAME_BYTES));
  }

  get pooled(): number {
    return this.#free.length;
  }
}

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

/** Exports one container path to `options.directory`. */
export async function exportFile(request: ExportRequest, options: ExportClientOptions): Promise<ExportedFile> {
  const t = await options.connect();
  const sink = createExportSink({
    directory: options.directory,
    ...(options.maxBytes !== undefined ? { maxBytes: options.maxBytes } : {}),
    ...(options.freeSpaceMargin !== undefined ? { freeSpaceMargin: options.freeSpaceMargin } : {}),
  });
  t.writable.write(
    encodeControlMessage({
      method: 'export',
      path: request.path,
      reveal: request.reveal === true,
      open: request.open === true,
      ...(request.confirmOutside === true ? { confirmOutside: true } : {}),
      // A directory may be archived while it streams: Start then declares an upper bound and
      // FileExportLength the exact size (docs/protocol.md section 7).
      streamSize: true,
    }),
  );
  try {
    return await withConnection(t, options.signal, options.idleTimeoutMs ?? EXPORT_IDLE_TIMEOUT_MS, async (chunks, touch, stoppedBy, stop) => {
      const reader = new ReplyReader();
      let exportId: bigint | undefined;
      const pool = new FramePool(EXPORT_WRITE_QUEUE_BYTES / EXPORT_CHUNK_DATA_BYTES + 2);
      const decoder = createServerFrameDecoder(pool.allocate);
      let started: { name: string; size: number } | undefined;
      let streamed = false;
      let kind: 'file' | 'directory' = 'file';
      let exactSize: number | undefined;
      let received = 0;
      let queued = 0;
      const inFlight: Array<{ done: Promise<void>; bytes: number }> = [];
      const watchdog = progressWatchdog(options.minProgress ?? EXPORT_MIN_PROGRESS, (min) =>
        stop(
          new JackinError(
            'E_EXPORT_STALLED',
            `export of ${started?.name ?? request.path} stalled: less than ${min.bytes} bytes arrived in ${min.windowMs / 1000} s (${received} of ${started?.size ?? '?'} bytes so far); nothing was saved`,
          ),
        ),
      );

      const onFrame = async (f: ServerFrame): Promise<ExportedFile | undefined> => {
        switch (f.type) {
          case 'FileExportStart':
          case 'FileExportChunk':
          case 'FileExportLength':
          case 'FileExportEnd':
            if (f.exportId !== exportId) throw new JackinError('E_EXPORT_PROTOCOL', `frame for export ${f.exportId}, expected ${exportId}`);
            break;
          case 'Notice':
            throw streamFailure(f.text);
          default:
            throw new JackinError('E_EXPORT_PROTOCOL', `unexpected ${f.type} frame on the export connection`);
        }
        if (f.type === 'FileExportStart') {
          if (started !== undefined) throw new JackinError('E_EXPORT_PROTOCOL', 'a second FileExportStart on one export');
          started = { name: exportNameFor(request.path, kind, f.name), size: f.size };
          await sink.begin(started.name, f.size);
          options.onProgress?.({ name: started.name, bytes: 0, total: f.size, atMost: streamed });
          return undefined;
        }
        if (started === undefined) throw new JackinError('E_EXPORT_PROTOCOL', `${f.type} before FileExportStart`);
        if (f.type === 'FileExportLength') {
          if (!streamed) throw new JackinError('E_EXPORT_PROTOCOL', 'FileExportLength on an export whose size was declared exactly');
          if (exactSize !== undefined) throw new JackinError('E_EXPORT_PROTOCOL', 'a second FileExportLength on one export');
          if (f.size !== received || f.size > started.size) {
            throw new JackinError('E_SIZE_MISMATCH', `the capsule says ${f.size} bytes, ${received} arrived (declared at most ${started.size})`);
          }
          exactSize = f.size;
          return undefined;
        }
        if (exactSize !== undefined && f.type === 'FileExportChunk') throw new JackinError('E_EXPORT_PROTOCOL', 'FileExportChunk after FileExportLength');
        if (f.type === 'FileExportChunk') {
          // Keep several writes in flight so the disk, the hash and the socket overlap, and wait for the
          // oldest (which stops reading the connection: backpressure) once too much is queued. A failure
          // surfaces here on the next wait or in finish().
          const w = sink.write(f.offset, f.bytes);
          const bytes = f.bytes;
          w.then(() => pool.release(bytes), () => undefined);
          inFlight.push({ done: w, bytes: f.bytes.length });
          queued += f.bytes.length;
          while (queued >= EXPORT_WRITE_QUEUE_BYTES) {
            const oldest = inFlight.shift();
            if (oldest === undefined) break;
            await oldest.done;
            queued -= oldest.bytes;
          }
          received += f.bytes.length;
          options.onProgress?.({ name: started.name, bytes: received, total: started.size, atMost: streamed });
          return undefined;
        }
        if (streamed && exactSize === undefined) throw new JackinError('E_EXPORT_PROTOCOL', 'FileExportEnd without FileExportLength on a streamed export');
        // An interrupt (or the idle timeout) that came while the last frames were handled still wins here,
        // before the publish; once the publish has started, the file is reported as saved (withConnection).
        // Every byte is here; what remains (hash, fsync, publish) is the host's own work.
        watchdog.end();
        const stopped = stoppedBy();
        if (stopped !== undefined) throw stopped;
        const done = await sink.finish(f.sha256, exactSize);
        return { source: request.path, destination: done.destination, bytes: done.bytes, sha256: done.sha256hex };
      };

      try {
        for await (const raw of chunks) {
          touch();
          watchdog.add(raw.length);
          let chunk: Buffer = raw;
          if (exportId === undefined) {
            const got = reader.push(chunk);
            if (got === undefined) continue;
            const reply = checkReply(got.value, 'export');
            exportId = replyTransferId(reply, 'export', 'exportId');
            streamed = reply['streamed'] === true;
            kind = reply['kind'] === 'directory' ? 'directory' : 'file';
            chunk = got.rest;
          }
          for (const item of decoder.push(chunk)) {
            if (!item.ok) throw new JackinError('E_EXPORT_PROTOCOL', `bad frame from the capsule: ${item.error.message}`, { cause: item.error });
            const done = await onFrame(item.frame);
            touch();
            if (done !== undefined) return done;
          }
          const failure = decoder.failure;
          if (failure) throw new JackinError('E_EXPORT_PROTOCOL', `bad stream from the capsule: ${failure.message}`, { cause: failure });
        }
      } finally {
        watchdog.end();
      }
      const detail = await Promise.race([t.failureDetail(), new Promise<null>((r) => setTimeout(() => r(null), 1000).unref())]);
      const where = started === undefined ? 'before the transfer started' : `after ${received} of ${started.size} bytes`;
      throw new JackinError(
        exportId === undefined ? 'E_CONTROL_REPLY' : 'E_EXPORT_INTERRUPTED',
        `the capsule closed the connection ${where}${detail === null ? '' : ` (${detail})`}; nothing was saved, export it again`,
      );
    });
  } catch (e) {
    await sink.abort(e instanceof Error ? e.message : String(e));
    throw e;
  }
}

