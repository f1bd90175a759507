/**
 * Field readers shared by the client and server payload decoders (decode-client.ts, decode-server.ts): each
 * fails with a `payload` ProtocolError naming the field.
 */
import { validateContext } from './context.ts';
import { IMAGE_FORMATS, type AttachContext, type ImageChunk, type ImageEnd, type ImageFormat, type ImageStart, type ImageWhole } from './frames.ts';
import { MAX_CHUNK_BYTES, MAX_IMAGE_TRANSFER_BYTES, MAX_SINGLE_IMAGE_BYTES, SHA256_BYTES } from './limits.ts';
import type { PayloadReader } from './payload-reader.ts';
import { PROTOCOL_CODES } from './protocol-error.ts';

const fatal = new TextDecoder('utf-8', { fatal: true });

export function enumByte<T>(r: PayloadReader, values: readonly T[], field: string, offset = 0): T {
  const b = r.u8(field);
  const v = values[b - offset];
  if (b < offset || v === undefined) r.fail(PROTOCOL_CODES.badEnum, `${field} ${b} is not a known value`);
  return v;
}

function imageFormat(r: PayloadReader): ImageFormat {
  return enumByte(r, IMAGE_FORMATS, 'image format', 1);
}

export function parseContextJson(r: PayloadReader, len: number, required: boolean, requestId?: bigint): AttachContext | null {
  const extra = requestId === undefined ? {} : { requestId };
  // A context that is not UTF-8 is an invalid context like any other (AttachControl answers it with
  // "invalid correlation"), so it gets the context code rather than the generic UTF-8 one.
  const raw = r.bytes(len, 'context');
  let text: string;
  try {
    text = fatal.decode(raw);
  } catch (cause) {
    return r.fail(PROTOCOL_CODES.badContext, 'context is not valid UTF-8', { ...extra, cause });
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (cause) {
    return r.fail(PROTOCOL_CODES.badContext, `context is not JSON: ${JSON.stringify(text.slice(0, 64))}`, { ...extra, cause });
  }
  if (value === null && !required) return null;
  const v = validateContext(value);
  if (!v.ok) return r.fail(PROTOCOL_CODES.badContext, v.reason, extra);
  return v.context;
}

export function imageWhole(r: PayloadReader): ImageWhole {
  const format = imageFormat(r);
  const bytes = r.rest();
  if (bytes.length < 1 || bytes.length > MAX_SINGLE_IMAGE_BYTES) {
    r.fail(PROTOCOL_CODES.badLength, `image size ${bytes.length} is outside 1..${MAX_SINGLE_IMAGE_BYTES}`);
  }
  return { format, bytes };
}

export function imageStart(r: PayloadReader): ImageStart {
  const transferId = r.u64('transfer id');
  const format = imageFormat(r);
  const size = r.u64Number('size');
  if (size < 1 || size > MAX_IMAGE_TRANSFER_BYTES) {
    r.fail(PROTOCOL_CODES.badValue, `image transfer size ${size} is outside 1..${MAX_IMAGE_TRANSFER_BYTES}`);
  }
  r.end();
  return { transferId, format, size };
}

export function imageChunk(r: PayloadReader): ImageChunk {
  const transferId = r.u64('transfer id');
  const offset = r.u64Number('offset');
  const bytes = r.rest();
  if (bytes.length < 1 || bytes.length > MAX_CHUNK_BYTES) {
    r.fail(PROTOCOL_CODES.badLength, `chunk size ${bytes.length} is outside 1..${MAX_CHUNK_BYTES}`);
  }
  return { transferId, offset, bytes };
}

export function imageEnd(r: PayloadReader): ImageEnd {
  const transferId = r.u64('transfer id');
  const sha256 = r.bytes(SHA256_BYTES, 'sha256');
  r.end();
  return { transferId, sha256 };
}

export function boundedRest(r: PayloadReader, min: number, max: number, field: string): string {
  const b = r.rest();
  if (b.length < min || b.length > max) r.fail(PROTOCOL_CODES.badLength, `${field} length ${b.length} is outside ${min}..${max}`);
  return decodeStrict(r, b, field);
}

export function decodeStrict(r: PayloadReader, b: Buffer, field: string): string {
  try {
    return fatal.decode(b);
  } catch (cause) {
    return r.fail(PROTOCOL_CODES.badUtf8, `${field} is not valid UTF-8`, { cause });
  }
}

export function empty(r: PayloadReader): void {
  r.end();
}
