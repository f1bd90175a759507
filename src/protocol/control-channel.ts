/**
 * The control channel (protocol.md section 7): a connection whose first byte is 0x00. Each message is a u32
 * big-endian length followed by that many bytes of UTF-8 JSON; the first length byte is the 0x00 that
 * selected the channel, so a message is at most 16 MiB - 1 by construction and MAX_CONTROL_MESSAGE_BYTES
 * (4 MiB) by rule. A reply that streams data (an export) is followed by attach frames on the same
 * connection; see docs/protocol.md.
 */
import { MAX_CONTROL_MESSAGE_BYTES } from './limits.ts';
import { PROTOCOL_CODES, ProtocolError } from './protocol-error.ts';

export function encodeControlMessage(value: unknown): Buffer {
  const body = Buffer.from(JSON.stringify(value), 'utf8');
  if (body.length > MAX_CONTROL_MESSAGE_BYTES) {
    throw new RangeError(`control message of ${body.length} bytes exceeds ${MAX_CONTROL_MESSAGE_BYTES}`);
  }
  const header = Buffer.alloc(4);
  header.writeUInt32BE(body.length);
  return Buffer.concat([header, body]);
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Reads length-prefixed JSON messages from any slicing of the stream. Bytes after a message stay buffered
 * and can be taken with `takeRest()` when the connection switches to frames. */
export class ControlMessageDecoder {
  #buf: Buffer = Buffer.alloc(0);

  push(chunk: Buffer): unknown[] {
    this.#buf = this.#buf.length === 0 ? chunk : Buffer.concat([this.#buf, chunk]);
    const out: unknown[] = [];
    for (;;) {
      const m = this.next();
      if (m === undefined) break;
      out.push(m.value);
    }
    return out;
  }

  /** Returns one complete message if buffered, without consuming more. */
  next(): { value: unknown } | undefined {
    if (this.#buf.length < 4) return undefined;
    const len = this.#buf.readUInt32BE(0);
    if (len > MAX_CONTROL_MESSAGE_BYTES) {
      throw new ProtocolError(PROTOCOL_CODES.frameTooLarge, 'framing', `control message declares ${len} bytes, over ${MAX_CONTROL_MESSAGE_BYTES}`);
    }
    if (this.#buf.length < 4 + len) return undefined;
    const body = this.#buf.subarray(4, 4 + len);
    this.#buf = this.#buf.subarray(4 + len);
    let text: string;
    try {
      text = utf8.decode(body);
    } catch (cause) {
      throw new ProtocolError(PROTOCOL_CODES.badUtf8, 'framing', 'control message is not valid UTF-8', { cause });
    }
    try {
      return { value: JSON.parse(text) as unknown };
    } catch (cause) {
      throw new ProtocolError(PROTOCOL_CODES.badValue, 'framing', 'control message is not JSON', { cause });
    }
  }

  get bufferedBytes(): number {
    return this.#buf.length;
  }

  takeRest(): Buffer {
    const b = this.#buf;
    this.#buf = Buffer.alloc(0);
    return b;
  }
}
