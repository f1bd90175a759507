import { JackinError, type ErrorCode } from '../errors.ts';

/**
 * `framing`: the byte stream is lost (a length over its tag's cap, a truncated stream); the connection must
 * end. `payload`: one frame's payload is invalid but its length was within the cap, so the stream is still
 * in sync and the reader may skip the frame and go on.
 */
export type ProtocolErrorKind = 'framing' | 'payload';

/** Stable codes, one per cause. */
export const PROTOCOL_CODES = {
  frameTooLarge: 'E_FRAME_TOO_LARGE',
  truncated: 'E_FRAME_TRUNCATED',
  unknownTag: 'E_UNKNOWN_TAG',
  short: 'E_PAYLOAD_SHORT',
  trailing: 'E_PAYLOAD_TRAILING',
  badEnum: 'E_BAD_ENUM',
  badUtf8: 'E_BAD_UTF8',
  badLength: 'E_BAD_LENGTH',
  badValue: 'E_BAD_VALUE',
  badContext: 'E_BAD_CONTEXT',
  badUrl: 'E_BAD_URL',
  badExtensions: 'E_BAD_EXTENSIONS',
} as const satisfies Record<string, ErrorCode>;
export type ProtocolCode = (typeof PROTOCOL_CODES)[keyof typeof PROTOCOL_CODES];

export class ProtocolError extends JackinError {
  override readonly name = 'ProtocolError';
  readonly kind: ProtocolErrorKind;
  /** The tag of the frame being read, when known. */
  readonly tag: number | undefined;
  /** For an AttachControl payload error: the request id, when it could be read, so the capsule can answer it. */
  readonly requestId: bigint | undefined;

  constructor(code: ProtocolCode, kind: ProtocolErrorKind, message: string, extra: { tag?: number; requestId?: bigint; cause?: unknown } = {}) {
    super(code, message, extra.cause === undefined ? {} : { cause: extra.cause });
    this.kind = kind;
    this.tag = extra.tag;
    this.requestId = extra.requestId;
  }
}

export function hex8(tag: number): string {
  return `0x${tag.toString(16).padStart(2, '0').toUpperCase()}`;
}
