/**
 * Writes a listed directory (directory-listing.ts) as a tar.zst stream: tar headers (tar-header.ts, the
 * bytes tar-stream's pack would write) and file content read straight into the zstd compressor's block, with
 * memory bounded by the compressor's blocks. Entry names are relative to the directory. Every regular file
 * is opened from its checked parent directory
 * (openEntrySync; openInsideRootsSync without /proc) with the directory as the only root, so a subdirectory
 * swapped for a symlink during the walk cannot pull in bytes from elsewhere. Owner fields are fixed (uid/gid
 * 0, no names), so the container's users do not leak and extraction does not depend on them. File sizes are
 * declared in the tar headers, so a file that changes after the listing fails the export
 * (E_CHANGED_WHILE_READING).
 */
import { closeSync, fstatSync, readSync, readvSync } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { posix } from 'node:path';
import { JackinError } from '../../errors.ts';
import { procFdAvailable } from './descriptor-location.ts';
import { openListedDirectory, type DirectoryListing } from './directory-listing.ts';
import { openEntrySync, openInsideRootsSync } from './safe-open.ts';
import { Slicer } from './slicer.ts';
import { padded, TAR_END, tarHeader } from './tar-header.ts';
import { createZstdCompressor, type StreamCompressor } from './zstd-compressor.ts';

const fstatSyncBig = (fd: number) => fstatSync(fd, { bigint: true });

export interface ArchiveSummary {
  /** Entries stored (directories, files, symlinks). */
  readonly entries: number;
  /** File content bytes stored, before compression. */
  readonly contentBytes: number;
  /** Relative names of special files left out. */
  readonly skipped: readonly string[];
}

/** Receives the archive's bytes in order; the archiver waits for each call (backpressure). `bytes` may be
 * reused once the call resolves (the compressor's output, stream-compressor.ts): a sink copies what it keeps. */
export type ArchiveSink = (bytes: Uint8Array) => Promise<void>;

/** A sink appending to an open file. */
export function fileSink(out: FileHandle): ArchiveSink {
  return async (data) => {
    let at = 0;
    while (at < data.byteLength) {
      const { bytesWritten } = await out.write(data, at, data.byteLength - at);
      at += bytesWritten;
    }
  };
}

/**
 * The one top-level folder every entry of an archive sits in, so `tar -xf` makes one folder instead of
 * spilling the tree into the current directory: the exported directory's name (never "", "." or "..").
 */
function archiveTopFolder(name: string): string {
  const base = posix.basename(name);
  return base === '' || base === '.' || base === '..' ? 'root' : base;
}

/** Archive a listed directory as tar.zst into `sink`, every entry under the folder `top`. */
export async function writeDirectoryArchive(
  listing: DirectoryListing,
  sink: ArchiveSink,
  top: string = archiveTopFolder(listing.root),
): Promise<ArchiveSummary> {
  const { root, shown, listed, skipped } = listing;
  const folder = archiveTopFolder(top);
  const slicer = new Slicer();
  const compressor = createZstdCompressor();
  const out = new ArchiveOutput(compressor, sink);
  let contentBytes = 0;
  const parents = new ParentDirectory(root, shown);
  try {
    await compressor.ready();
    await out.push(tarHeader({ name: folder, type: 'directory', mode: 0o755, mtime: new Date(), size: 0 }));
    for (const e of listed) {
      await slicer.turn();
      const name = `${folder}/${e.rel}`;
      switch (e.type) {
        case 'directory':
          await out.push(tarHeader({ name, type: 'directory', mode: e.mode, mtime: e.mtime, size: 0 }));
          break;
        case 'symlink':
          await out.push(tarHeader({ name, type: 'symlink', mode: e.mode, mtime: e.mtime, size: 0, linkname: e.target }));
          break;
        case 'file':
          await out.push(tarHeader({ name, type: 'file', mode: e.mode, mtime: e.mtime, size: e.size }));
          await addFile(out, root, shown, e.rel, e.size, slicer, parents);
          contentBytes += e.size;
          break;
        default: {
          const never: never = e;
          throw new TypeError(`unknown entry ${JSON.stringify(never)}`);
        }
      }
    }
    parents.close();
    await out.push(TAR_END);
    await out.end();
    compressor.release();
  } catch (e) {
    parents.close();
    compressor.destroy();
    throw e;
  }
  return { entries: listed.length, contentBytes, skipped };
}

/**
 * The archive's bytes on their way to the sink: pushed (headers, padding) or read in place into the
 * compressor's block (file content). The frames each call makes go to the sink before the next byte is
 * taken, so memory stays at the compressor's blocks whatever the tree: the sink waits for the socket, the
 * compressor for its thread.
 */
class ArchiveOutput {
  constructor(
    readonly compressor: StreamCompressor,
    readonly sink: ArchiveSink,
  ) {}

  async push(bytes: Uint8Array): Promise<void> {
    await this.#send(await this.compressor.push(bytes));
  }

  async commit(n: number): Promise<void> {
    await this.#send(await this.compressor.commit(n));
  }

  async end(): Promise<void> {
    await this.#send(await this.compressor.end());
  }

  async #send(frames: readonly Uint8Array[]): Promise<void> {
    for (const f of frames) await this.sink(f);
  }
}

/**
 * The directory the files being archived sit in, opened once for all of them (the listing puts a
 * directory's files together) and checked to be exactly where it was listed (openListedDirectory), so each
 * file is opened from it by name (openEntrySync) instead of by a path walked and resolved again per file.
 */
class ParentDirectory {
  #rel: string | undefined;
  #fd: number | undefined;
  constructor(
    readonly root: string,
    readonly shown: string,
  ) {}

  /** A descriptor of directory `rel` of the tree, valid until the next call or close(). */
  fd(rel: string): number {
    if (this.#fd !== undefined && this.#rel === rel) return this.#fd;
    this.close();
    this.#fd = openListedDirectory(this.root, this.shown, rel);
    this.#rel = rel;
    return this.#fd;
  }

  close(): void {
    if (this.#fd !== undefined) closeSync(this.#fd);
    this.#fd = undefined;
    this.#rel = undefined;
  }
}

/**
 * Opens one file of the tree (never leaving it: the directory is the only root) and reads its `size` bytes
 * straight into the compressor's block, then pads it to a tar block. A file that changed since it was
 * listed (size or mtime, a short read, a byte past the end) fails the export. The last read of a file asks
 * for one byte more, into a scratch byte, so a file that grew is caught without a read of its own.
 */
async function addFile(out: ArchiveOutput, root: string, shown: string, rel: string, size: number, slicer: Slicer, parents: ParentDirectory): Promise<void> {
  const entryShown = `${shown}/${rel}`;
  const changed = (what: string): JackinError =>
    new JackinError('E_CHANGED_WHILE_READING', `${entryShown} changed while the directory was exported (${what}); export it again once it stops changing`);
  const inRoot = { realRoots: [root], outside: 'deny', confirmedOutside: false } as const;
  const slash = rel.lastIndexOf('/');
  const opened = procFdAvailable()
    ? openEntrySync(parents.fd(slash < 0 ? '' : rel.slice(0, slash)), rel.slice(slash + 1), entryShown, inRoot)
    : openInsideRootsSync(posix.join(root, rel), entryShown, inRoot);
  try {
    if (opened.kind !== 'file' || opened.stat.size !== BigInt(size)) throw changed('no longer the listed file');
    for (let at = 0, done = false; !done; ) {
      const space = out.compressor.space();
      const want = Math.min(space.byteLength, size - at);
      const last = want === size - at;
      const n = last ? readvSync(opened.fd, [space.subarray(0, want), scratchByte], at) : readSync(opened.fd, space, 0, want, at);
      if (n > want) throw changed(`grew past ${size} bytes`);
      if (n === 0 && want > 0) throw changed(`shrank to ${at} of ${size} bytes`);
      at += n;
      done = last && n === want;
      await out.commit(n);
      await slicer.turn();
    }
    const st = fstatSyncBig(opened.fd);
    if (st.size !== BigInt(size)) throw changed(`size is now ${st.size}, was ${size}`);
    if (st.mtimeNs !== opened.stat.mtimeNs) throw changed('modified');
  } finally {
    closeSync(opened.fd);
  }
  const pad = padded(size) - size;
  if (pad > 0) await out.push(TAR_END.subarray(0, pad));
}

/** Where the last read of each file puts the byte past its end, if there is one. */
const scratchByte = Buffer.alloc(1);
