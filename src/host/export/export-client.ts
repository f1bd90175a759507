/**
 * The host's side of one `export` request on the control channel (docs/protocol.md section 7): open a
 * fresh connection to the capsule (a socket or the session's exec relay; the caller says how), send the
 * request, read the JSON reply, then hand the FileExportStart/Chunk/Length/End frames that follow to an
 * ExportFrameReader (their order) and through it to an ExportSink, which verifies offsets, byte count and
 * SHA-256 and publishes without ever replacing a file.
 *
 * Backpressure runs from the host's disk to the capsule: the connection is read with `for await`, so no
 * further bytes are pulled while a chunk is being written; the capsule's socket then stops draining and its
 * reads wait. Any failure, an abort (SIGINT), a capsule that dies, a wrong digest or a short stream removes
 * the temporary file: nothing appears under a final name unless it is complete and verified.
 */
import { JackinError } from '../../errors.ts';
import { createServerFrameDecoder, encodeControlRequest, capForTag, EXPORT_METHOD, readControlReply, SERVER_TAGS } from '../../protocol/index.ts';
import { FramePool } from '../../protocol/frame-pool.ts';
import { BorrowedReads } from '../../transport/borrowed-reads.ts';
import { ReplyReader, withConnection } from '../../transport/control-call.ts';
import type { Connect } from '../../transport/transport.ts';
import { ExportFrameReader, EXPORT_WRITE_QUEUE_BYTES, type ExportProgress, type ExportedFile } from './export-frame-reader.ts';
import { ExportSink } from './export-sink.ts';
import { ProgressWatchdog, type MinProgress } from './progress-watchdog.ts';

export type { ExportProgress, ExportedFile };

/** Payload bytes of a full FileExportChunk frame, and its data part. */
const FILE_EXPORT_CHUNK_FRAME_BYTES = capForTag(SERVER_TAGS.FileExportChunk);
const EXPORT_CHUNK_DATA_BYTES = 1024 * 1024;

/** Silence on the connection longer than this fails the export. Generous: a directory is archived before the reply. */
const EXPORT_IDLE_TIMEOUT_MS = 5 * 60_000;
/**
 * An export that, once bytes flow, moves less than `bytes` in any `windowMs` window before its end fails
 * with E_EXPORT_STALLED (a capsule trickling one byte every 2 s would otherwise hold a partial file open
 * for ever). A live export on any working link or disk moves megabytes per second.
 */
const EXPORT_MIN_PROGRESS: MinProgress = { bytes: 64 * 1024, windowMs: 30_000 };

export interface ExportRequest {
  /** Container path; relative resolves against the capsule's workspace. */
  readonly path: string;
  /** What the operator will do with the file once saved (the caller does it); told to the capsule. */
  readonly mode?: 'reveal' | 'open';
  /** The operator confirmed a path outside the roots (policy outsideRoots = confirm). */
  readonly confirmOutside?: boolean;
}

export interface ExportClientOptions {
  /** Opens a new connection to the capsule (never the attach connection itself). */
  readonly connect: Connect;
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
  /** The sink writes on the event loop's thread (ExportSinkOptions.inlineWrites). */
  readonly inlineWrites?: boolean;
}

/** Exports one container path to `options.directory`. */
export async function exportFile(request: ExportRequest, options: ExportClientOptions): Promise<ExportedFile> {
  // A socket is read into one lent buffer (borrowed-reads.ts); a relay's reads come as its stream gives them.
  const reads = new BorrowedReads();
  const t = await options.connect({ borrowedReads: reads });
  const sink = new ExportSink({
    directory: options.directory,
    ...(options.maxBytes !== undefined ? { maxBytes: options.maxBytes } : {}),
    ...(options.freeSpaceMargin !== undefined ? { freeSpaceMargin: options.freeSpaceMargin } : {}),
    inlineWrites: options.inlineWrites === true,
  });
  t.writable.write(
    encodeControlRequest(EXPORT_METHOD, {
      path: request.path,
      // Sent as the protocol asks; the capsule only echoes them. The caller opens or reveals the file.
      reveal: request.mode === 'reveal',
      open: request.mode === 'open',
      confirmOutside: request.confirmOutside === true,
      // A directory may be archived while it streams: Start then declares an upper bound and
      // FileExportLength the exact size (docs/protocol.md section 7).
      streamSize: true,
    }),
  );
  try {
    return await withConnection(t, options.signal, options.idleTimeoutMs ?? EXPORT_IDLE_TIMEOUT_MS, async (streamed, touch, stoppedBy, stop) => {
      const chunks = t.borrowedReads === reads ? reads.chunks(t.readable) : streamed;
      const replyReader = new ReplyReader();
      const pool = new FramePool(FILE_EXPORT_CHUNK_FRAME_BYTES, EXPORT_WRITE_QUEUE_BYTES / EXPORT_CHUNK_DATA_BYTES + 2);
      // Keeps nothing of a read (copyInput): a borrowed read's buffer is read into again at the next one.
      const decoder = createServerFrameDecoder(pool.allocate, { copyInput: true });
      const reader = new ExportFrameReader({
        path: request.path,
        sink,
        release: (bytes) => pool.release(bytes),
        ...(options.onProgress !== undefined ? { onProgress: options.onProgress } : {}),
        beforePublish: () => {
          watchdog.end();
          const stopped = stoppedBy();
          if (stopped !== undefined) throw stopped;
        },
      });
      const watchdog = new ProgressWatchdog(options.minProgress ?? EXPORT_MIN_PROGRESS, (min) => stop(reader.stalled(min)));
      try {
        for await (const raw of chunks) {
          touch();
          watchdog.add(raw.length);
          let chunk: Buffer = raw;
          if (reader.awaitingReply) {
            const got = replyReader.push(chunk);
            if (got === undefined) continue;
            reader.replied(readControlReply(EXPORT_METHOD, got.value));
            chunk = got.rest;
          }
          for (const item of decoder.push(chunk)) {
            if (!item.ok) throw new JackinError('E_EXPORT_PROTOCOL', `bad frame from the capsule: ${item.error.message}`, { cause: item.error });
            const done = await reader.frame(item.frame);
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
      throw reader.closed(detail);
    });
  } catch (e) {
    await sink.abort(e instanceof Error ? e.message : String(e));
    throw e;
  }
}
