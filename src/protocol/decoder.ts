/**
 * Streaming frame decoders. `push` accepts any slicing of the byte stream and returns what it completed:
 * decoded frames, and payload errors for frames whose length was within the cap but whose payload was
 * invalid (the stream is still in sync, so decoding goes on). A framing error (a declared length over the
 * tag's cap) is thrown: the stream is lost, and the decoder refuses further input.
 *
 * The declared length is checked against the tag's cap as soon as the 5-byte header is complete, before
 * any payload byte is buffered, so a hostile length can never make the reader allocate more than the cap.
 *
 * With `copyInput`, the pushed chunk is only borrowed: every payload is copied, as it arrives, into a buffer
 * from `allocate` (allocated when its header is read), and nothing of the chunk is kept once push returns,
 * so the caller may read the next bytes into the same buffer (a socket read through net.connect's onread:
 * src/transport/borrowed-reads.ts). Each payload byte is copied once, as a payload spanning chunks is anyway.
 */
import { decodeClientPayload, decodeServerPayload, tagName } from './decode-payload.ts';
import { capForTag, SERVER_TAGS, type ClientFrame, type ServerFrame } from './frames.ts';
import { FRAME_HEADER_BYTES } from './limits.ts';
import { PROTOCOL_CODES, ProtocolError } from './protocol-error.ts';

export type DecodeItem<F> = { ok: true; frame: F } | { ok: false; error: ProtocolError };

export class FrameDecoder<F> {
  #chunks: Buffer[] = [];
  #length = 0;
  /** Header of the frame being read, once complete. */
  #tag = -1;
  #need = -1;
  /** The declared payload length of that frame (`need` counts down as a streamed frame is delivered). */
  #declared = -1;
  #broken: ProtocolError | null = null;
  /** copyInput: the header read so far, and the payload being assembled with how much of it arrived. */
  readonly #copyInput: boolean;
  readonly #header = Buffer.alloc(FRAME_HEADER_BYTES);
  #headerFilled = 0;
  #payload: Buffer | null = null;
  #filled = 0;

  /**
   * `allocate` supplies the buffer for a payload that spans several pushed chunks (a payload inside one
   * chunk is a view of it). An exporter passes a pool, so 1 MiB chunk frames reuse a few buffers instead of
   * leaving one to the garbage collector per MiB. It must return exactly `n` bytes.
   *
   * `streamed`, when given, names a tag whose payload is plain bytes with no structure (Output): such a
   * frame is delivered as it arrives, one `streamed.frame(part)` per pushed chunk that carries some of it,
   * in order, instead of once whole. The parts are views of the pushed chunks, never copied, and the
   * reader can act on the first bytes of a 256 KiB frame before its last ones were sent.
   */
  readonly #decodePayload: (tag: number, payload: Buffer) => F;
  readonly #allocate: (n: number) => Buffer;
  readonly #streamed: { tag: number; frame: (part: Buffer) => F } | null;
  constructor(
    decodePayload: (tag: number, payload: Buffer) => F,
    allocate: (n: number) => Buffer = Buffer.allocUnsafe,
    streamed: { tag: number; frame: (part: Buffer) => F } | null = null,
    { copyInput = false }: { copyInput?: boolean } = {},
  ) {
    if (copyInput && streamed !== null) throw new Error('FrameDecoder: copyInput delivers whole payloads; it cannot stream a tag');
    this.#decodePayload = decodePayload;
    this.#allocate = allocate;
    this.#streamed = streamed;
    this.#copyInput = copyInput;
  }

  /** The framing error that ended this stream, once one was found. */
  get failure(): ProtocolError | null {
    return this.#broken;
  }

  /** Bytes held while waiting for the rest of a frame (never more than a header plus the tag's cap). */
  get bufferedBytes(): number {
    return this.#length;
  }

  push(chunk: Buffer): Array<DecodeItem<F>> {
    if (this.#broken) throw this.#broken;
    const out: Array<DecodeItem<F>> = [];
    if (this.#copyInput) return this.#pushCopying(chunk, out);
    if (chunk.length > 0) {
      this.#chunks.push(chunk);
      this.#length += chunk.length;
    }
    for (;;) {
      if (this.#need < 0) {
        if (this.#length < FRAME_HEADER_BYTES) break;
        if (!this.#readHeader(this.#take(FRAME_HEADER_BYTES))) return this.#badHeader(out);
      }
      if (this.#streamed !== null && this.#tag === this.#streamed.tag) {
        if (!this.#streamPart(out)) break;
        continue;
      }
      if (this.#length < this.#need) break;
      this.#emit(this.#take(this.#need), out);
    }
    return out;
  }

  /** The frame under way is complete: decoded (or its payload error) into `out`, and the next header is awaited. */
  #emit(payload: Buffer, out: Array<DecodeItem<F>>): void {
    const tag = this.#tag;
    this.#tag = -1;
    this.#need = -1;
    try {
      out.push({ ok: true, frame: this.#decodePayload(tag, payload) });
    } catch (e) {
      if (!(e instanceof ProtocolError)) throw e;
      out.push({ ok: false, error: e });
    }
  }

  /** Takes a complete header: false (and the stream broken) when its length is over the tag's cap. */
  #readHeader(header: Buffer): boolean {
    const tag = header[0]!;
    const len = header.readUInt32BE(1);
    const cap = capForTag(tag);
    if (len > cap) {
      this.#broken = new ProtocolError(PROTOCOL_CODES.frameTooLarge, 'framing', `${tagName(tag)} frame declares ${len} bytes, over its cap of ${cap}`, {
        tag,
      });
      this.#chunks = [];
      this.#length = 0;
      return false;
    }
    this.#tag = tag;
    this.#need = len;
    this.#declared = len;
    return true;
  }

  /** After a header over its cap: frames completed before it in this same read are delivered (an ExitStatus
   * followed by garbage still tells the host the program's status); the error is thrown by the next call. */
  #badHeader(out: Array<DecodeItem<F>>): Array<DecodeItem<F>> {
    if (out.length > 0) return out;
    throw this.#broken!;
  }

  /** push() with copyInput: header bytes into #header, payload bytes straight into their own buffer. */
  #pushCopying(chunk: Buffer, out: Array<DecodeItem<F>>): Array<DecodeItem<F>> {
    let pos = 0;
    for (;;) {
      if (this.#need < 0) {
        const k = Math.min(FRAME_HEADER_BYTES - this.#headerFilled, chunk.length - pos);
        chunk.copy(this.#header, this.#headerFilled, pos, pos + k);
        this.#headerFilled += k;
        pos += k;
        if (this.#headerFilled < FRAME_HEADER_BYTES) break;
        this.#headerFilled = 0;
        if (!this.#readHeader(this.#header)) return this.#badHeader(out);
        this.#payload = this.#allocate(this.#need);
        this.#filled = 0;
      }
      const k = Math.min(this.#need - this.#filled, chunk.length - pos);
      chunk.copy(this.#payload!, this.#filled, pos, pos + k);
      this.#filled += k;
      pos += k;
      if (this.#filled < this.#need) break;
      const payload = this.#payload!;
      this.#payload = null;
      this.#filled = 0;
      this.#emit(payload, out);
    }
    // What end() and bufferedBytes report: the bytes held of the frame under way.
    this.#length = this.#need < 0 ? this.#headerFilled : this.#filled;
    return out;
  }

  /** Ends the stream: EOF exactly at a frame boundary is a clean close, anything else is truncation (or
   * the framing error already found). */
  end(): void {
    if (this.#broken) throw this.#broken;
    if (this.#length > 0 || this.#need >= 0) {
      const what =
        this.#need >= 0
          ? `${tagName(this.#tag)} frame (${this.#length + this.#declared - this.#need} of ${this.#declared} payload bytes)`
          : `frame header (${this.#length} of 5 bytes)`;
      this.#broken = new ProtocolError(PROTOCOL_CODES.truncated, 'framing', `stream ended inside a ${what}`, {
        ...(this.#tag >= 0 ? { tag: this.#tag } : {}),
      });
      throw this.#broken;
    }
  }

  /**
   * Delivers what has arrived of a streamed frame's payload (a zero-length frame once, as one empty part).
   * True when the frame is complete and decoding goes on with the next header.
   */
  #streamPart(out: Array<DecodeItem<F>>): boolean {
    const streamed = this.#streamed!;
    if (this.#need === 0) {
      out.push({ ok: true, frame: streamed.frame(Buffer.alloc(0)) });
    }
    while (this.#need > 0 && this.#length > 0) {
      const part = this.#take(Math.min(this.#need, this.#chunks[0]!.length));
      this.#need -= part.length;
      out.push({ ok: true, frame: streamed.frame(part) });
    }
    if (this.#need > 0) return false;
    this.#tag = -1;
    this.#need = -1;
    return true;
  }

  /** Removes and returns the first n buffered bytes, without copying when one chunk holds them all. */
  #take(n: number): Buffer {
    this.#length -= n;
    const first = this.#chunks[0];
    if (first !== undefined && first.length >= n) {
      if (first.length === n) this.#chunks.shift();
      else this.#chunks[0] = first.subarray(n);
      return first.subarray(0, n);
    }
    const out = this.#allocate(n);
    let filled = 0;
    while (filled < n) {
      const c = this.#chunks[0]!;
      const k = Math.min(c.length, n - filled);
      c.copy(out, filled, 0, k);
      filled += k;
      if (k === c.length) this.#chunks.shift();
      else this.#chunks[0] = c.subarray(k);
    }
    return out;
  }
}

/** Decodes frames sent by a client (what the capsule reads). */
export function createClientFrameDecoder(): FrameDecoder<ClientFrame> {
  return new FrameDecoder(decodeClientPayload);
}

/**
 * Decodes frames sent by a server (what the host reads). With `streamOutput`, an Output frame comes out as
 * it arrives, in parts (see FrameDecoder): the attached host writes each part to the terminal at once. With
 * `copyInput`, the pushed chunks are borrowed (see FrameDecoder).
 */
export function createServerFrameDecoder(allocate?: (n: number) => Buffer, { streamOutput = false, copyInput = false } = {}): FrameDecoder<ServerFrame> {
  return new FrameDecoder(decodeServerPayload, allocate, streamOutput ? { tag: SERVER_TAGS.Output, frame: (bytes) => ({ type: 'Output', bytes }) } : null, {
    copyInput,
  });
}
