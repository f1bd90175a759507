/**
 * Strict payload decoders, one per tag and direction: decode-client.ts (host → capsule) and
 * decode-server.ts (capsule → host), over the field readers of decode-fields.ts. Each throws a `payload`
 * ProtocolError (the stream is still in sync) on any deviation: short payload, trailing bytes, unknown
 * enumerated byte, invalid UTF-8, a length out of range.
 */
import { CLIENT_NAMES } from './decode-client.ts';
import { SERVER_NAMES } from './decode-server.ts';
import { hex8 } from './protocol-error.ts';

export { decodeClientPayload } from './decode-client.ts';
export { decodeServerPayload } from './decode-server.ts';

export function tagName(tag: number): string {
  return CLIENT_NAMES.get(tag) ?? SERVER_NAMES.get(tag) ?? hex8(tag);
}
