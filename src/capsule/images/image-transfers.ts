/**
 * The chunked image transfer of protocol.md section 4: ClipboardImageStart / Chunk / End keyed by
 * transfer id, from AttachControl bodies (request id + context) or the legacy frames (neither).
 *
 * Rules kept here: size 1..64 MiB; offsets strictly sequential; every chunk 1..1 MiB and inside the
 * declared size; Chunk and End carry the Start's request id and context; End checks the byte count, the
 * SHA-256, then the signature (via staging) and answers exactly once under the Start's id; any chunk
 * error drops the transfer and answers `rejected` under the Start's id; a transfer idle for 5 minutes is
 * dropped; at most a few transfers at once, within a memory budget.
 *
 * Data is kept in memory, not streamed to a temp file: the final file must appear, create-new, only after
 * every check passed, and validation reads the whole image anyway; in memory there is no half-written
 * temp file to clean up on a crash, and the cost is explicitly bounded (MAX_CONCURRENT_TRANSFERS and
 * MAX_BUFFERED_TRANSFER_BYTES, checked against the declared size at Start; chunks are never allowed past
 * it). A host sends one transfer at a time, so the budget is 64 MiB in practice.
 */
import { JackinError, type ErrorCode } from '../../errors.ts';
import type { AttachContext, ControlResult, ImageChunk, ImageEnd, ImageFormat, ImageStart } from '../../protocol/frames.ts';
import { MAX_IMAGE_TRANSFER_BYTES, MiB, TRANSFER_IDLE_MS } from '../../protocol/limits.ts';
import { VerifiedTransfer } from '../../protocol/verified-transfer.ts';
import type { StagedImage } from '../session/staging.ts';

const MAX_CONCURRENT_TRANSFERS = 4;
const MAX_BUFFERED_TRANSFER_BYTES = 128 * MiB;

/** Who sent a frame: an AttachControl request (id + context) or a legacy frame (both null). */
export interface Correlation {
  requestId: bigint | null;
  context: AttachContext | null;
}

interface ControlResponse {
  requestId: bigint;
  result: ControlResult;
}

type TransferEvent = { kind: 'staged'; transferId: bigint; staged: StagedImage } | { kind: 'rejected'; transferId: bigint | null; error: JackinError };

/** What the caller must do after one frame: send these responses, show these events as notices. */
export interface TransferStep {
  responses: ControlResponse[];
  events: TransferEvent[];
}

interface TransferTimers {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export interface ImageTransfersOptions {
  /** Validates and writes the image (ImageStaging.stage); throws a JackinError to reject. */
  stage: (bytes: Buffer, declared: ImageFormat) => Promise<StagedImage>;
  /** Called with the step of a transfer dropped for idleness (no frame to answer to). */
  onIdleDrop?: (step: TransferStep) => void;
  timers?: TransferTimers;
  idleMs?: number;
  maxBytes?: number;
  maxConcurrent?: number;
  maxBufferedBytes?: number;
}

interface Transfer {
  id: bigint;
  owner: Correlation;
  format: ImageFormat;
  size: number;
  /** Offsets, sizes and the SHA-256 (the bytes themselves are kept in `parts`). */
  verified: VerifiedTransfer;
  parts: Buffer[];
  timer: unknown;
}

const CONTEXT_KEYS = ['v', 'traceparent', 'tracestate', 'invocation_id', 'session_id', 'job_id'] as const;

function sameContext(a: AttachContext | null, b: AttachContext | null): boolean {
  if (a === null || b === null) return a === b;
  return CONTEXT_KEYS.every((k) => a[k] === b[k]);
}

function sameOwner(a: Correlation, b: Correlation): boolean {
  return a.requestId === b.requestId && sameContext(a.context, b.context);
}

const realTimers: TransferTimers = {
  setTimeout: (fn, ms) => {
    const t = setTimeout(fn, ms);
    // An idle transfer must not keep the capsule alive.
    t.unref();
    return t;
  },
  clearTimeout: (h) => clearTimeout(h as NodeJS.Timeout),
};

export class ImageTransfers {
  readonly #transfers = new Map<bigint, Transfer>();
  readonly #opts: Required<Omit<ImageTransfersOptions, 'onIdleDrop'>> & { onIdleDrop: ((step: TransferStep) => void) | undefined };

  constructor(opts: ImageTransfersOptions) {
    this.#opts = {
      stage: opts.stage,
      onIdleDrop: opts.onIdleDrop,
      timers: opts.timers ?? realTimers,
      idleMs: opts.idleMs ?? TRANSFER_IDLE_MS,
      maxBytes: opts.maxBytes ?? MAX_IMAGE_TRANSFER_BYTES,
      maxConcurrent: opts.maxConcurrent ?? MAX_CONCURRENT_TRANSFERS,
      maxBufferedBytes: opts.maxBufferedBytes ?? MAX_BUFFERED_TRANSFER_BYTES,
    };
  }

  /** Transfers in progress. */
  get active(): number {
    return this.#transfers.size;
  }

  start(from: Correlation, body: ImageStart): TransferStep {
    const reject = (code: ErrorCode, message: string): TransferStep => this.#rejectStep(from.requestId, body.transferId, new JackinError(code, message));
    if (body.size < 1 || body.size > this.#opts.maxBytes) {
      return reject('E_IMAGE_TOO_LARGE', `image transfer ${body.transferId} declares ${body.size} bytes; allowed 1..${this.#opts.maxBytes}`);
    }
    if (this.#transfers.has(body.transferId)) {
      return reject('E_TRANSFER_ID_IN_USE', `image transfer id ${body.transferId} is already in progress`);
    }
    const buffered = [...this.#transfers.values()].reduce((n, t) => n + t.size, 0);
    if (this.#transfers.size >= this.#opts.maxConcurrent || buffered + body.size > this.#opts.maxBufferedBytes) {
      return reject(
        'E_TOO_MANY_TRANSFERS',
        `image transfer ${body.transferId} refused: ${this.#transfers.size} transfers (${buffered} bytes) already in progress`,
      );
    }
    const t: Transfer = {
      id: body.transferId,
      owner: from,
      format: body.format,
      size: body.size,
      verified: new VerifiedTransfer({ size: body.size, label: `image transfer ${body.transferId}` }),
      parts: [],
      timer: undefined,
    };
    this.#transfers.set(t.id, t);
    this.#touch(t);
    return { responses: [], events: [] };
  }

  chunk(from: Correlation, body: ImageChunk): TransferStep {
    const t = this.#owned(from, body.transferId);
    if (!('id' in t)) return t;
    // Copy: the decoder's buffer may be a view into a larger read buffer that is reused. The copy is
    // checked, then hashed (queued; end() waits for it), and never changes.
    const part = Buffer.from(body.bytes);
    try {
      void t.verified.accept(body.offset, part);
    } catch (e) {
      return this.#dropWith(t, e as JackinError);
    }
    t.parts.push(part);
    this.#touch(t);
    return { responses: [], events: [] };
  }

  async end(from: Correlation, body: ImageEnd): Promise<TransferStep> {
    const t = this.#owned(from, body.transferId);
    if (!('id' in t)) return t;
    const parts = t.parts;
    // Removed before any await: a second End, or a chunk racing the staging, finds no transfer.
    this.#forget(t);
    try {
      await t.verified.verify(body.sha256);
    } catch (e) {
      return this.#rejectStep(t.owner.requestId, t.id, e as JackinError);
    }
    const bytes = Buffer.concat(parts, t.size);
    parts.length = 0;
    try {
      const staged = await this.#opts.stage(bytes, t.format);
      return {
        responses: t.owner.requestId === null ? [] : [{ requestId: t.owner.requestId, result: 'success' }],
        events: [{ kind: 'staged', transferId: t.id, staged }],
      };
    } catch (e) {
      const error = e instanceof JackinError ? e : new JackinError('E_STAGING_FAILED', `image transfer ${t.id}: ${(e as Error).message}`, { cause: e });
      return this.#rejectStep(t.owner.requestId, t.id, error);
    }
  }

  /**
   * ClipboardImageError from the host: drops the transfers that this sender started (same request id and
   * context) and shows the host's message.
   */
  abort(from: Correlation, message: string): TransferStep {
    const steps = [...this.#transfers.values()]
      .filter((t) => sameOwner(t.owner, from))
      .map((t) => this.#drop(t, 'E_TRANSFER_ABORTED', `image transfer ${t.id} aborted by the host: ${message}`));
    if (steps.length === 0) {
      return { responses: [], events: [{ kind: 'rejected', transferId: null, error: new JackinError('E_TRANSFER_ABORTED', `host image error: ${message}`) }] };
    }
    return { responses: steps.flatMap((s) => s.responses), events: steps.flatMap((s) => s.events) };
  }

  /** Drops every transfer and its timer (client gone, capsule exit). */
  dispose(): void {
    for (const t of [...this.#transfers.values()]) this.#forget(t);
  }

  /** The transfer if `from` owns it; otherwise the step that answers the stray frame. */
  #owned(from: Correlation, id: bigint): Transfer | TransferStep {
    const t = this.#transfers.get(id);
    if (t === undefined) {
      const error = new JackinError('E_TRANSFER_UNKNOWN', `no image transfer ${id} in progress (never started, finished, or dropped)`);
      return {
        responses: from.requestId === null ? [] : [{ requestId: from.requestId, result: 'invalid-correlation' }],
        events: [{ kind: 'rejected', transferId: id, error }],
      };
    }
    if (!sameOwner(t.owner, from)) {
      const step = this.#drop(t, 'E_TRANSFER_CORRELATION', `image transfer ${id}: a frame with another request id or context than its Start`);
      if (from.requestId !== null && from.requestId !== t.owner.requestId) {
        step.responses.push({ requestId: from.requestId, result: 'invalid-correlation' });
      }
      return step;
    }
    return t;
  }

  #drop(t: Transfer, code: ErrorCode, message: string): TransferStep {
    return this.#dropWith(t, new JackinError(code, message));
  }

  #dropWith(t: Transfer, error: JackinError): TransferStep {
    this.#forget(t);
    return this.#rejectStep(t.owner.requestId, t.id, error);
  }

  #rejectStep(requestId: bigint | null, transferId: bigint, error: JackinError): TransferStep {
    return {
      responses: requestId === null ? [] : [{ requestId, result: 'rejected' }],
      events: [{ kind: 'rejected', transferId, error }],
    };
  }

  #forget(t: Transfer): void {
    if (t.timer !== undefined) this.#opts.timers.clearTimeout(t.timer);
    t.timer = undefined;
    t.parts = [];
    if (this.#transfers.get(t.id) === t) this.#transfers.delete(t.id);
  }

  #touch(t: Transfer): void {
    if (t.timer !== undefined) this.#opts.timers.clearTimeout(t.timer);
    t.timer = this.#opts.timers.setTimeout(() => {
      t.timer = undefined;
      if (this.#transfers.get(t.id) !== t) return;
      const step = this.#drop(t, 'E_TRANSFER_IDLE', `image transfer ${t.id} dropped after ${this.#opts.idleMs} ms without a frame`);
      this.#opts.onIdleDrop?.(step);
    }, this.#opts.idleMs);
  }
}
