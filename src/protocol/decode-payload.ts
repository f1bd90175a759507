/**
 * Strict payload decoders, one per tag and direction. Each throws a `payload` ProtocolError (the stream is
 * still in sync) on any deviation: short payload, trailing bytes, unknown enumerated byte, invalid UTF-8,
 * a length out of range.
 */
import { validateContext } from './context.ts';
import { WELCOME_EXTENSION_MAGIC, readFeatureList } from './features.ts';
import {
  CLIENT_TAGS,
  CONTROL_KINDS,
  IMAGE_FORMATS,
  MODE_BITS,
  NOTICE_LEVELS,
  RESOLVED_KINDS,
  RESOLVE_TARGETS,
  SERVER_TAGS,
  type ProgramModes,
  type AttachContext,
  type Capabilities,
  type ClientFrame,
  type ControlBody,
  type ControlResult,
  type ImageChunk,
  type ImageEnd,
  type ImageFormat,
  type ImageProtocol,
  type ImageStart,
  type ImageWhole,
  type Rgb,
  type ServerFrame,
  type Spawn,
  type TriState,
} from './frames.ts';
import {
  HELLO_MAX_ENV,
  HELLO_MAX_ENV_KEY,
  HELLO_MAX_ENV_VALUE,
  HELLO_MAX_PROVIDER,
  HELLO_MAX_TERM_FIELD,
  MAX_CHUNK_BYTES,
  MAX_EXPORT_NAME_BYTES,
  MAX_EXPORT_SOURCE_BYTES,
  MAX_HOST_NOTICE_BYTES,
  MAX_IMAGE_ERROR_BYTES,
  MAX_IMAGE_TRANSFER_BYTES,
  MAX_RESOLVED_TEXT_BYTES,
  MAX_REVEAL_PATH_BYTES,
  MAX_SINGLE_IMAGE_BYTES,
  MAX_STAGED_PATH_BYTES,
  SHA256_BYTES,
} from './limits.ts';
import { PayloadReader } from './payload-reader.ts';
import { PROTOCOL_CODES, ProtocolError, hex8 } from './protocol-error.ts';

const CLIENT_NAMES = new Map<number, string>(Object.entries(CLIENT_TAGS).map(([k, v]) => [v, k]));
const SERVER_NAMES = new Map<number, string>(Object.entries(SERVER_TAGS).map(([k, v]) => [v, k]));
const CONTROL_NAMES = new Map<number, ControlBody['kind']>(
  Object.entries(CONTROL_KINDS).map(([k, v]) => [v, k as ControlBody['kind']]),
);
const TRI: readonly TriState[] = ['unset', 'false', 'true'];
const IMAGE_PROTOCOLS: readonly ImageProtocol[] = ['unset', 'unsupported', 'kitty'];
const RESULTS: readonly ControlResult[] = ['success', 'invalid-correlation', 'rejected'];
const SAFE_URL = /^(https?:\/\/|mailto:)/i;
const fatal = new TextDecoder('utf-8', { fatal: true });

export function tagName(tag: number): string {
  return CLIENT_NAMES.get(tag) ?? SERVER_NAMES.get(tag) ?? hex8(tag);
}

function enumByte<T>(r: PayloadReader, values: readonly T[], field: string, offset = 0): T {
  const b = r.u8(field);
  const v = values[b - offset];
  if (b < offset || v === undefined) r.fail(PROTOCOL_CODES.badEnum, `${field} ${b} is not a known value`);
  return v;
}

function imageFormat(r: PayloadReader): ImageFormat {
  return enumByte(r, IMAGE_FORMATS, 'image format', 1);
}

function parseContextJson(r: PayloadReader, len: number, required: boolean, requestId?: bigint): AttachContext | null {
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

function decodeHello(r: PayloadReader): ClientFrame {
  const rows = r.u16('rows');
  const cols = r.u16('cols');
  const kind = r.u8('spawn kind');
  const agentLen = r.u16('agent label length');
  const agent = r.text(agentLen, 'agent label');
  let spawn: Spawn;
  switch (kind) {
    case 0:
    case 1:
      if (agentLen !== 0) r.fail(PROTOCOL_CODES.badValue, `spawn kind ${kind} must have an empty agent label`);
      spawn = kind === 0 ? { kind: 'none' } : { kind: 'shell' };
      break;
    case 2:
      if (agentLen === 0) r.fail(PROTOCOL_CODES.badValue, 'agent spawn needs an agent label');
      spawn = { kind: 'agent', agent };
      break;
    case 3: {
      if (agentLen === 0) r.fail(PROTOCOL_CODES.badValue, 'agent spawn needs an agent label');
      const pLen = r.u16('provider length');
      const provider = r.boundedText(pLen, 1, HELLO_MAX_PROVIDER, 'provider label');
      spawn = { kind: 'agent-provider', agent, provider };
      break;
    }
    default:
      return r.fail(PROTOCOL_CODES.badEnum, `spawn kind ${kind} is not a known value`);
  }
  const envCount = r.u16('env count');
  if (envCount > HELLO_MAX_ENV) r.fail(PROTOCOL_CODES.badLength, `env count ${envCount} exceeds ${HELLO_MAX_ENV}`);
  const env: Array<[string, string]> = [];
  for (let i = 0; i < envCount; i++) {
    const kLen = r.u16('env key length');
    const vLen = r.u32('env value length');
    if (kLen > HELLO_MAX_ENV_KEY) r.fail(PROTOCOL_CODES.badLength, `env key length ${kLen} exceeds ${HELLO_MAX_ENV_KEY}`);
    if (vLen > HELLO_MAX_ENV_VALUE) r.fail(PROTOCOL_CODES.badLength, `env value length ${vLen} exceeds ${HELLO_MAX_ENV_VALUE}`);
    env.push([r.text(kLen, 'env key'), r.text(vLen, 'env value')]);
  }
  const focusKind = r.u8('focus kind');
  let focus: bigint | null;
  if (focusKind === 0) focus = null;
  else if (focusKind === 1) focus = r.u64('focus session id');
  else return r.fail(PROTOCOL_CODES.badEnum, `focus kind ${focusKind} is not a known value`);
  const termField = (field: string): string | null => {
    const n = r.u16(`${field} length`);
    if (n > HELLO_MAX_TERM_FIELD) r.fail(PROTOCOL_CODES.badLength, `${field} length ${n} exceeds ${HELLO_MAX_TERM_FIELD}`);
    return n === 0 ? null : r.text(n, field);
  };
  const term = termField('TERM');
  const termProgram = termField('TERM_PROGRAM');
  const colorTerm = termField('COLORTERM');
  const colour = (field: string): Rgb | null => {
    const p = r.u8(`${field} presence`);
    if (p === 0) return null;
    if (p !== 1) r.fail(PROTOCOL_CODES.badEnum, `${field} presence ${p} is not a known value`);
    return { r: r.u8(`${field} red`), g: r.u8(`${field} green`), b: r.u8(`${field} blue`) };
  };
  const fg = colour('foreground');
  const bg = colour('background');
  const caps: Capabilities = {
    pointerShapes: enumByte(r, TRI, 'pointer shapes capability'),
    truecolor: enumByte(r, TRI, 'truecolor capability'),
    synchronizedOutput: enumByte(r, TRI, 'synchronized output capability'),
    osc8: enumByte(r, TRI, 'OSC 8 capability'),
    underlineStyle: enumByte(r, TRI, 'underline style capability'),
    imageProtocol: enumByte(r, IMAGE_PROTOCOLS, 'image protocol capability'),
  };
  const ctxLen = r.u16('context length');
  const context = parseContextJson(r, ctxLen, false);
  r.end();
  return { type: 'Hello', rows, cols, spawn, env, focus, term, termProgram, colorTerm, fg, bg, caps, context };
}

function imageWhole(r: PayloadReader): ImageWhole {
  const format = imageFormat(r);
  const bytes = r.rest();
  if (bytes.length < 1 || bytes.length > MAX_SINGLE_IMAGE_BYTES) {
    r.fail(PROTOCOL_CODES.badLength, `image size ${bytes.length} is outside 1..${MAX_SINGLE_IMAGE_BYTES}`);
  }
  return { format, bytes };
}

function imageStart(r: PayloadReader): ImageStart {
  const transferId = r.u64('transfer id');
  const format = imageFormat(r);
  const size = r.u64Number('size');
  if (size < 1 || size > MAX_IMAGE_TRANSFER_BYTES) {
    r.fail(PROTOCOL_CODES.badValue, `image transfer size ${size} is outside 1..${MAX_IMAGE_TRANSFER_BYTES}`);
  }
  r.end();
  return { transferId, format, size };
}

function chunk(r: PayloadReader): ImageChunk {
  const transferId = r.u64('transfer id');
  const offset = r.u64Number('offset');
  const bytes = r.rest();
  if (bytes.length < 1 || bytes.length > MAX_CHUNK_BYTES) {
    r.fail(PROTOCOL_CODES.badLength, `chunk size ${bytes.length} is outside 1..${MAX_CHUNK_BYTES}`);
  }
  return { transferId, offset, bytes };
}

function end(r: PayloadReader): ImageEnd {
  const transferId = r.u64('transfer id');
  const sha256 = r.bytes(SHA256_BYTES, 'sha256');
  r.end();
  return { transferId, sha256 };
}

function boundedRest(r: PayloadReader, min: number, max: number, field: string): string {
  const b = r.rest();
  if (b.length < min || b.length > max) r.fail(PROTOCOL_CODES.badLength, `${field} length ${b.length} is outside ${min}..${max}`);
  return decodeStrict(r, b, field);
}

function decodeStrict(r: PayloadReader, b: Buffer, field: string): string {
  try {
    return fatal.decode(b);
  } catch (cause) {
    return r.fail(PROTOCOL_CODES.badUtf8, `${field} is not valid UTF-8`, { cause });
  }
}

function empty(r: PayloadReader): void {
  r.end();
}

function decodeAttachControl(r: PayloadReader): ClientFrame {
  const kindByte = r.u8('control kind');
  const requestId = r.u64('request id');
  const ctxLen = r.u16('context length');
  const failWithId = (code: (typeof PROTOCOL_CODES)[keyof typeof PROTOCOL_CODES], message: string): never =>
    r.fail(code, message, { requestId });
  let context: AttachContext;
  let body: ControlBody;
  try {
    // Inside the try: a context that overruns the payload must also carry the request id.
    context = parseContextJson(r, ctxLen, true, requestId) as AttachContext;
    const kind = CONTROL_NAMES.get(kindByte);
    if (kind === undefined) return failWithId(PROTOCOL_CODES.badEnum, `control kind ${kindByte} is not a known value`);
    switch (kind) {
      case 'Detach':
      case 'FocusIn':
      case 'FocusOut':
        r.end();
        body = { kind };
        break;
      case 'ClipboardImage':
        body = { kind, ...imageWhole(r) };
        break;
      case 'ClipboardImageStart':
        body = { kind, ...imageStart(r) };
        break;
      case 'ClipboardImageChunk':
        body = { kind, ...chunk(r) };
        break;
      case 'ClipboardImageEnd':
        body = { kind, ...end(r) };
        break;
      case 'ClipboardImageError':
        body = { kind, message: boundedRest(r, 1, MAX_IMAGE_ERROR_BYTES, 'image error message') };
        break;
    }
  } catch (e) {
    // Re-throw body errors with the request id attached, so the capsule can answer "rejected" under it.
    if (e instanceof ProtocolError && e.requestId === undefined) {
      throw new ProtocolError(e.code as never, e.kind, e.message, { tag: r.tag, requestId, cause: e });
    }
    throw e;
  }
  return { type: 'AttachControl', requestId, context, body };
}

/** Decodes the payload of a frame sent by a client (host → capsule). */
export function decodeClientPayload(tag: number, payload: Buffer): ClientFrame {
  const name = CLIENT_NAMES.get(tag);
  if (name === undefined) {
    throw new ProtocolError(PROTOCOL_CODES.unknownTag, 'payload', `unknown client frame tag ${hex8(tag)}`, { tag });
  }
  const r = new PayloadReader(payload, name, tag);
  switch (tag) {
    case CLIENT_TAGS.Hello:
      return decodeHello(r);
    case CLIENT_TAGS.Resize: {
      // At least 4 bytes; upstream ignores any extra bytes.
      const rows = r.u16('rows');
      const cols = r.u16('cols');
      return { type: 'Resize', rows, cols };
    }
    case CLIENT_TAGS.Input:
      return { type: 'Input', bytes: r.rest() };
    case CLIENT_TAGS.Command:
      return { type: 'Command', bytes: r.rest() };
    case CLIENT_TAGS.Detach:
      empty(r);
      return { type: 'Detach' };
    case CLIENT_TAGS.FocusIn:
      empty(r);
      return { type: 'FocusIn' };
    case CLIENT_TAGS.FocusOut:
      empty(r);
      return { type: 'FocusOut' };
    case CLIENT_TAGS.ClipboardImage:
      return { type: 'ClipboardImage', ...imageWhole(r) };
    case CLIENT_TAGS.ClipboardImageStart:
      return { type: 'ClipboardImageStart', ...imageStart(r) };
    case CLIENT_TAGS.ClipboardImageChunk:
      return { type: 'ClipboardImageChunk', ...chunk(r) };
    case CLIENT_TAGS.ClipboardImageEnd:
      return { type: 'ClipboardImageEnd', ...end(r) };
    case CLIENT_TAGS.ClipboardImageError:
      return { type: 'ClipboardImageError', message: boundedRest(r, 1, MAX_IMAGE_ERROR_BYTES, 'message') };
    case CLIENT_TAGS.HostNotice:
      return { type: 'HostNotice', text: boundedRest(r, 1, MAX_HOST_NOTICE_BYTES, 'notice text') };
    case CLIENT_TAGS.AttachControl:
      return decodeAttachControl(r);
    case CLIENT_TAGS.ExtHello: {
      const features = readFeatureList(r);
      r.end();
      return { type: 'ExtHello', features };
    }
    case CLIENT_TAGS.Repaint:
      empty(r);
      return { type: 'Repaint' };
    case CLIENT_TAGS.Resolve: {
      const requestId = r.u64('request id');
      const target = enumByte(r, RESOLVE_TARGETS, 'resolve target', 1);
      const row = r.u16('row');
      const col = r.u16('col');
      r.end();
      const cursor = row === 0xffff && col === 0xffff;
      return { type: 'Resolve', requestId, target, at: cursor ? null : { row, col } };
    }
    case CLIENT_TAGS.StageOnly: {
      const requestId = r.u64('request id');
      r.end();
      return { type: 'StageOnly', requestId };
    }
    default:
      throw new ProtocolError(PROTOCOL_CODES.unknownTag, 'payload', `unknown client frame tag ${hex8(tag)}`, { tag });
  }
}

/** Decodes the payload of a frame sent by a server (capsule → host). */
export function decodeServerPayload(tag: number, payload: Buffer): ServerFrame {
  const name = SERVER_NAMES.get(tag);
  if (name === undefined) {
    throw new ProtocolError(PROTOCOL_CODES.unknownTag, 'payload', `unknown server frame tag ${hex8(tag)}`, { tag });
  }
  const r = new PayloadReader(payload, name, tag);
  switch (tag) {
    case SERVER_TAGS.Welcome: {
      const sessions = r.u32('session count');
      if (r.remaining === 0) return { type: 'Welcome', sessions, features: null };
      // Any defect in the block is E_BAD_EXTENSIONS (never a generic short/trailing code), so the host has
      // one condition to test before treating the peer as upstream.
      try {
        const magic = r.bytes(WELCOME_EXTENSION_MAGIC.length, 'extension magic');
        if (!magic.equals(WELCOME_EXTENSION_MAGIC)) r.fail(PROTOCOL_CODES.badExtensions, 'extension block has no JX magic');
        const features = readFeatureList(r);
        r.end();
        return { type: 'Welcome', sessions, features };
      } catch (e) {
        if (e instanceof ProtocolError && e.code !== PROTOCOL_CODES.badExtensions) {
          return r.fail(PROTOCOL_CODES.badExtensions, `malformed extension block: ${e.message}`, { cause: e });
        }
        throw e;
      }
    }
    case SERVER_TAGS.Output:
      return { type: 'Output', bytes: r.rest() };
    case SERVER_TAGS.SessionList:
      return { type: 'SessionList', json: decodeStrict(r, r.rest(), 'session list') };
    case SERVER_TAGS.Shutdown: {
      const b = r.rest();
      return { type: 'Shutdown', reason: b.length === 0 ? null : decodeStrict(r, b, 'shutdown reason') };
    }
    case SERVER_TAGS.Bell:
      // The payload of Bell is ignored by definition.
      r.rest();
      return { type: 'Bell' };
    case SERVER_TAGS.HostOpenUrl: {
      const url = decodeStrict(r, r.rest(), 'url');
      if (!SAFE_URL.test(url)) r.fail(PROTOCOL_CODES.badUrl, `URL scheme is not http, https or mailto: ${JSON.stringify(url.slice(0, 32))}`);
      return { type: 'HostOpenUrl', url };
    }
    case SERVER_TAGS.FileExportStart: {
      const exportId = r.u64('export id');
      const size = r.u64Number('size');
      const sourceLen = r.u16('source length');
      const nameLen = r.u16('name length');
      const reveal = enumByte(r, [false, true], 'reveal flag');
      const open = enumByte(r, [false, true], 'open flag');
      const source = r.boundedText(sourceLen, 1, MAX_EXPORT_SOURCE_BYTES, 'source');
      const fileName = r.boundedText(nameLen, 1, MAX_EXPORT_NAME_BYTES, 'name');
      r.end();
      return { type: 'FileExportStart', exportId, size, source, name: fileName, reveal, open };
    }
    case SERVER_TAGS.FileExportChunk: {
      const c = chunk(r);
      return { type: 'FileExportChunk', exportId: c.transferId, offset: c.offset, bytes: c.bytes };
    }
    case SERVER_TAGS.FileExportEnd: {
      const e = end(r);
      return { type: 'FileExportEnd', exportId: e.transferId, sha256: e.sha256 };
    }
    case SERVER_TAGS.HostStageImageFromClipboardPath:
      empty(r);
      return { type: 'HostStageImageFromClipboardPath' };
    case SERVER_TAGS.HostPasteImageFromClipboard:
      empty(r);
      return { type: 'HostPasteImageFromClipboard' };
    case SERVER_TAGS.HostStageImageFromClipboard:
      empty(r);
      return { type: 'HostStageImageFromClipboard' };
    case SERVER_TAGS.HostRevealPath:
      return { type: 'HostRevealPath', path: boundedRest(r, 1, MAX_REVEAL_PATH_BYTES, 'path') };
    case SERVER_TAGS.AttachControlResponse: {
      const requestId = r.u64('request id');
      const result = enumByte(r, RESULTS, 'result');
      r.end();
      return { type: 'AttachControlResponse', requestId, result };
    }
    case SERVER_TAGS.ExitStatus: {
      const status = r.i32('status');
      r.end();
      return { type: 'ExitStatus', status };
    }
    case SERVER_TAGS.Notice: {
      const level = enumByte(r, NOTICE_LEVELS, 'notice level');
      return { type: 'Notice', level, text: boundedRest(r, 1, MAX_HOST_NOTICE_BYTES, 'notice text') };
    }
    case SERVER_TAGS.Resolved: {
      const requestId = r.u64('request id');
      const kind = enumByte(r, RESOLVED_KINDS, 'resolved kind');
      const text = boundedRest(r, kind === 'none' ? 0 : 1, kind === 'none' ? 0 : MAX_RESOLVED_TEXT_BYTES, 'resolved text');
      return { type: 'Resolved', requestId, kind, text };
    }
    case SERVER_TAGS.ImageStaged: {
      const requestId = r.u64('request id');
      const bytes = r.u64Number('bytes');
      const pasted = enumByte(r, [false, true], 'pasted flag');
      const path = boundedRest(r, 1, MAX_STAGED_PATH_BYTES, 'staged path');
      return { type: 'ImageStaged', requestId, bytes, pasted, path };
    }
    case SERVER_TAGS.Modes: {
      const flags = r.u16('mode flags');
      r.end();
      if (flags >> MODE_BITS.length !== 0) r.fail(PROTOCOL_CODES.badValue, `mode flags 0x${flags.toString(16)} set unknown bits`);
      const modes = Object.fromEntries(MODE_BITS.map((name, bit) => [name, (flags & (1 << bit)) !== 0])) as unknown as ProgramModes;
      return { type: 'Modes', ...modes };
    }
    case SERVER_TAGS.FileExportLength: {
      const exportId = r.u64('export id');
      const size = r.u64Number('export size');
      r.end();
      return { type: 'FileExportLength', exportId, size };
    }
    default:
      throw new ProtocolError(PROTOCOL_CODES.unknownTag, 'payload', `unknown server frame tag ${hex8(tag)}`, { tag });
  }
}
