/**
 * The capsule side of the paste feature: an ImageSink that stages every image the host sends (whole, or
 * chunked through ImageTransfers) under `<run>/clipboard/` and types the staged path into the program.
 *
 * The path goes in bracketed-paste markers only when the program asked for them (`?2004h`), never with
 * Enter: the operator decides when the prompt is submitted. A request preceded by StageOnly is staged but
 * not typed. The host learns the path from ImageStaged (sent before the success response) when it
 * negotiated `image-staged`; otherwise (an upstream host) the capsule tells the operator itself. Every
 * rejection is told to the operator with its reason, whoever the host is.
 */
import { JackinError } from '../../errors.ts';
import type { ImageFormat } from '../../protocol/frames.ts';
import type { ImageReplies, ImageRequest, ImageSink } from '../connection/image-sink.ts';
import { ImageTransfers, type Correlation, type TransferStep } from './image-transfers.ts';
import { ImageStaging, type StagedImage } from '../session/staging.ts';
import { formatBytes } from '../../ui/format-bytes.ts';

/** What the feature needs of the program's session. */
export interface PasteTarget {
  write(bytes: Buffer): boolean;
  readonly modes: { bracketedPaste: boolean };
}

export interface ImageFeatureOptions {
  runDir: string;
  session: PasteTarget;
  maxBytes?: number;
  log?: (line: string) => void;
  /** Injected for tests (idle drop). */
  transfers?: Omit<ConstructorParameters<typeof ImageTransfers>[0], 'stage' | 'onIdleDrop'>;
}

/** StageOnly ids remembered at most; a host sends one right before its image, so a few suffice. */
const MAX_STAGE_ONLY_IDS = 64;
const PASTE_START = '\x1b[200~';
const PASTE_END = '\x1b[201~';

/** The bytes typed into the program for a staged path. */
export function pasteBytes(path: string, bracketed: boolean): Buffer {
  return Buffer.from(bracketed ? `${PASTE_START}${path}${PASTE_END}` : path, 'utf8');
}

export class ImageFeature implements ImageSink {
  readonly staging: ImageStaging;
  readonly #transfers: ImageTransfers;
  readonly #session: PasteTarget;
  readonly #log: (line: string) => void;
  readonly #stageOnly = new Set<bigint>();
  /** Where the answers of a chunked transfer go (the connection that started it), for the idle drop. */
  readonly #owners = new Map<bigint, ImageReplies>();
  #lastPasted: StagedImage | null = null;

  constructor(opts: ImageFeatureOptions) {
    this.staging = new ImageStaging(opts.runDir, opts.maxBytes === undefined ? {} : { maxBytes: opts.maxBytes });
    this.#session = opts.session;
    this.#log = opts.log ?? (() => undefined);
    this.#transfers = new ImageTransfers({
      ...opts.transfers,
      ...(opts.maxBytes === undefined ? {} : { maxBytes: opts.maxBytes }),
      stage: (bytes, declared) => this.staging.stage(bytes, declared),
      onIdleDrop: (step) => {
        for (const ev of step.events) {
          const replies = ev.transferId === null ? undefined : this.#owners.get(ev.transferId);
          if (ev.transferId !== null) this.#owners.delete(ev.transferId);
          if (replies !== undefined) this.#apply(step, replies, null);
        }
      },
    });
  }

  /** The image last pasted (typed into the program; not a stage-only one): what the clipboard shims read. */
  get lastPasted(): StagedImage | null {
    return this.#lastPasted;
  }

  /** Transfers in progress (tests). */
  get activeTransfers(): number {
    return this.#transfers.active;
  }

  stageOnly(requestId: bigint): void {
    this.#stageOnly.add(requestId);
    if (this.#stageOnly.size > MAX_STAGE_ONLY_IDS) {
      const oldest = this.#stageOnly.values().next().value;
      if (oldest !== undefined) this.#stageOnly.delete(oldest);
    }
  }

  async handle(request: ImageRequest, replies: ImageReplies): Promise<void> {
    const { op, requestId, context } = request;
    const from: Correlation = { requestId, context };
    switch (op.kind) {
      case 'whole': {
        let staged: StagedImage;
        try {
          staged = await this.staging.stage(op.bytes, op.format);
        } catch (e) {
          this.#reject(replies, requestId, toJackinError(e));
          return;
        }
        this.#deliver(staged, requestId, replies);
        if (requestId !== null) replies.respond(requestId, 'success');
        return;
      }
      case 'start': {
        const step = this.#transfers.start(from, op);
        if (step.events.length === 0) this.#owners.set(op.transferId, replies);
        this.#apply(step, replies, requestId);
        return;
      }
      case 'chunk':
        this.#apply(this.#transfers.chunk(from, op), replies, requestId);
        return;
      case 'end': {
        const step = await this.#transfers.end(from, op);
        this.#owners.delete(op.transferId);
        this.#apply(step, replies, requestId);
        return;
      }
      case 'error':
        this.#apply(this.#transfers.abort(from, op.message), replies, requestId);
        return;
      default: {
        const never: never = op;
        throw new TypeError(`unexpected image op ${JSON.stringify(never)}`);
      }
    }
  }

  connectionClosed(): void {
    this.#transfers.dispose();
    this.#owners.clear();
    this.#stageOnly.clear();
  }

  /** Removes the staging directory (capsule exit) and drops transfers. */
  async dispose(): Promise<void> {
    this.connectionClosed();
    await this.staging.cleanup();
  }

  /** Events first (the path is typed and ImageStaged sent before the success response), then responses. */
  #apply(step: TransferStep, replies: ImageReplies, requestId: bigint | null): void {
    for (const ev of step.events) {
      switch (ev.kind) {
        case 'staged': {
          // The End carries the Start's id (ImageTransfers checks it), so the response goes under it too.
          const owner = step.responses[0]?.requestId ?? requestId;
          this.#deliver(ev.staged, owner, replies);
          break;
        }
        case 'rejected':
          this.#notifyRejected(replies, ev.error);
          break;
        default: {
          const never: never = ev;
          throw new TypeError(`unexpected transfer event ${JSON.stringify(never)}`);
        }
      }
    }
    for (const r of step.responses) {
      if (r.result !== 'success') this.#stageOnly.delete(r.requestId);
      replies.respond(r.requestId, r.result);
    }
  }

  /** Types the path (unless stage-only), reports ImageStaged or a notice. */
  #deliver(staged: StagedImage, requestId: bigint | null, replies: ImageReplies): void {
    const stageOnly = requestId !== null && this.#stageOnly.delete(requestId);
    if (!stageOnly) {
      this.#session.write(pasteBytes(staged.path, this.#session.modes.bracketedPaste));
      this.#lastPasted = staged;
    }
    this.#log(`staged ${staged.path} (${staged.bytes} bytes, ${staged.format})${stageOnly ? ', not pasted (stage only)' : ''}`);
    const told = requestId !== null && replies.imageStaged?.(requestId, staged.bytes, !stageOnly, staged.path) === true;
    if (told) return;
    const size = `${formatBytes(staged.bytes)} ${staged.format}${declaredNote(staged.declaredFormat, staged.format)}`;
    replies.notify('success', stageOnly ? `Image staged, not pasted (stage only): ${staged.path} (${size})` : `Image staged: ${staged.path} (${size})`);
  }

  #reject(replies: ImageReplies, requestId: bigint | null, error: JackinError): void {
    if (requestId !== null) this.#stageOnly.delete(requestId);
    this.#notifyRejected(replies, error);
    if (requestId !== null) replies.respond(requestId, 'rejected');
  }

  #notifyRejected(replies: ImageReplies, error: JackinError): void {
    this.#log(`image rejected (${error.code}): ${error.message}`);
    replies.notify('error', `Image rejected: ${error.message}`);
  }
}

function declaredNote(declared: ImageFormat | undefined, actual: ImageFormat): string {
  return declared === undefined ? '' : `; the host said ${declared}, the bytes are ${actual}`;
}

function toJackinError(e: unknown): JackinError {
  return e instanceof JackinError ? e : new JackinError('E_STAGING_FAILED', e instanceof Error ? e.message : String(e), { cause: e });
}
