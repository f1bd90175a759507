/**
 * The frames that carry one image from the host to the capsule (protocol.md section 4): one AttachControl
 * ClipboardImage up to SINGLE_FRAME_MAX_BYTES, else ClipboardImageStart, 1 MiB chunks and an End with the
 * SHA-256 of the whole; a StageOnly first when the image is only to be staged.
 */
import { nodeCrypto } from '../../lazy-builtins.ts';
import type { AttachContext, ClientFrame, ImageFormat } from '../../protocol/index.ts';
import { LARGE_FRAME_CAP, MAX_CHUNK_BYTES, MAX_SINGLE_IMAGE_BYTES } from '../../protocol/limits.ts';

const CONTEXT: AttachContext = { v: 1 };
/** kind u8 + request id u64 + context length u16 + context + format u8: what an AttachControl image adds. */
const CONTROL_IMAGE_OVERHEAD = 1 + 8 + 2 + Buffer.byteLength(JSON.stringify(CONTEXT)) + 1;
/** Largest image sent as one AttachControl ClipboardImage frame; larger ones go chunked. */
const SINGLE_FRAME_MAX_BYTES = Math.min(MAX_SINGLE_IMAGE_BYTES, LARGE_FRAME_CAP - CONTROL_IMAGE_OVERHEAD);

/** The frames of one image request, in order: [StageOnly], then one ClipboardImage or Start/Chunks/End. */
export function* imageFrames(
  requestId: bigint,
  format: ImageFormat,
  bytes: Buffer,
  opts: { stageOnly: boolean; singleMax?: number; chunkBytes?: number },
): Generator<ClientFrame> {
  if (opts.stageOnly) yield { type: 'StageOnly', requestId };
  const control = (body: Extract<ClientFrame, { type: 'AttachControl' }>['body']): ClientFrame => ({
    type: 'AttachControl',
    requestId,
    context: CONTEXT,
    body,
  });
  if (bytes.length <= (opts.singleMax ?? SINGLE_FRAME_MAX_BYTES)) {
    yield control({ kind: 'ClipboardImage', format, bytes });
    return;
  }
  // The transfer id only has to be unique among our transfers in progress: the request id is.
  const transferId = requestId;
  const step = opts.chunkBytes ?? MAX_CHUNK_BYTES;
  yield control({ kind: 'ClipboardImageStart', transferId, format, size: bytes.length });
  const hash = nodeCrypto().createHash('sha256');
  for (let offset = 0; offset < bytes.length; offset += step) {
    const part = bytes.subarray(offset, offset + step);
    hash.update(part);
    yield control({ kind: 'ClipboardImageChunk', transferId, offset, bytes: part });
  }
  yield control({ kind: 'ClipboardImageEnd', transferId, sha256: hash.digest() });
}
