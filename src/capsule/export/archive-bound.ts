/** Sizes of a directory's tar.zst known before it is written: the most it can take, and the least each entry's headers take. */
import type { DirectoryListing, Listed } from './directory-listing.ts';
import { ZSTD_BLOCK_BYTES } from './zstd-compressor.ts';

const TAR_BLOCK = 512;
const roundUp = (n: number, to: number): number => Math.ceil(n / to) * to;

/**
 * The most bytes the tar.zst of `listing` can take, for a host that accepts a streamed size (the exact
 * size follows the last chunk): every entry as a header, a pax extended header with its name and link
 * target, and its content padded to 512 bytes; then the end blocks; then zstd's worst case for that input
 * (ZSTD_COMPRESSBOUND: n + n/256 + at most 64, plus an 18-byte frame header and a 4-byte checksum, per
 * frame: one for Node's own zstd, one per ZSTD_BLOCK_BYTES for the WebAssembly fallback), with room to spare. A file that grows after the
 * listing fails the export anyway (E_CHANGED_WHILE_READING).
 */
export function archiveBound(listing: DirectoryListing): number {
  let tar = 20 * TAR_BLOCK;
  for (const e of listing.listed) {
    const names = Buffer.byteLength(e.rel) + (e.type === 'symlink' ? Buffer.byteLength(e.target) : 0);
    // + 256: every name is under the archive's top-level folder (a file name, at most 255 bytes, and "/").
    tar += 2 * TAR_BLOCK + roundUp(names + 128 + 256, TAR_BLOCK) + (e.type === 'file' ? roundUp(e.size, TAR_BLOCK) : 0);
  }
  tar += 2 * TAR_BLOCK + roundUp(256 + 128, TAR_BLOCK);
  const frames = Math.ceil(tar / ZSTD_BLOCK_BYTES) + 1;
  return tar + Math.ceil(tar / 256) + 4096 + frames * 1024;
}

/**
 * The fewest header bytes tar-stream writes for an entry: its 512-byte header, and when the name or link
 * target cannot fit a ustar header for certain (a name over 255 bytes, a target over 100), a pax header
 * block plus pax records holding both in full (so at least their bytes, padded to a block).
 */
export function headerFloor(e: Listed): number {
  const name = Buffer.byteLength(e.rel);
  const target = e.type === 'symlink' ? Buffer.byteLength(e.target) : 0;
  if (name <= 255 && target <= 100) return TAR_BLOCK;
  return 2 * TAR_BLOCK + roundUp(name + target, TAR_BLOCK);
}
