/**
 * Frame encoders. The encoder trusts its caller's types but checks sizes: a payload over its tag's cap, a
 * text field outside its bounds, or a digest of the wrong length is a programmer error (RangeError), never
 * a frame on the wire. Callers bound container-supplied text first (truncateUtf8).
 */
import { encodeFeatureList, WELCOME_EXTENSION_MAGIC } from './features.ts';
import {
  CLIENT_TAGS,
  CONTROL_KINDS,
  CONTROL_RESULTS,
  IMAGE_FORMAT_CODES,
  LISTED_LINK_SOURCES,
  MODE_BITS,
  NOTICE_LEVELS,
  RESOLVED_KINDS,
  RESOLVE_TARGETS,
  SERVER_TAGS,
  assertNever,
  capForTag,
  type AttachContext,
  type ClientFrame,
  type ControlBody,
  type ImageChunk,
  type ImageEnd,
  type ImageStart,
  type ImageWhole,
  type Rgb,
  type ServerFrame,
  type TriState,
} from './frames.ts';
import {
  FRAME_HEADER_BYTES,
  MAX_EXPORT_NAME_BYTES,
  MAX_CHUNK_BYTES,
  MAX_EXPORT_SOURCE_BYTES,
  MAX_HOST_NOTICE_BYTES,
  MAX_IMAGE_ERROR_BYTES,
  MAX_LISTED_LINKS,
  MAX_LISTENING_PORTS,
  MAX_LISTED_URL_BYTES,
  MAX_RESOLVED_TEXT_BYTES,
  MAX_REVEAL_PATH_BYTES,
  MAX_STAGED_PATH_BYTES,
  SHA256_BYTES,
} from './limits.ts';

const TRI: Record<TriState, number> = { unset: 0, false: 1, true: 2 };
const IMAGE_PROTOCOL = { unset: 0, unsupported: 1, kitty: 2 } as const;

/** A growable list of payload parts. */
class Parts {
  readonly list: Buffer[] = [];
  u8(v: number): this {
    this.list.push(Buffer.from([v]));
    return this;
  }
  u16(v: number): this {
    const b = Buffer.alloc(2);
    b.writeUInt16BE(v);
    this.list.push(b);
    return this;
  }
  u32(v: number): this {
    const b = Buffer.alloc(4);
    b.writeUInt32BE(v);
    this.list.push(b);
    return this;
  }
  i32(v: number): this {
    const b = Buffer.alloc(4);
    b.writeInt32BE(v);
    this.list.push(b);
    return this;
  }
  u64(v: bigint | number): this {
    const b = Buffer.alloc(8);
    b.writeBigUInt64BE(BigInt(v));
    this.list.push(b);
    return this;
  }
  bytes(b: Buffer): this {
    this.list.push(b);
    return this;
  }
  text(s: string): this {
    this.list.push(Buffer.from(s, 'utf8'));
    return this;
  }
  /** u16 length + UTF-8 text. */
  text16(s: string): this {
    const b = Buffer.from(s, 'utf8');
    if (b.length > 0xffff) throw new RangeError(`string of ${b.length} bytes does not fit a u16 length`);
    return this.u16(b.length).bytes(b);
  }
  build(): Buffer {
    return Buffer.concat(this.list);
  }
}

function frame(tag: number, payload: Buffer | Buffer[]): Buffer {
  const parts = Array.isArray(payload) ? payload : [payload];
  const length = parts.reduce((n, p) => n + p.length, 0);
  return Buffer.concat([frameHeader(tag, length), ...parts], FRAME_HEADER_BYTES + length);
}

/** The 5-byte header of a frame whose payload is `length` bytes; RangeError over the tag's cap. */
export function frameHeader(tag: number, length: number): Buffer {
  const cap = capForTag(tag);
  if (length > cap) throw new RangeError(`payload of ${length} bytes exceeds the ${cap}-byte cap of tag 0x${tag.toString(16)}`);
  const header = Buffer.alloc(FRAME_HEADER_BYTES);
  header[0] = tag;
  header.writeUInt32BE(length, 1);
  return header;
}

/** Bytes before the data of a FileExportChunk frame: frame header, export id, offset. */
export const EXPORT_CHUNK_HEADER_BYTES = FRAME_HEADER_BYTES + 16;

/**
 * Everything of a FileExportChunk frame except its data, so a sender can write the header and the data
 * buffer as two writes (one writev) instead of copying each 1 MiB chunk into a concatenated frame.
 * `header + data` is byte-identical to encodeServerFrame({type:'FileExportChunk',...}).
 */
export function encodeExportChunkHeader(exportId: bigint, offset: number, dataBytes: number): Buffer {
  if (!Number.isSafeInteger(dataBytes) || dataBytes < 1 || dataBytes > MAX_CHUNK_BYTES) {
    throw new RangeError(`export chunk of ${dataBytes} bytes is outside 1..${MAX_CHUNK_BYTES}`);
  }
  const b = Buffer.allocUnsafe(EXPORT_CHUNK_HEADER_BYTES);
  b[0] = SERVER_TAGS.FileExportChunk;
  b.writeUInt32BE(16 + dataBytes, 1);
  b.writeBigUInt64BE(exportId, 5);
  b.writeBigUInt64BE(BigInt(offset), 13);
  return b;
}

function bounded(s: string, min: number, max: number, field: string): Buffer {
  const b = Buffer.from(s, 'utf8');
  if (b.length < min || b.length > max) throw new RangeError(`${field} is ${b.length} bytes, outside ${min}..${max}`);
  return b;
}

function contextJson(c: AttachContext | null): string {
  return JSON.stringify(c);
}

function colour(p: Parts, c: Rgb | null): void {
  if (c === null) p.u8(0);
  else p.u8(1).u8(c.r).u8(c.g).u8(c.b);
}

function whole(p: Parts, i: ImageWhole): void {
  p.u8(IMAGE_FORMAT_CODES[i.format]).bytes(i.bytes);
}
function start(p: Parts, i: ImageStart): void {
  p.u64(i.transferId).u8(IMAGE_FORMAT_CODES[i.format]).u64(i.size);
}
function chunk(p: Parts, i: ImageChunk): void {
  p.u64(i.transferId).u64(i.offset).bytes(i.bytes);
}
function end(p: Parts, i: ImageEnd): void {
  if (i.sha256.length !== SHA256_BYTES) throw new RangeError(`sha256 must be ${SHA256_BYTES} bytes, got ${i.sha256.length}`);
  p.u64(i.transferId).bytes(i.sha256);
}

function controlBody(p: Parts, b: ControlBody): void {
  switch (b.kind) {
    case 'Detach':
    case 'FocusIn':
    case 'FocusOut':
      return;
    case 'ClipboardImage':
      return whole(p, b);
    case 'ClipboardImageStart':
      return start(p, b);
    case 'ClipboardImageChunk':
      return chunk(p, b);
    case 'ClipboardImageEnd':
      return end(p, b);
    case 'ClipboardImageError':
      p.bytes(bounded(b.message, 1, MAX_IMAGE_ERROR_BYTES, 'message'));
      return;
    default:
      assertNever(b);
  }
}

export function encodeClientFrame(f: ClientFrame): Buffer {
  const p = new Parts();
  switch (f.type) {
    case 'Hello': {
      p.u16(f.rows).u16(f.cols);
      switch (f.spawn.kind) {
        case 'none':
          p.u8(0).u16(0);
          break;
        case 'shell':
          p.u8(1).u16(0);
          break;
        case 'agent':
          p.u8(2).text16(f.spawn.agent);
          break;
        case 'agent-provider':
          p.u8(3).text16(f.spawn.agent).text16(f.spawn.provider);
          break;
        default:
          assertNever(f.spawn);
      }
      p.u16(f.env.length);
      for (const [k, v] of f.env) {
        const kb = Buffer.from(k, 'utf8');
        const vb = Buffer.from(v, 'utf8');
        p.u16(kb.length).u32(vb.length).bytes(kb).bytes(vb);
      }
      if (f.focus === null) p.u8(0);
      else p.u8(1).u64(f.focus);
      p.text16(f.term ?? '')
        .text16(f.termProgram ?? '')
        .text16(f.colorTerm ?? '');
      colour(p, f.fg);
      colour(p, f.bg);
      const c = f.caps;
      p.u8(TRI[c.pointerShapes]).u8(TRI[c.truecolor]).u8(TRI[c.synchronizedOutput]).u8(TRI[c.osc8]).u8(TRI[c.underlineStyle]);
      p.u8(IMAGE_PROTOCOL[c.imageProtocol]);
      p.text16(contextJson(f.context));
      return frame(CLIENT_TAGS.Hello, p.list);
    }
    case 'Resize':
      return frame(CLIENT_TAGS.Resize, p.u16(f.rows).u16(f.cols).list);
    case 'Input':
      return frame(CLIENT_TAGS.Input, f.bytes);
    case 'Command':
      return frame(CLIENT_TAGS.Command, f.bytes);
    case 'Detach':
    case 'FocusIn':
    case 'FocusOut':
    case 'Repaint':
      return frame(CLIENT_TAGS[f.type], []);
    case 'ClipboardImage':
      whole(p, f);
      return frame(CLIENT_TAGS.ClipboardImage, p.list);
    case 'ClipboardImageStart':
      start(p, f);
      return frame(CLIENT_TAGS.ClipboardImageStart, p.list);
    case 'ClipboardImageChunk':
      chunk(p, f);
      return frame(CLIENT_TAGS.ClipboardImageChunk, p.list);
    case 'ClipboardImageEnd':
      end(p, f);
      return frame(CLIENT_TAGS.ClipboardImageEnd, p.list);
    case 'ClipboardImageError':
      return frame(CLIENT_TAGS.ClipboardImageError, p.bytes(bounded(f.message, 1, MAX_IMAGE_ERROR_BYTES, 'message')).list);
    case 'HostNotice':
      return frame(CLIENT_TAGS.HostNotice, p.bytes(bounded(f.text, 1, MAX_HOST_NOTICE_BYTES, 'notice text')).list);
    case 'AttachControl':
      p.u8(CONTROL_KINDS[f.body.kind]).u64(f.requestId).text16(contextJson(f.context));
      controlBody(p, f.body);
      return frame(CLIENT_TAGS.AttachControl, p.list);
    case 'ExtHello':
      return frame(CLIENT_TAGS.ExtHello, encodeFeatureList(f.features));
    case 'Resolve':
      p.u64(f.requestId).u8(RESOLVE_TARGETS.indexOf(f.target) + 1);
      if (f.at === null) p.u16(0xffff).u16(0xffff);
      else p.u16(f.at.row).u16(f.at.col);
      return frame(CLIENT_TAGS.Resolve, p.list);
    case 'StageOnly':
      return frame(CLIENT_TAGS.StageOnly, p.u64(f.requestId).list);
    case 'ListLinks':
      return frame(CLIENT_TAGS.ListLinks, p.u64(f.requestId).list);
    case 'HoldReplies':
      return frame(CLIENT_TAGS.HoldReplies, p.u8(f.held ? 1 : 0).list);
    default:
      return assertNever(f);
  }
}

/**
 * An Output frame whose payload is `parts` one after the other, as buffers to write in order (with one
 * writev): the header, then the parts themselves, not copied. The bytes are encodeServerFrame's Output.
 */
export function outputFrameBuffers(parts: readonly Buffer[]): Buffer[] {
  let length = 0;
  for (const p of parts) length += p.length;
  return [frameHeader(SERVER_TAGS.Output, length), ...parts];
}

export function encodeServerFrame(f: ServerFrame): Buffer {
  const p = new Parts();
  switch (f.type) {
    case 'Welcome':
      p.u32(f.sessions);
      if (f.features !== null) p.bytes(WELCOME_EXTENSION_MAGIC).bytes(encodeFeatureList(f.features));
      return frame(SERVER_TAGS.Welcome, p.list);
    case 'Output':
      return frame(SERVER_TAGS.Output, f.bytes);
    case 'SessionList':
      return frame(SERVER_TAGS.SessionList, p.text(f.json).list);
    case 'Shutdown':
      return frame(SERVER_TAGS.Shutdown, f.reason === null ? [] : p.text(f.reason).list);
    case 'Bell':
    case 'HostStageImageFromClipboardPath':
    case 'HostPasteImageFromClipboard':
    case 'HostStageImageFromClipboard':
      return frame(SERVER_TAGS[f.type], []);
    case 'HostOpenUrl':
      return frame(SERVER_TAGS.HostOpenUrl, p.text(f.url).list);
    case 'FileExportStart': {
      const source = bounded(f.source, 1, MAX_EXPORT_SOURCE_BYTES, 'export source');
      const name = bounded(f.name, 1, MAX_EXPORT_NAME_BYTES, 'export name');
      p.u64(f.exportId)
        .u64(f.size)
        .u16(source.length)
        .u16(name.length)
        .u8(f.reveal ? 1 : 0)
        .u8(f.open ? 1 : 0);
      p.bytes(source).bytes(name);
      return frame(SERVER_TAGS.FileExportStart, p.list);
    }
    case 'FileExportChunk':
      chunk(p, { transferId: f.exportId, offset: f.offset, bytes: f.bytes });
      return frame(SERVER_TAGS.FileExportChunk, p.list);
    case 'FileExportEnd':
      end(p, { transferId: f.exportId, sha256: f.sha256 });
      return frame(SERVER_TAGS.FileExportEnd, p.list);
    case 'HostRevealPath':
      return frame(SERVER_TAGS.HostRevealPath, p.bytes(bounded(f.path, 1, MAX_REVEAL_PATH_BYTES, 'path')).list);
    case 'AttachControlResponse':
      return frame(SERVER_TAGS.AttachControlResponse, p.u64(f.requestId).u8(CONTROL_RESULTS[f.result]).list);
    case 'ExitStatus':
      return frame(SERVER_TAGS.ExitStatus, p.i32(f.status).list);
    case 'Resolved':
      p.u64(f.requestId).u8(RESOLVED_KINDS.indexOf(f.kind));
      p.bytes(bounded(f.text, f.kind === 'none' ? 0 : 1, f.kind === 'none' ? 0 : MAX_RESOLVED_TEXT_BYTES, 'resolved text'));
      return frame(SERVER_TAGS.Resolved, p.list);
    case 'ImageStaged':
      p.u64(f.requestId)
        .u64(f.bytes)
        .u8(f.pasted ? 1 : 0)
        .bytes(bounded(f.path, 1, MAX_STAGED_PATH_BYTES, 'staged path'));
      return frame(SERVER_TAGS.ImageStaged, p.list);
    case 'Modes': {
      let flags = 0;
      MODE_BITS.forEach((name, bit) => {
        if (f[name]) flags |= 1 << bit;
      });
      return frame(SERVER_TAGS.Modes, p.u16(flags).list);
    }
    case 'RepliesHeld':
      return frame(SERVER_TAGS.RepliesHeld, p.u8(f.held ? 1 : 0).list);
    case 'Ports': {
      if (f.ports.length > MAX_LISTENING_PORTS) throw new RangeError(`${f.ports.length} ports are more than ${MAX_LISTENING_PORTS}`);
      p.u16(f.ports.length);
      let last = 0;
      for (const port of f.ports) {
        if (!Number.isInteger(port) || port <= last || port > 0xffff) throw new RangeError(`ports must be 1..65535, ascending, each once: ${port}`);
        p.u16(port);
        last = port;
      }
      return frame(SERVER_TAGS.Ports, p.list);
    }
    case 'FileExportLength':
      return frame(SERVER_TAGS.FileExportLength, p.u64(f.exportId).u64(f.size).list);
    case 'Links': {
      if (f.links.length > MAX_LISTED_LINKS) throw new RangeError(`${f.links.length} links are more than ${MAX_LISTED_LINKS}`);
      p.u64(f.requestId).u8(f.links.length);
      for (const l of f.links) {
        const url = bounded(l.url, 1, MAX_LISTED_URL_BYTES, 'listed link');
        p.u16(l.row)
          .u16(l.col)
          .u16(l.cells)
          .u8(LISTED_LINK_SOURCES.indexOf(l.source) + 1)
          .u16(url.length)
          .bytes(url);
      }
      return frame(SERVER_TAGS.Links, p.list);
    }
    case 'Notice':
      return frame(SERVER_TAGS.Notice, p.u8(NOTICE_LEVELS.indexOf(f.level)).bytes(bounded(f.text, 1, MAX_HOST_NOTICE_BYTES, 'notice text')).list);
    default:
      return assertNever(f);
  }
}
