/**
 * The tar headers of a directory export (tar-zstd.ts), byte for byte the ones tar-stream's pack writes
 * (tar-header.test.ts checks that against tar-stream for any entry): a POSIX ustar header, or, when the name
 * or link target does not fit one (not ASCII, a name that cannot be split into a 155-byte prefix and a
 * 100-byte name, a target over 100 bytes), a pax extended header holding both in full followed by a ustar
 * header named `PaxHeader`. GNU tar, bsdtar and tar-stream read either.
 *
 * Written here rather than through tar-stream's pack because the archiver reads file content straight into
 * the compressor's block (StreamCompressor.space): pack only takes content as buffers it queues itself,
 * which cost a copy of every byte and a stream event per chunk (bench/RESULTS.md, the directory export's
 * fifth pass). tar-stream does not export its header encoder. archive-bound.ts counts these sizes.
 */

export const TAR_BLOCK = 512;

/** Two zero blocks end an archive. */
export const TAR_END = new Uint8Array(2 * TAR_BLOCK);

type TarEntryType = 'file' | 'directory' | 'symlink';

export interface TarEntry {
  /** The entry's path in the archive, '/'-separated, no leading or trailing '/'. */
  readonly name: string;
  readonly type: TarEntryType;
  /** Permission bits (only the low 12 are stored). */
  readonly mode: number;
  readonly mtime: Date;
  /** Content bytes (files; 0 for the rest). */
  readonly size: number;
  /** A symlink's target. */
  readonly linkname?: string;
}

const TYPEFLAG: Readonly<Record<TarEntryType | 'pax-header', number>> = { file: 0x30, directory: 0x35, symlink: 0x32, 'pax-header': 0x78 };
const USTAR_MAGIC = [0x75, 0x73, 0x74, 0x61, 0x72, 0x00, 0x30, 0x30]; // "ustar\0" "00"

/** Bytes of a header and its padding for an entry: one block, or a pax header, its padded records and a block. */
export function tarHeader(entry: TarEntry): Buffer {
  const plain = ustarHeader(entry, entry.name, entry.linkname, TYPEFLAG[entry.type], entry.size);
  if (plain !== null) return plain;
  let records = paxRecord('path', entry.name);
  if (entry.linkname !== undefined && entry.linkname !== '') records += paxRecord('linkpath', entry.linkname);
  const pax = Buffer.from(records);
  const link = entry.linkname !== undefined && entry.linkname !== '' ? 'PaxHeader' : undefined;
  const out = Buffer.alloc(TAR_BLOCK + padded(pax.byteLength) + TAR_BLOCK);
  (ustarHeader(entry, 'PaxHeader', link, TYPEFLAG['pax-header'], pax.byteLength) as Buffer).copy(out, 0);
  pax.copy(out, TAR_BLOCK);
  (ustarHeader(entry, 'PaxHeader', link, TYPEFLAG[entry.type], entry.size) as Buffer).copy(out, TAR_BLOCK + padded(pax.byteLength));
  return out;
}

/** `n` rounded up to whole tar blocks. */
export function padded(n: number): number {
  return Math.ceil(n / TAR_BLOCK) * TAR_BLOCK;
}

/** One pax record: "<length> <key>=<value>\n", the length counting itself. */
function paxRecord(key: string, value: string): string {
  const body = ` ${key}=${value}\n`;
  const len = Buffer.byteLength(body);
  let digits = String(len).length;
  if (len + digits >= 10 ** digits) digits++;
  return `${len + digits}${body}`;
}

/** A ustar header, or null when `name` or `linkname` does not fit one. */
function ustarHeader(entry: TarEntry, fullName: string, linkname: string | undefined, typeflag: number, size: number): Buffer | null {
  if (Buffer.byteLength(fullName) !== fullName.length) return null; // not ASCII
  let name = fullName;
  let prefix = '';
  while (name.length > 100) {
    const i = name.indexOf('/');
    if (i === -1) return null;
    prefix += prefix === '' ? name.slice(0, i) : `/${name.slice(0, i)}`;
    name = name.slice(i + 1);
  }
  if (prefix.length > 155) return null;
  if (linkname !== undefined && Buffer.byteLength(linkname) > 100) return null;

  const buf = Buffer.alloc(TAR_BLOCK);
  buf.write(name, 0, 'latin1');
  // No permission bits at all is stored as tar-stream's defaults, so the operator can read what they extract.
  const mode = entry.mode !== 0 ? entry.mode : entry.type === 'directory' ? 0o755 : 0o644;
  buf.write(octal(mode & 0o7777, 6), 100, 'latin1');
  buf.write(octal(0, 6), 108, 'latin1'); // uid
  buf.write(octal(0, 6), 116, 'latin1'); // gid
  writeSize(buf, size);
  buf.write(octal(Math.max(0, Math.floor(entry.mtime.getTime() / 1000)), 11), 136, 'latin1');
  buf[156] = typeflag;
  if (linkname !== undefined && linkname !== '') buf.write(linkname, 157, 'utf8');
  buf.set(USTAR_MAGIC, 257);
  buf.write(octal(0, 6), 329, 'latin1'); // devmajor
  buf.write(octal(0, 6), 337, 'latin1'); // devminor
  if (prefix !== '') buf.write(prefix, 345, 'latin1');
  buf.write(octal(checksum(buf), 6), 148, 'latin1');
  return buf;
}

/** `n` in `digits` octal digits and a space; all sevens when it does not fit (as tar-stream). */
function octal(n: number, digits: number): string {
  const s = n.toString(8);
  return s.length > digits ? `${'7'.repeat(digits)} ` : `${s.padStart(digits, '0')} `;
}

/** The size field: 11 octal digits, or base-256 (GNU's and star's extension) for 8 GiB and more. */
function writeSize(buf: Buffer, size: number): void {
  if (size.toString(8).length <= 11) {
    buf.write(octal(size, 11), 124, 'latin1');
    return;
  }
  buf[124] = 0x80;
  let n = size;
  for (let i = 11; i > 0; i--) {
    buf[124 + i] = n % 0x100;
    n = Math.floor(n / 0x100);
  }
}

/** The header's checksum: the sum of its bytes with the checksum field as eight spaces. */
function checksum(buf: Buffer): number {
  let sum = 8 * 0x20;
  for (let i = 0; i < 148; i++) sum += buf[i] as number;
  for (let i = 156; i < TAR_BLOCK; i++) sum += buf[i] as number;
  return sum;
}
