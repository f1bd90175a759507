/** Strict decoders of the frames a server sends (capsule → host), one per tag. */
import { WELCOME_EXTENSION_MAGIC, readFeatureList } from './features.ts';
import {
  LISTED_LINK_SOURCES,
  MODE_BITS,
  NOTICE_LEVELS,
  RESOLVED_KINDS,
  SERVER_TAGS,
  type ControlResult,
  type ListedLink,
  type ProgramModes,
  type ServerFrame,
} from './frames.ts';
import {
  MAX_EXPORT_NAME_BYTES,
  MAX_EXPORT_SOURCE_BYTES,
  MAX_HOST_NOTICE_BYTES,
  MAX_LISTED_LINKS,
  MAX_LISTENING_PORTS,
  MAX_LISTED_URL_BYTES,
  MAX_RESOLVED_TEXT_BYTES,
  MAX_REVEAL_PATH_BYTES,
  MAX_STAGED_PATH_BYTES,
} from './limits.ts';
import { boundedRest, decodeStrict, empty, enumByte, imageChunk, imageEnd } from './decode-fields.ts';
import { PayloadReader } from './payload-reader.ts';
import { PROTOCOL_CODES, ProtocolError, hex8 } from './protocol-error.ts';

export const SERVER_NAMES = new Map<number, string>(Object.entries(SERVER_TAGS).map(([k, v]) => [v, k]));
const RESULTS: readonly ControlResult[] = ['success', 'invalid-correlation', 'rejected'];
const SAFE_URL = /^(https?:\/\/|mailto:)/i;

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
      const c = imageChunk(r);
      return { type: 'FileExportChunk', exportId: c.transferId, offset: c.offset, bytes: c.bytes };
    }
    case SERVER_TAGS.FileExportEnd: {
      const e = imageEnd(r);
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
    case SERVER_TAGS.RepliesHeld: {
      const held = enumByte(r, [false, true], 'held flag');
      r.end();
      return { type: 'RepliesHeld', held };
    }
    case SERVER_TAGS.Ports: {
      const count = r.u16('port count');
      if (count > MAX_LISTENING_PORTS) r.fail(PROTOCOL_CODES.badValue, `port count ${count} exceeds ${MAX_LISTENING_PORTS}`);
      const ports: number[] = [];
      for (let i = 0; i < count; i++) {
        const port = r.u16('port');
        if (port <= (ports.at(-1) ?? 0)) r.fail(PROTOCOL_CODES.badValue, `port ${port} is 0 or not above the one before it`);
        ports.push(port);
      }
      r.end();
      return { type: 'Ports', ports };
    }
    case SERVER_TAGS.FileExportLength: {
      const exportId = r.u64('export id');
      const size = r.u64Number('export size');
      r.end();
      return { type: 'FileExportLength', exportId, size };
    }
    case SERVER_TAGS.Links: {
      const requestId = r.u64('request id');
      const count = r.u8('link count');
      if (count > MAX_LISTED_LINKS) r.fail(PROTOCOL_CODES.badValue, `link count ${count} exceeds ${MAX_LISTED_LINKS}`);
      const links: ListedLink[] = [];
      for (let i = 0; i < count; i++) {
        const row = r.u16('row');
        const col = r.u16('col');
        const cells = r.u16('cells');
        const source = enumByte(r, LISTED_LINK_SOURCES, 'link source', 1);
        const n = r.u16('link length');
        links.push({ row, col, cells, source, url: r.boundedText(n, 1, MAX_LISTED_URL_BYTES, 'listed link') });
      }
      r.end();
      return { type: 'Links', requestId, links };
    }
    default:
      throw new ProtocolError(PROTOCOL_CODES.unknownTag, 'payload', `unknown server frame tag ${hex8(tag)}`, { tag });
  }
}
