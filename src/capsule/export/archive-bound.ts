/** The most a directory's tar.zst can take, known before it is written (the headers are tar-header.ts's). */
import type { DirectoryListing } from './directory-listing.ts';
import { padded, TAR_BLOCK } from './tar-header.ts';
import { ZSTD_BLOCK_BYTES } from './zstd-compressor.ts';

/**
 * The most bytes the tar.zst of `listing` can take, for a host that accepts a streamed size (the exact
 * size follows the last chunk): every entry as a header, a pax extended header with its name and link
 * target, and its content padded to 512 bytes; then the end blocks; then zstd's worst case for that input
 * (ZSTD_COMPRESSBOUND: n + n/256 + at most 64, plus an 18-byte frame header and a 4-byte checksum, per
 * frame: one for Node's own zstd; for the WebAssembly fallback up to eight per ZSTD_BLOCK_BYTES, compressed
 * frames and stored ones of 9 bytes plus 3 per 128 KiB, stored-runs.ts), with room to spare. A file that
 * grows after the listing fails the export anyway (E_CHANGED_WHILE_READING).
 */
export function archiveBound(listing: DirectoryListing): number {
  let tar = 20 * TAR_BLOCK;
  for (const e of listing.listed) {
    const names = Buffer.byteLength(e.rel) + (e.type === 'symlink' ? Buffer.byteLength(e.target) : 0);
    // + 256: every name is under the archive's top-level folder (a file name, at most 255 bytes, and "/").
    tar += 2 * TAR_BLOCK + padded(names + 128 + 256) + (e.type === 'file' ? padded(e.size) : 0);
  }
  tar += 2 * TAR_BLOCK + padded(256 + 128);
  const frames = Math.ceil(tar / ZSTD_BLOCK_BYTES) + 1;
  return tar + Math.ceil(tar / 256) + 4096 + frames * 1024;
}
