/**
 * Image format detection from bytes, never from a MIME type or a file extension. Pure: no Node I/O.
 *
 * A signature alone is not enough (a PNG cut to 16 bytes still starts with the PNG signature, and that is
 * all `file-type` checks), so each format also needs a minimal plausible structure that a truncated or
 * forged file does not have. The checks walk headers and block lengths only; they never decode pixels.
 * SVG (scriptable text) and every other format are refused.
 */
import { JackinError } from '../errors.ts';
import { IMAGE_FORMATS, type ImageFormat } from '../protocol/frames.ts';
import { MAX_IMAGE_TRANSFER_BYTES } from '../protocol/limits.ts';

/** Default size cap for an image, on both sides (the chunked transfer cap of protocol.md section 4). */
export const DEFAULT_MAX_IMAGE_BYTES = MAX_IMAGE_TRANSFER_BYTES;

/** The result of inspecting bytes: a format, or why not (with the format the signature claimed, if any). */
export type ImageInspection = { ok: true; format: ImageFormat } | { ok: false; claimed: ImageFormat | null; reason: string };

const ACCEPTED = IMAGE_FORMATS.join(', ');

/** The format of `bytes` if they carry an accepted signature and a plausible structure, else why not. */
export function inspectImage(bytes: Uint8Array): ImageInspection {
  const claimed = signatureFormat(bytes);
  if (claimed === null) return { ok: false, claimed: null, reason: `not an accepted image (${describeUnknown(bytes)})` };
  const problem = structureProblem(claimed, bytes);
  if (problem !== null) return { ok: false, claimed, reason: `malformed or truncated ${claimed}: ${problem}` };
  return { ok: true, format: claimed };
}

/** The format of `bytes`, or null; the convenient form of inspectImage. */
export function detectImageFormat(bytes: Uint8Array): ImageFormat | null {
  const r = inspectImage(bytes);
  return r.ok ? r.format : null;
}

/** Throws E_IMAGE_TOO_LARGE when `size` exceeds `maxBytes`, E_NO_CLIPBOARD_IMAGE when it is 0. */
export function checkImageSize(size: number, maxBytes: number = DEFAULT_MAX_IMAGE_BYTES): void {
  if (size === 0) throw new JackinError('E_NO_CLIPBOARD_IMAGE', 'the image is empty (0 bytes)');
  if (size > maxBytes) {
    throw new JackinError(
      'E_IMAGE_TOO_LARGE',
      `image of ${size} bytes exceeds the cap of ${maxBytes} bytes; shrink or crop it (a PNG screenshot of one screen is usually a few MiB)`,
    );
  }
}

/**
 * The format of `bytes`, after the size cap and the structure checks; throws E_IMAGE_TOO_LARGE,
 * E_NO_CLIPBOARD_IMAGE (empty) or E_UNSUPPORTED_IMAGE (anything that is not png, jpeg, gif, webp, tiff).
 */
export function validateImage(bytes: Uint8Array, opts: { maxBytes?: number } = {}): ImageFormat {
  checkImageSize(bytes.length, opts.maxBytes ?? DEFAULT_MAX_IMAGE_BYTES);
  const r = inspectImage(bytes);
  if (r.ok) return r.format;
  throw new JackinError('E_UNSUPPORTED_IMAGE', `unsupported image: ${r.reason}; jackin accepts ${ACCEPTED} (convert the image to PNG)`);
}

// --- signatures --------------------------------------------------------------------------------------

function startsWith(b: Uint8Array, sig: readonly number[], at = 0): boolean {
  if (b.length < at + sig.length) return false;
  for (let i = 0; i < sig.length; i++) if (b[at + i] !== sig[i]) return false;
  return true;
}

const PNG_SIG = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a] as const;
const ascii = (s: string): number[] => [...s].map((c) => c.charCodeAt(0));

export function signatureFormat(b: Uint8Array): ImageFormat | null {
  if (startsWith(b, PNG_SIG)) return 'png';
  if (startsWith(b, [0xff, 0xd8, 0xff])) return 'jpeg';
  if (startsWith(b, ascii('GIF87a')) || startsWith(b, ascii('GIF89a'))) return 'gif';
  if (startsWith(b, ascii('RIFF')) && startsWith(b, ascii('WEBP'), 8)) return 'webp';
  if (startsWith(b, [0x49, 0x49, 0x2a, 0x00]) || startsWith(b, [0x4d, 0x4d, 0x00, 0x2a])) return 'tiff';
  return null;
}

/** A short name for refused content, for the operator's notice. */
function describeUnknown(b: Uint8Array): string {
  if (b.length === 0) return 'empty';
  if (startsWith(b, [0x49, 0x49, 0x2b, 0x00]) || startsWith(b, [0x4d, 0x4d, 0x00, 0x2b])) return 'BigTIFF';
  if (startsWith(b, ascii('BM'))) return 'BMP';
  if (startsWith(b, [0x00, 0x00, 0x01, 0x00])) return 'ICO';
  if (startsWith(b, ascii('%PDF'))) return 'PDF';
  const head = latin1(b.subarray(0, 512)).trimStart().toLowerCase();
  if (head.startsWith('<svg') || (head.startsWith('<?xml') && head.includes('<svg'))) return 'SVG, which is never accepted';
  if (startsWith(b, ascii('RIFF'))) return 'RIFF but not WebP';
  if (looksLikeText(b.subarray(0, 512))) return 'text';
  return `unknown signature ${hex(b.subarray(0, 8))}`;
}

function latin1(b: Uint8Array): string {
  let s = '';
  for (const x of b) s += String.fromCharCode(x);
  return s;
}

function hex(b: Uint8Array): string {
  return [...b].map((x) => x.toString(16).padStart(2, '0')).join(' ');
}

function looksLikeText(b: Uint8Array): boolean {
  for (const x of b) if (x < 0x09 || (x > 0x0d && x < 0x20) || x === 0x7f) return false;
  return true;
}

// --- structure ---------------------------------------------------------------------------------------

function u16be(b: Uint8Array, i: number): number {
  return ((b[i] ?? 0) << 8) | (b[i + 1] ?? 0);
}
function u32be(b: Uint8Array, i: number): number {
  return (((b[i] ?? 0) << 24) | ((b[i + 1] ?? 0) << 16) | ((b[i + 2] ?? 0) << 8) | (b[i + 3] ?? 0)) >>> 0;
}
function u16le(b: Uint8Array, i: number): number {
  return (b[i] ?? 0) | ((b[i + 1] ?? 0) << 8);
}
function u32le(b: Uint8Array, i: number): number {
  return ((b[i] ?? 0) | ((b[i + 1] ?? 0) << 8) | ((b[i + 2] ?? 0) << 16) | ((b[i + 3] ?? 0) << 24)) >>> 0;
}

/** Why `b` (which carries `format`'s signature) is not a plausible file of that format, or null. */
function structureProblem(format: ImageFormat, b: Uint8Array): string | null {
  switch (format) {
    case 'png':
      return pngProblem(b);
    case 'jpeg':
      return jpegProblem(b);
    case 'gif':
      return gifProblem(b);
    case 'webp':
      return webpProblem(b);
    case 'tiff':
      return tiffProblem(b);
    default: {
      const never: never = format;
      return `unexpected format ${String(never)}`;
    }
  }
}

/** PNG: IHDR first (13 bytes, non-zero size, correct CRC), every chunk inside the file, an IDAT, up to IEND. */
function pngProblem(b: Uint8Array): string | null {
  let at = 8;
  let first = true;
  let sawData = false;
  for (;;) {
    if (at + 12 > b.length) return `chunk header at byte ${at} runs past the end (${b.length} bytes)`;
    const len = u32be(b, at);
    const type = latin1(b.subarray(at + 4, at + 8));
    const end = at + 12 + len;
    if (len > 0x7fffffff || end > b.length) return `${type} chunk of ${len} bytes runs past the end (${b.length} bytes)`;
    if (first) {
      if (type !== 'IHDR' || len !== 13) return 'the first chunk is not a 13-byte IHDR';
      if (u32be(b, at + 8) === 0 || u32be(b, at + 12) === 0) return 'IHDR declares a zero width or height';
      if (crc32(b.subarray(at + 4, at + 8 + len)) !== u32be(b, at + 8 + len)) return 'IHDR checksum mismatch';
      first = false;
    }
    if (type === 'IDAT') sawData = true;
    if (type === 'IEND') return sawData ? null : 'no IDAT chunk before IEND';
    at = end;
  }
}

/** JPEG: SOI, marker segments inside the file with a frame header (SOF) before the scan, then an EOI. */
function jpegProblem(b: Uint8Array): string | null {
  let at = 2;
  let sawFrame = false;
  for (;;) {
    if (at + 2 > b.length) return `marker at byte ${at} runs past the end`;
    if (b[at] !== 0xff) return `expected a marker at byte ${at}`;
    // Any number of 0xFF fill bytes may precede a marker code.
    while (b[at + 1] === 0xff && at + 2 < b.length) at++;
    const m = b[at + 1] ?? 0;
    if (m === 0x01 || (m >= 0xd0 && m <= 0xd7)) {
      at += 2; // TEM and RSTn carry no length
      continue;
    }
    if (m === 0xd8 || m === 0xd9 || m === 0x00) return `unexpected marker 0xFF${hex(Uint8Array.of(m))} before the scan`;
    if (at + 4 > b.length) return `segment length at byte ${at} runs past the end`;
    const len = u16be(b, at + 2);
    if (len < 2 || at + 2 + len > b.length) return `segment 0xFF${hex(Uint8Array.of(m))} of ${len} bytes runs past the end`;
    if (m >= 0xc0 && m <= 0xcf && m !== 0xc4 && m !== 0xc8 && m !== 0xcc) sawFrame = true;
    if (m === 0xda) {
      if (!sawFrame) return 'scan before any frame header (SOF)';
      // The entropy-coded data has no length; a complete file ends with EOI (trailers after it are tolerated).
      return hasEoiAfter(b, at + 2 + len) ? null : 'no end-of-image marker after the scan';
    }
    at += 2 + len;
  }
}

function hasEoiAfter(b: Uint8Array, from: number): boolean {
  for (let i = b.length - 2; i >= from; i--) if (b[i] === 0xff && b[i + 1] === 0xd9) return true;
  return false;
}

/** GIF: header and screen descriptor, colour tables and every block inside the file, one image, a trailer. */
function gifProblem(b: Uint8Array): string | null {
  if (b.length < 13) return 'shorter than the header and logical screen descriptor';
  let at = 13;
  const flags = b[10] ?? 0;
  if (flags & 0x80) at += 3 * (1 << ((flags & 0x07) + 1));
  let images = 0;
  for (;;) {
    if (at >= b.length) return `block at byte ${at} runs past the end`;
    const intro = b[at];
    if (intro === 0x3b) return images > 0 ? null : 'no image before the trailer';
    if (intro === 0x21) {
      at += 2; // introducer + label
    } else if (intro === 0x2c) {
      if (at + 10 > b.length) return 'image descriptor runs past the end';
      const f = b[at + 9] ?? 0;
      at += 10;
      if (f & 0x80) at += 3 * (1 << ((f & 0x07) + 1));
      at += 1; // LZW minimum code size
      images++;
    } else {
      return `unknown block 0x${hex(Uint8Array.of(intro ?? 0))} at byte ${at}`;
    }
    // Data sub-blocks: size byte, data, until a zero size.
    for (;;) {
      if (at >= b.length) return 'data sub-blocks run past the end';
      const n = b[at] ?? 0;
      at += 1 + n;
      if (n === 0) break;
    }
  }
}

/** WebP: the RIFF size fits in the file and the first chunk is VP8, VP8L or VP8X and fits in the RIFF. */
function webpProblem(b: Uint8Array): string | null {
  if (b.length < 20) return 'shorter than the RIFF and first chunk headers';
  const riffEnd = 8 + u32le(b, 4);
  if (riffEnd > b.length) return `RIFF declares ${riffEnd} bytes but the file has ${b.length}`;
  const fourcc = latin1(b.subarray(12, 16));
  if (fourcc !== 'VP8 ' && fourcc !== 'VP8L' && fourcc !== 'VP8X') return `unknown first chunk ${JSON.stringify(fourcc)}`;
  const chunkEnd = 20 + u32le(b, 16);
  if (chunkEnd > riffEnd) return `${fourcc.trim()} chunk runs past the RIFF end`;
  return null;
}

/** TIFF (classic, not BigTIFF): the first IFD and its entries inside the file. */
function tiffProblem(b: Uint8Array): string | null {
  if (b.length < 8) return 'shorter than the header';
  const le = b[0] === 0x49;
  const ifd = le ? u32le(b, 4) : u32be(b, 4);
  if (ifd < 8 || ifd + 2 > b.length) return `first IFD offset ${ifd} is outside the file (${b.length} bytes)`;
  const n = le ? u16le(b, ifd) : u16be(b, ifd);
  if (n === 0) return 'the first IFD has no entries';
  if (ifd + 2 + 12 * n + 4 > b.length) return `the first IFD's ${n} entries run past the end`;
  return null;
}

// --- CRC-32 (PNG chunk checksums; ISO-HDLC polynomial) -------------------------------------------------

const CRC_TABLE = (() => {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
})();

/** CRC-32 of `b` as PNG computes it. */
export function crc32(b: Uint8Array): number {
  let c = 0xffffffff;
  for (const x of b) c = (CRC_TABLE[(c ^ x) & 0xff] ?? 0) ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}
