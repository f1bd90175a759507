/** Strict decoders of the frames a client sends (host → capsule), one per tag. */
import { readFeatureList } from './features.ts';
import {
  CLIENT_TAGS,
  CONTROL_KINDS,
  RESOLVE_TARGETS,
  type AttachContext,
  type Capabilities,
  type ClientFrame,
  type ControlBody,
  type ImageProtocol,
  type Rgb,
  type Spawn,
  type TriState,
} from './frames.ts';
import {
  HELLO_MAX_ENV,
  HELLO_MAX_ENV_KEY,
  HELLO_MAX_ENV_VALUE,
  HELLO_MAX_PROVIDER,
  HELLO_MAX_TERM_FIELD,
  MAX_HOST_NOTICE_BYTES,
  MAX_IMAGE_ERROR_BYTES,
} from './limits.ts';
import { boundedRest, empty, enumByte, imageChunk, imageEnd, imageStart, imageWhole, parseContextJson } from './decode-fields.ts';
import { PayloadReader } from './payload-reader.ts';
import { PROTOCOL_CODES, ProtocolError, hex8 } from './protocol-error.ts';

export const CLIENT_NAMES = new Map<number, string>(Object.entries(CLIENT_TAGS).map(([k, v]) => [v, k]));
const CONTROL_NAMES = new Map<number, ControlBody['kind']>(Object.entries(CONTROL_KINDS).map(([k, v]) => [v, k as ControlBody['kind']]));
const TRI: readonly TriState[] = ['unset', 'false', 'true'];
const IMAGE_PROTOCOLS: readonly ImageProtocol[] = ['unset', 'unsupported', 'kitty'];

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

function decodeAttachControl(r: PayloadReader): ClientFrame {
  const kindByte = r.u8('control kind');
  const requestId = r.u64('request id');
  const ctxLen = r.u16('context length');
  const failWithId = (code: (typeof PROTOCOL_CODES)[keyof typeof PROTOCOL_CODES], message: string): never => r.fail(code, message, { requestId });
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
        body = { kind, ...imageChunk(r) };
        break;
      case 'ClipboardImageEnd':
        body = { kind, ...imageEnd(r) };
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
      return { type: 'ClipboardImageChunk', ...imageChunk(r) };
    case CLIENT_TAGS.ClipboardImageEnd:
      return { type: 'ClipboardImageEnd', ...imageEnd(r) };
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
    case CLIENT_TAGS.ListLinks: {
      const requestId = r.u64('request id');
      r.end();
      return { type: 'ListLinks', requestId };
    }
    case CLIENT_TAGS.HoldReplies: {
      const held = enumByte(r, [false, true], 'held flag');
      r.end();
      return { type: 'HoldReplies', held };
    }
    default:
      throw new ProtocolError(PROTOCOL_CODES.unknownTag, 'payload', `unknown client frame tag ${hex8(tag)}`, { tag });
  }
}
