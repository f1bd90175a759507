/**
 * Where image frames go (legacy 0x08..0x0C and AttachControl kinds 4..8). `jackin-capsule serve` stages them
 * (ImageFeature, src/capsule/images/); a CapsuleServer given no sink rejects them, visibly (rejectingImageSink).
 */
import type {
  AttachContext,
  ClientFrame,
  ControlBody,
  ControlResult,
  ImageChunk,
  ImageEnd,
  ImageStart,
  ImageWhole,
  NoticeLevel,
} from '../../protocol/index.ts';

export type ImageOp =
  | ({ kind: 'whole' } & ImageWhole)
  | ({ kind: 'start' } & ImageStart)
  | ({ kind: 'chunk' } & ImageChunk)
  | ({ kind: 'end' } & ImageEnd)
  | { kind: 'error'; message: string };

const IMAGE_NAMES = ['ClipboardImage', 'ClipboardImageStart', 'ClipboardImageChunk', 'ClipboardImageEnd', 'ClipboardImageError'] as const;
type ImageName = (typeof IMAGE_NAMES)[number];
const isImageName = (name: string): boolean => (IMAGE_NAMES as readonly string[]).includes(name);
/** An image operation in its legacy frame form (0x08..0x0C). */
export type ImageFrame = Extract<ClientFrame, { type: ImageName }>;
/** An image operation in its AttachControl body form (kinds 4..8). */
export type ImageBody = Extract<ControlBody, { kind: ImageName }>;

export function isImageFrame(f: ClientFrame): f is ImageFrame {
  return isImageName(f.type);
}

export function isImageBody(b: ControlBody): b is ImageBody {
  return isImageName(b.kind);
}

/** The one mapping of both frame forms to the operation a sink handles (the fields are the same). */
export function imageOp(src: ImageFrame | ImageBody): ImageOp {
  const body = ('type' in src ? { ...src, kind: src.type } : src) as ImageBody;
  switch (body.kind) {
    case 'ClipboardImage':
      return { kind: 'whole', format: body.format, bytes: body.bytes };
    case 'ClipboardImageStart':
      return { kind: 'start', transferId: body.transferId, format: body.format, size: body.size };
    case 'ClipboardImageChunk':
      return { kind: 'chunk', transferId: body.transferId, offset: body.offset, bytes: body.bytes };
    case 'ClipboardImageEnd':
      return { kind: 'end', transferId: body.transferId, sha256: body.sha256 };
    case 'ClipboardImageError':
      return { kind: 'error', message: body.message };
  }
}

export interface ImageRequest {
  op: ImageOp;
  /** The AttachControl request id, or null for a legacy frame (which gets no response). */
  requestId: bigint | null;
  context: AttachContext | null;
}

/** What a sink may do back on the connection the request came from. */
export interface ImageReplies {
  /** Sends an AttachControlResponse (only meaningful for AttachControl requests). */
  respond(requestId: bigint, result: ControlResult): void;
  /** Tells the operator (a Notice when the host negotiated notices). */
  notify(level: NoticeLevel, text: string): void;
  /**
   * Sends ImageStaged when the host negotiated `image-staged` (it then tells the operator itself);
   * returns false without sending otherwise.
   */
  imageStaged?(requestId: bigint, bytes: number, pasted: boolean, path: string): boolean;
}

export interface ImageSink {
  /** Handles one request. Per protocol.md section 4 the sink decides which responses to send and under
   * which id (a chunked transfer answers under its Start's id). */
  handle(request: ImageRequest, replies: ImageReplies): void | Promise<void>;
  /** Drops every transfer of a connection that closed. */
  connectionClosed?(): void;
  /** StageOnly (0x23): the image request with this id is staged but its path is not typed. */
  stageOnly?(requestId: bigint): void;
}

/** The default: rejects whole images and transfer starts, with a notice; chunks of a transfer that was
 * never accepted get no further answer (its End was already answered by the rejected Start). */
export const rejectingImageSink: ImageSink = {
  handle(request, replies) {
    const { op, requestId } = request;
    if (op.kind !== 'whole' && op.kind !== 'start') return;
    replies.notify('error', 'image paste is not available in this capsule: image rejected');
    if (requestId !== null) replies.respond(requestId, 'rejected');
  },
};
