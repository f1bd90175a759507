/**
 * Content that zstd cannot shrink (random bytes, and what is already compressed: images, archives, git
 * packs) is stored instead of compressed. zstd at level 1 would end up storing it anyway, after spending
 * about 1 ms per MiB looking for matches (1.3 to 3 ms in the WebAssembly fallback, on the capsule's main
 * thread); telling it apart costs about 0.08 ms per MiB (bench/RESULTS.md, the directory export's sixth pass).
 *
 * A compressor's block is cut into segments of 128 KiB, zstd's largest block. A segment is stored when
 * each of eight 1 KiB windows spread across it (18 KiB apart) has the byte entropy of random data, so a
 * segment that holds a stretch of text longer than that, or data with a short period (a table of records),
 * is compressed as before; shorter bits of text between random content may be stored with it. Runs of
 * stored segments become zstd frames of raw blocks, which any zstd decoder (`zstd -d`, GNU `tar --zstd`)
 * reads as part of the one stream: the format allows any number of frames back to back.
 *
 * The trade: content whose bytes look random but repeat at a distance (the same compressed file twice in
 * one block) is stored where zstd would have found the repeat. The archive is bigger, never wrong.
 */

/** zstd's largest block (Block_Maximum_Size), the unit judged and stored. */
export const SEGMENT_BYTES = 128 * 1024;
const WINDOWS = 8;
const WINDOW_BYTES = 1024;
/** Bits per byte above which a 1 KiB window looks random: random bytes measure about 7.8 in 1 KiB (the
 * estimate falls short of 8 by about 0.18 at this size), English or source text 4 to 5, machine code 5 to 6. */
const RANDOM_WINDOW_BITS = 7.5;

const counts = new Uint32Array(256);
/** log2 of 0..WINDOW_BYTES, so the entropy sum is table lookups. */
const log2 = Float64Array.from({ length: WINDOW_BYTES + 1 }, (_, i) => (i === 0 ? 0 : Math.log2(i)));

/** Shannon entropy of the byte values of `bytes[start, start + WINDOW_BYTES)`, in bits per byte. */
function windowBits(bytes: Uint8Array, start: number): number {
  counts.fill(0);
  const end = start + WINDOW_BYTES;
  for (let i = start; i < end; i++) counts[bytes[i]!]!++;
  let sum = 0;
  for (let v = 0; v < 256; v++) {
    const c = counts[v]!;
    if (c !== 0) sum += c * log2[c]!;
  }
  return log2[WINDOW_BYTES]! - sum / WINDOW_BYTES;
}

/** Whether a segment looks like bytes zstd cannot shrink: every sampled window looks random. A segment too
 * short to sample (the end of a stream) is compressed. */
export function looksIncompressible(segment: Uint8Array): boolean {
  if (segment.byteLength < SEGMENT_BYTES / 2) return false;
  const step = Math.floor((segment.byteLength - WINDOW_BYTES) / (WINDOWS - 1));
  for (let w = 0; w < WINDOWS; w++) if (windowBits(segment, w * step) < RANDOM_WINDOW_BITS) return false;
  return true;
}

/** A stretch of a block, to be compressed or stored. */
export interface Run {
  readonly start: number;
  readonly end: number;
  readonly stored: boolean;
}

/** `block` as consecutive runs of compressed and stored segments, covering it in order. */
export function splitRuns(block: Uint8Array): Run[] {
  const runs: Run[] = [];
  let start = 0;
  let stored = false;
  for (let at = 0; at < block.byteLength; at += SEGMENT_BYTES) {
    const end = Math.min(at + SEGMENT_BYTES, block.byteLength);
    const s = looksIncompressible(block.subarray(at, end));
    if (at > 0 && s !== stored) {
      runs.push({ start, end: at, stored });
      start = at;
    }
    stored = s;
  }
  if (block.byteLength > 0) runs.push({ start, end: block.byteLength, stored });
  return runs;
}

const ZSTD_MAGIC = 0xfd2fb528;
/** Frame_Header_Descriptor: a 4-byte Frame_Content_Size (flag 2), Single_Segment (so no Window_Descriptor:
 * the window is the content size), no checksum, no dictionary. */
const RAW_FRAME_DESCRIPTOR = 0xa0;
const FRAME_HEADER_BYTES = 4 + 1 + 4;
const BLOCK_HEADER_BYTES = 3;

/** The most bytes storedFrame() writes for `n` bytes of content. */
export const storedFrameBound = (n: number): number => FRAME_HEADER_BYTES + BLOCK_HEADER_BYTES * Math.max(1, Math.ceil(n / SEGMENT_BYTES)) + n;

/** A zstd frame holding `content` (1 byte to 4 GiB - 1) as Raw_Blocks of at most 128 KiB (RFC 8878, 3.1.1). */
export function storedFrame(content: Uint8Array): Buffer {
  const n = content.byteLength;
  if (n === 0 || n > 0xffffffff) throw new RangeError(`a stored frame holds 1 byte to 4 GiB - 1, not ${n}`);
  const frame = Buffer.allocUnsafe(storedFrameBound(n));
  frame.writeUInt32LE(ZSTD_MAGIC, 0);
  frame[4] = RAW_FRAME_DESCRIPTOR;
  frame.writeUInt32LE(n, 5);
  let at = FRAME_HEADER_BYTES;
  for (let from = 0; from < n; from += SEGMENT_BYTES) {
    const size = Math.min(SEGMENT_BYTES, n - from);
    // Block_Header, 3 bytes little-endian: Last_Block (bit 0), Block_Type 0 = Raw (bits 1-2), Block_Size.
    const header = (from + size === n ? 1 : 0) | (size << 3);
    frame[at] = header & 0xff;
    frame[at + 1] = (header >>> 8) & 0xff;
    frame[at + 2] = (header >>> 16) & 0xff;
    frame.set(content.subarray(from, from + size), at + BLOCK_HEADER_BYTES);
    at += BLOCK_HEADER_BYTES + size;
  }
  return frame;
}
