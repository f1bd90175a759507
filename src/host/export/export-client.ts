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
import { JackinError } from '../../errors.ts';
import {
  createServerFrameDecoder,
  encodeControlMessage,
  capForTag,
  SERVER_TAGS,
  type ServerFrame,
} from '../../protocol/index.ts';
import { checkReply, ReplyReader, replyTransferId, streamFailure, withConnection } from '../../transport/control-call.ts';
import type { Transport } from '../../transport/transport.ts';
import { createExportSink } from './export-sink.ts';
import { progressWatchdog, type MinProgress } from './progress-watchdog.ts';
import { exportNameFor } from '../platform/sanitize-name.ts';

/** Payload bytes of a full FileExportChunk frame, and its data part. */
const FILE_EXPORT_CHUNK_FRAME_BYTES = capForTag(SERVER_TAGS.FileExportChunk);
const EXPORT_CHUNK_DATA_BYTES = 1024 * 1024;

/** Silence on the connection longer than this fails the export. Generous: a directory is archived before the reply. */
const EXPORT_IDLE_TIMEOUT_MS = 5 * 60_000;
/** Bytes of chunks handed to the sink before waiting for its writes (bounds host memory). */
const EXPORT_WRITE_QUEUE_BYTES = 4 * 1024 * 1024;
/**
 * An export that, once bytes flow, moves less than `bytes` in any `windowMs` window before its end fails
 * with E_EXPORT_STALLED (a capsule trickling one byte every 2 s would otherwise hold a partial file open
 * for ever). A live export on any working link or disk moves megabytes per second.
 */
const EXPORT_MIN_PROGRESS: MinProgress = { bytes: 64 * 1024, windowMs: 30_000 };

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

