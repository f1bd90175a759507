/**
 * The frame-order rules of one export connection (docs/protocol.md section 7 and 8.12), as named states:
 *
 *   awaiting-reply -> awaiting-start -> receiving -> ended
 *                                      receiving -> length-known -> ended   (a streamed export only)
 *
 * The reply moves it to awaiting-start; after that each frame is one transition: FileExportStart begins the
 * sink (receiving), FileExportChunk stays in receiving, FileExportLength settles a streamed export's exact
 * size (length-known), FileExportEnd verifies and publishes (ended). Any other frame, or one for another
 * export id, is one named E_EXPORT_PROTOCOL error (OUT_OF_ORDER); a Notice is the capsule's own failure.
 * The byte checks themselves (offsets, sizes, SHA-256) are the sink's VerifiedTransfer.
 */
import { JackinError } from '../../errors.ts';
import type { ServerFrame } from '../../protocol/index.ts';
import { streamFailure } from '../../transport/control-call.ts';
import { exportNameFor } from '../platform/sanitize-name.ts';
import type { ExportSink } from './export-sink.ts';
import type { MinProgress } from './progress-watchdog.ts';

/** Bytes of chunks handed to the sink before waiting for its writes (bounds host memory). */
export const EXPORT_WRITE_QUEUE_BYTES = 4 * 1024 * 1024;

export interface ExportProgress {
  readonly name: string;
  readonly bytes: number;
  readonly total: number;
  /** `total` is an upper bound (a directory archived while it streams), not the exact size. */
  readonly atMost?: boolean;
}

export interface ExportedFile {
  /** The container path as requested. */
  readonly source: string;
  readonly destination: string;
  readonly bytes: number;
  /** Lower-case hex. */
  readonly sha256: string;
}

/** What the capsule's `ok:true` reply said about the stream that follows. */
export interface ExportReplyInfo {
  readonly exportId: bigint;
  /** Start declares an upper bound; FileExportLength the exact size before End. */
  readonly streamed: boolean;
  readonly kind: 'file' | 'directory';
}

type ReaderState =
  | { readonly name: 'awaiting-reply' }
  | { readonly name: 'awaiting-start'; readonly reply: ExportReplyInfo }
  | { readonly name: 'receiving'; readonly reply: ExportReplyInfo; readonly file: string; readonly size: number }
  | { readonly name: 'length-known'; readonly reply: ExportReplyInfo; readonly file: string; readonly size: number }
  | { readonly name: 'ended' };

type FileExportStart = Extract<ServerFrame, { type: 'FileExportStart' }>;
type FileExportChunk = Extract<ServerFrame, { type: 'FileExportChunk' }>;
type FileExportLength = Extract<ServerFrame, { type: 'FileExportLength' }>;
type FileExportEnd = Extract<ServerFrame, { type: 'FileExportEnd' }>;

type Open = Extract<ReaderState, { name: 'awaiting-start' | 'receiving' | 'length-known' }>;

const protocolError = (message: string): JackinError => new JackinError('E_EXPORT_PROTOCOL', message);

/** Every illegal transition, one error each. */
const OUT_OF_ORDER = {
  otherExport: (id: bigint, expected: bigint) => protocolError(`frame for export ${id}, expected ${expected}`),
  unexpectedFrame: (type: string) => protocolError(`unexpected ${type} frame on the export connection`),
  secondStart: () => protocolError('a second FileExportStart on one export'),
  beforeStart: (type: string) => protocolError(`${type} before FileExportStart`),
  lengthOnExactSize: () => protocolError('FileExportLength on an export whose size was declared exactly'),
  secondLength: () => protocolError('a second FileExportLength on one export'),
  chunkAfterLength: () => protocolError('FileExportChunk after FileExportLength'),
  endWithoutLength: () => protocolError('FileExportEnd without FileExportLength on a streamed export'),
} as const;

export interface ExportFrameReaderOptions {
  /** The container path as requested. */
  readonly path: string;
  readonly sink: ExportSink;
  /** Called with a chunk's bytes once the sink has written and hashed them (the frame pool takes them back). */
  readonly release: (bytes: Uint8Array) => void;
  readonly onProgress?: (p: ExportProgress) => void;
  /** Called at FileExportEnd before the publish; throws to stop it (an interrupt that came meanwhile). */
  readonly beforePublish: () => void;
}

export class ExportFrameReader {
  readonly #o: ExportFrameReaderOptions;
  #state: ReaderState = { name: 'awaiting-reply' };
  /** Bytes of chunks handed to the sink. */
  #received = 0;
  #queued = 0;
  readonly #inFlight: Array<{ done: Promise<void>; bytes: number }> = [];

  constructor(o: ExportFrameReaderOptions) {
    this.#o = o;
  }

  get awaitingReply(): boolean {
    return this.#state.name === 'awaiting-reply';
  }

  /** The capsule's reply came: frames follow. */
  replied(reply: ExportReplyInfo): void {
    if (this.#state.name !== 'awaiting-reply') throw new Error(`ExportFrameReader.replied() while ${this.#state.name}`);
    this.#state = { name: 'awaiting-start', reply };
  }

  /** One frame after the reply. Resolves to the exported file after FileExportEnd, else undefined. */
  async frame(f: ServerFrame): Promise<ExportedFile | undefined> {
    const s = this.#state;
    if (s.name === 'awaiting-reply' || s.name === 'ended') throw new Error(`ExportFrameReader.frame() while ${s.name}`);
    switch (f.type) {
      case 'FileExportStart':
      case 'FileExportChunk':
      case 'FileExportLength':
      case 'FileExportEnd':
        if (f.exportId !== s.reply.exportId) throw OUT_OF_ORDER.otherExport(f.exportId, s.reply.exportId);
        break;
      case 'Notice':
        throw streamFailure(f.text);
      default:
        throw OUT_OF_ORDER.unexpectedFrame(f.type);
    }
    switch (f.type) {
      case 'FileExportStart':
        return this.#start(s, f);
      case 'FileExportChunk':
        return this.#chunk(s, f);
      case 'FileExportLength':
        return this.#length(s, f);
      case 'FileExportEnd':
        return this.#end(s, f);
      default: {
        const unreachable: never = f;
        return unreachable;
      }
    }
  }

  /** The failure of a capsule that trickles bytes (the progress watchdog's). */
  stalled(min: MinProgress): JackinError {
    const s = this.#state;
    const file = 'file' in s ? s : undefined;
    return new JackinError(
      'E_EXPORT_STALLED',
      `export of ${file?.file ?? this.#o.path} stalled: less than ${min.bytes} bytes arrived in ${min.windowMs / 1000} s (${this.#received} of ${file?.size ?? '?'} bytes so far); nothing was saved`,
    );
  }

  /** The failure of a connection that closed before FileExportEnd; `detail` is the relay's account, if any. */
  closed(detail: string | null): JackinError {
    const s = this.#state;
    const where = 'file' in s ? `after ${this.#received} of ${s.size} bytes` : 'before the transfer started';
    return new JackinError(
      s.name === 'awaiting-reply' ? 'E_CONTROL_REPLY' : 'E_EXPORT_INTERRUPTED',
      `the capsule closed the connection ${where}${detail === null ? '' : ` (${detail})`}; nothing was saved, export it again`,
    );
  }

  /** awaiting-start -> receiving. */
  async #start(s: Open, f: FileExportStart): Promise<undefined> {
    if (s.name !== 'awaiting-start') throw OUT_OF_ORDER.secondStart();
    const file = exportNameFor(this.#o.path, s.reply.kind, f.name);
    this.#state = { name: 'receiving', reply: s.reply, file, size: f.size };
    await this.#o.sink.begin(file, f.size);
    this.#o.onProgress?.({ name: file, bytes: 0, total: f.size, atMost: s.reply.streamed });
    return undefined;
  }

  /** receiving -> receiving. */
  async #chunk(s: Open, f: FileExportChunk): Promise<undefined> {
    if (s.name === 'awaiting-start') throw OUT_OF_ORDER.beforeStart(f.type);
    if (s.name === 'length-known') throw OUT_OF_ORDER.chunkAfterLength();
    // Keep several writes in flight so the disk, the hash and the socket overlap, and wait for the
    // oldest (which stops reading the connection: backpressure) once too much is queued. A failure
    // surfaces here on the next wait or in finish().
    const w = this.#o.sink.write(f.offset, f.bytes);
    const bytes = f.bytes;
    w.then(
      () => this.#o.release(bytes),
      () => undefined,
    );
    this.#inFlight.push({ done: w, bytes: f.bytes.length });
    this.#queued += f.bytes.length;
    while (this.#queued >= EXPORT_WRITE_QUEUE_BYTES) {
      const oldest = this.#inFlight.shift();
      if (oldest === undefined) break;
      await oldest.done;
      this.#queued -= oldest.bytes;
    }
    this.#received += f.bytes.length;
    this.#o.onProgress?.({ name: s.file, bytes: this.#received, total: s.size, atMost: s.reply.streamed });
    return undefined;
  }

  /** receiving -> length-known (a streamed export). */
  #length(s: Open, f: FileExportLength): undefined {
    if (s.name === 'awaiting-start') throw OUT_OF_ORDER.beforeStart(f.type);
    if (!s.reply.streamed) throw OUT_OF_ORDER.lengthOnExactSize();
    if (s.name === 'length-known') throw OUT_OF_ORDER.secondLength();
    this.#o.sink.settleSize(f.size);
    this.#state = { ...s, name: 'length-known' };
    return undefined;
  }

  /** receiving (exact size) or length-known -> ended: verify, fsync, publish. */
  async #end(s: Open, f: FileExportEnd): Promise<ExportedFile> {
    if (s.name === 'awaiting-start') throw OUT_OF_ORDER.beforeStart(f.type);
    if (s.name === 'receiving' && s.reply.streamed) throw OUT_OF_ORDER.endWithoutLength();
    this.#state = { name: 'ended' };
    // An interrupt (or the idle timeout) that came while the last frames were handled still wins here,
    // before the publish; once the publish has started, the file is reported as saved (withConnection).
    // Every byte is here; what remains (hash, fsync, publish) is the host's own work.
    this.#o.beforePublish();
    const done = await this.#o.sink.finish(f.sha256);
    return { source: this.#o.path, destination: done.destination, bytes: done.bytes, sha256: done.sha256hex };
  }
}
