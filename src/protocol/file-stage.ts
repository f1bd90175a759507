/**
 * The file staging extension (docs/protocol.md section 8.14, feature `file-stage` v1): the chunked,
 * SHA-256-verified image transfer of section 4, generalised to any regular file and carried on a control
 * connection after a `stage` request, so it never competes with the attach connection and works whether or
 * not someone is attached, over the socket and over exec relays alike.
 *
 *   host → capsule  FileStageChunk (0x24): transfer id u64 | offset u64 | bytes (1 .. 1 MiB)
 *   host → capsule  FileStageEnd   (0x25): transfer id u64 | sha256 (32 bytes)
 *   capsule → host  FileStaged     (0xA6): transfer id u64 | bytes u64 | staged path UTF-8 (1..4096)
 *
 * These frames are valid only on a stage connection: they are not part of the attach unions, so an attach
 * decoder reports them as unknown tags (payload errors, skipped). Their caps are in FRAME_CAPS.
 */
import { FrameDecoder } from './decoder.ts';
import { decodeServerPayload } from './decode-payload.ts';
import { SERVER_TAGS, type NoticeLevel } from './frames.ts';
import { FRAME_HEADER_BYTES, MAX_CHUNK_BYTES, MAX_STAGED_PATH_BYTES, SHA256_BYTES } from './limits.ts';
import { PayloadReader } from './payload-reader.ts';
import { PROTOCOL_CODES, ProtocolError, hex8 } from './protocol-error.ts';
import { encodeServerFrame, frameHeader } from './encode.ts';

export const FILE_STAGE_TAGS = { FileStageChunk: 0x24, FileStageEnd: 0x25, FileStaged: 0xa6 } as const;

/** What the host sends on a stage connection after the `stage` reply. */
export type StageClientFrame =
  | { type: 'FileStageChunk'; transferId: bigint; offset: number; bytes: Buffer }
  | { type: 'FileStageEnd'; transferId: bigint; sha256: Buffer };

/** What the capsule answers: the staged path, or a Notice whose text is `E_CODE: message`. */
export type StageServerFrame = { type: 'FileStaged'; transferId: bigint; bytes: number; path: string } | { type: 'Notice'; level: NoticeLevel; text: string };

/** Bytes before the data of a FileStageChunk frame: frame header, transfer id, offset. */
const STAGE_CHUNK_HEADER_BYTES = FRAME_HEADER_BYTES + 16;

/** Everything of a FileStageChunk frame but its data, so the sender writes header and data without a copy. */
export function encodeStageChunkHeader(transferId: bigint, offset: number, dataBytes: number): Buffer {
  if (!Number.isSafeInteger(dataBytes) || dataBytes < 1 || dataBytes > MAX_CHUNK_BYTES) {
    throw new RangeError(`stage chunk of ${dataBytes} bytes is outside 1..${MAX_CHUNK_BYTES}`);
  }
  const b = Buffer.allocUnsafe(STAGE_CHUNK_HEADER_BYTES);
  frameHeader(FILE_STAGE_TAGS.FileStageChunk, 16 + dataBytes).copy(b, 0);
  b.writeBigUInt64BE(transferId, 5);
  b.writeBigUInt64BE(BigInt(offset), 13);
  return b;
}

export function encodeStageClientFrame(f: StageClientFrame): Buffer {
  switch (f.type) {
    case 'FileStageChunk':
      return Buffer.concat([encodeStageChunkHeader(f.transferId, f.offset, f.bytes.length), f.bytes]);
    case 'FileStageEnd': {
      if (f.sha256.length !== SHA256_BYTES) throw new RangeError(`sha256 is ${f.sha256.length} bytes, not ${SHA256_BYTES}`);
      const b = Buffer.concat([frameHeader(FILE_STAGE_TAGS.FileStageEnd, 8 + SHA256_BYTES), Buffer.alloc(8), f.sha256]);
      b.writeBigUInt64BE(f.transferId, FRAME_HEADER_BYTES);
      return b;
    }
    default: {
      const never: never = f;
      throw new TypeError(`unexpected stage frame ${JSON.stringify(never)}`);
    }
  }
}

export function encodeStageServerFrame(f: StageServerFrame): Buffer {
  switch (f.type) {
    case 'FileStaged': {
      const path = Buffer.from(f.path, 'utf8');
      if (path.length < 1 || path.length > MAX_STAGED_PATH_BYTES)
        throw new RangeError(`staged path is ${path.length} bytes, outside 1..${MAX_STAGED_PATH_BYTES}`);
      const b = Buffer.concat([frameHeader(FILE_STAGE_TAGS.FileStaged, 16 + path.length), Buffer.alloc(16), path]);
      b.writeBigUInt64BE(f.transferId, FRAME_HEADER_BYTES);
      b.writeBigUInt64BE(BigInt(f.bytes), FRAME_HEADER_BYTES + 8);
      return b;
    }
    case 'Notice':
      return encodeServerFrame(f);
    default: {
      const never: never = f;
      throw new TypeError(`unexpected stage frame ${JSON.stringify(never)}`);
    }
  }
}

const fatal = new TextDecoder('utf-8', { fatal: true });

function unknown(tag: number, who: string): ProtocolError {
  return new ProtocolError(PROTOCOL_CODES.unknownTag, 'payload', `${hex8(tag)} is not a ${who} frame of a stage connection`, { tag });
}

function decodeStageClientPayload(tag: number, payload: Buffer): StageClientFrame {
  switch (tag) {
    case FILE_STAGE_TAGS.FileStageChunk: {
      const r = new PayloadReader(payload, 'FileStageChunk', tag);
      const transferId = r.u64('transfer id');
      const offset = r.u64Number('offset');
      const bytes = r.rest();
      if (bytes.length < 1 || bytes.length > MAX_CHUNK_BYTES) r.fail(PROTOCOL_CODES.badLength, `chunk size ${bytes.length} is outside 1..${MAX_CHUNK_BYTES}`);
      return { type: 'FileStageChunk', transferId, offset, bytes };
    }
    case FILE_STAGE_TAGS.FileStageEnd: {
      const r = new PayloadReader(payload, 'FileStageEnd', tag);
      const transferId = r.u64('transfer id');
      const sha256 = r.bytes(SHA256_BYTES, 'sha256');
      r.end();
      return { type: 'FileStageEnd', transferId, sha256 };
    }
    default:
      throw unknown(tag, 'client');
  }
}

function decodeStageServerPayload(tag: number, payload: Buffer): StageServerFrame {
  switch (tag) {
    case FILE_STAGE_TAGS.FileStaged: {
      const r = new PayloadReader(payload, 'FileStaged', tag);
      const transferId = r.u64('transfer id');
      const bytes = r.u64Number('bytes');
      const raw = r.rest();
      if (raw.length < 1 || raw.length > MAX_STAGED_PATH_BYTES)
        r.fail(PROTOCOL_CODES.badLength, `staged path length ${raw.length} is outside 1..${MAX_STAGED_PATH_BYTES}`);
      let path: string;
      try {
        path = fatal.decode(raw);
      } catch (cause) {
        return r.fail(PROTOCOL_CODES.badUtf8, 'staged path is not valid UTF-8', { cause });
      }
      return { type: 'FileStaged', transferId, bytes, path };
    }
    case SERVER_TAGS.Notice: {
      const f = decodeServerPayload(tag, payload);
      if (f.type !== 'Notice') throw unknown(tag, 'server');
      return f;
    }
    default:
      throw unknown(tag, 'server');
  }
}

/**
 * What the capsule reads on a stage connection. `allocate` may pool payload buffers; with `copyInput`, the
 * pushed chunks are borrowed (see FrameDecoder).
 */
export function createStageClientDecoder(allocate?: (n: number) => Buffer, { copyInput = false } = {}): FrameDecoder<StageClientFrame> {
  return new FrameDecoder(decodeStageClientPayload, allocate, null, { copyInput });
}

/** What the host reads on a stage connection. */
export function createStageServerDecoder(): FrameDecoder<StageServerFrame> {
  return new FrameDecoder(decodeStageServerPayload);
}
