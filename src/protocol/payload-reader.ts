import { ProtocolError, PROTOCOL_CODES, type ProtocolCode } from './protocol-error.ts';

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * A cursor over one frame's payload. Every read checks the remaining length first, so a length field can
 * never make it read or allocate past the payload; every failure is a `payload` ProtocolError.
 */
export class PayloadReader {
  #pos = 0;
  constructor(
    readonly buf: Buffer,
    readonly what: string,
    readonly tag: number,
  ) {}

  get remaining(): number {
    return this.buf.length - this.#pos;
  }

  fail(code: ProtocolCode, message: string, extra: { requestId?: bigint; cause?: unknown } = {}): never {
    throw new ProtocolError(code, 'payload', `${this.what}: ${message}`, { tag: this.tag, ...extra });
  }

  #need(n: number, field: string): void {
    if (this.remaining < n) {
      this.fail(PROTOCOL_CODES.short, `payload ends inside ${field} (needs ${n} bytes, ${this.remaining} left)`);
    }
  }

  u8(field: string): number {
    this.#need(1, field);
    return this.buf[this.#pos++]!;
  }

  u16(field: string): number {
    this.#need(2, field);
    const v = this.buf.readUInt16BE(this.#pos);
    this.#pos += 2;
    return v;
  }

  u32(field: string): number {
    this.#need(4, field);
    const v = this.buf.readUInt32BE(this.#pos);
    this.#pos += 4;
    return v;
  }

  i32(field: string): number {
    this.#need(4, field);
    const v = this.buf.readInt32BE(this.#pos);
    this.#pos += 4;
    return v;
  }

  u64(field: string): bigint {
    this.#need(8, field);
    const v = this.buf.readBigUInt64BE(this.#pos);
    this.#pos += 8;
    return v;
  }

  /** A u64 used as a size or offset: must fit a JS number exactly. */
  u64Number(field: string): number {
    const v = this.u64(field);
    if (v > BigInt(Number.MAX_SAFE_INTEGER)) this.fail(PROTOCOL_CODES.badValue, `${field} ${v} is too large`);
    return Number(v);
  }

  bytes(n: number, field: string): Buffer {
    this.#need(n, field);
    const v = this.buf.subarray(this.#pos, this.#pos + n);
    this.#pos += n;
    return v;
  }

  rest(): Buffer {
    const v = this.buf.subarray(this.#pos);
    this.#pos = this.buf.length;
    return v;
  }

  /** `n` bytes of strict UTF-8. */
  text(n: number, field: string): string {
    return decodeUtf8(this.bytes(n, field), field, this);
  }

  /** A string whose byte length must be within [min, max]. */
  boundedText(n: number, min: number, max: number, field: string): string {
    if (n < min || n > max) this.fail(PROTOCOL_CODES.badLength, `${field} length ${n} is outside ${min}..${max}`);
    return this.text(n, field);
  }

  end(): void {
    if (this.remaining !== 0) this.fail(PROTOCOL_CODES.trailing, `${this.remaining} unexpected trailing bytes`);
  }
}

function decodeUtf8(b: Buffer, field: string, r: PayloadReader): string {
  try {
    return utf8.decode(b);
  } catch (cause) {
    return r.fail(PROTOCOL_CODES.badUtf8, `${field} is not valid UTF-8`, { cause });
  }
}
