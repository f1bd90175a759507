/**
 * The forward extension (docs/protocol.md section 8.15, feature `forward` v1): one TCP connection from the
 * host's loopback to the container's loopback, carried on a connection of its own to the capsule (socket or
 * exec relay) after a `forward` control request, so it never competes with the attach connection and works
 * with `--via` alike.
 *
 *   both ways  ForwardData  (host 0x30, capsule 0xB0): bytes (1 .. 256 KiB)
 *   both ways  ForwardEnd   (host 0x31, capsule 0xB1): empty; the sender's side reached EOF (half-close)
 *   both ways  ForwardReset (host 0x32, capsule 0xB2): reason u8 (1 refused, 2 reset, 3 timeout); the
 *              stream is over, both ways, and nothing more follows
 *
 * These frames are valid only on a forward connection: they are not part of the attach unions, so an attach
 * decoder reports them as unknown tags (payload errors, skipped). Their caps are in FRAME_CAPS.
 */
import { FrameDecoder } from './decoder.ts';
import { frameHeader } from './encode.ts';
import { FRAME_HEADER_BYTES, MAX_FORWARD_DATA_BYTES } from './limits.ts';
import { PayloadReader } from './payload-reader.ts';
import { PROTOCOL_CODES, ProtocolError, hex8 } from './protocol-error.ts';

/** Tags of each side; the frames are the same both ways. */
const FORWARD_TAGS = {
  client: { ForwardData: 0x30, ForwardEnd: 0x31, ForwardReset: 0x32 },
  server: { ForwardData: 0xb0, ForwardEnd: 0xb1, ForwardReset: 0xb2 },
} as const;

/** Why a forwarded stream ended abnormally. The same words name the control reply's codes. */
export const FORWARD_RESET_REASONS = ['refused', 'reset', 'timeout'] as const;
export type ForwardResetReason = (typeof FORWARD_RESET_REASONS)[number];

export type ForwardFrame = { type: 'ForwardData'; bytes: Buffer } | { type: 'ForwardEnd' } | { type: 'ForwardReset'; reason: ForwardResetReason };

/** Which side sends: the host (client tags) or the capsule (server tags). */
export type ForwardSide = 'client' | 'server';

/** The header of a ForwardData frame of `dataBytes`, so the sender writes header and data without a copy. */
export function encodeForwardDataHeader(side: ForwardSide, dataBytes: number): Buffer {
  if (!Number.isSafeInteger(dataBytes) || dataBytes < 1 || dataBytes > MAX_FORWARD_DATA_BYTES) {
    throw new RangeError(`forward data of ${dataBytes} bytes is outside 1..${MAX_FORWARD_DATA_BYTES}`);
  }
  return frameHeader(FORWARD_TAGS[side].ForwardData, dataBytes);
}

export function encodeForwardFrame(side: ForwardSide, f: ForwardFrame): Buffer {
  const tags = FORWARD_TAGS[side];
  switch (f.type) {
    case 'ForwardData':
      return Buffer.concat([encodeForwardDataHeader(side, f.bytes.length), f.bytes]);
    case 'ForwardEnd':
      return frameHeader(tags.ForwardEnd, 0);
    case 'ForwardReset': {
      const b = Buffer.concat([frameHeader(tags.ForwardReset, 1), Buffer.alloc(1)]);
      b[FRAME_HEADER_BYTES] = FORWARD_RESET_REASONS.indexOf(f.reason) + 1;
      return b;
    }
    default: {
      const never: never = f;
      throw new TypeError(`unexpected forward frame ${JSON.stringify(never)}`);
    }
  }
}

/** Decodes one payload sent by `side`. */
function decodeForwardPayload(side: ForwardSide, tag: number, payload: Buffer): ForwardFrame {
  const tags = FORWARD_TAGS[side];
  switch (tag) {
    case tags.ForwardData: {
      if (payload.length < 1) throw new ProtocolError(PROTOCOL_CODES.badLength, 'payload', 'ForwardData carries no bytes', { tag });
      return { type: 'ForwardData', bytes: payload };
    }
    case tags.ForwardEnd:
      return { type: 'ForwardEnd' };
    case tags.ForwardReset: {
      const r = new PayloadReader(payload, 'ForwardReset', tag);
      const code = r.u8('reason');
      r.end();
      const reason = FORWARD_RESET_REASONS[code - 1];
      if (reason === undefined) return r.fail(PROTOCOL_CODES.badEnum, `reset reason ${code} is not 1..${FORWARD_RESET_REASONS.length}`);
      return { type: 'ForwardReset', reason };
    }
    default:
      throw new ProtocolError(PROTOCOL_CODES.unknownTag, 'payload', `${hex8(tag)} is not a ${side} frame of a forward connection`, { tag });
  }
}

/** A decoder of what `side` sends: the capsule reads 'client', the host reads 'server'. */
export function createForwardDecoder(side: ForwardSide): FrameDecoder<ForwardFrame> {
  return new FrameDecoder((tag, payload) => decodeForwardPayload(side, tag, payload));
}

/** A port number, 1..65535 (the `forward` control request, control-methods.ts, names one and nothing else). */
export function isPort(n: unknown): n is number {
  return typeof n === 'number' && Number.isInteger(n) && n >= 1 && n <= 65535;
}

/** The loopback addresses the capsule tries, in order; nothing else is ever connected to. */
export const FORWARD_LOOPBACKS = ['127.0.0.1', '::1'] as const;
export type ForwardLoopback = (typeof FORWARD_LOOPBACKS)[number];
