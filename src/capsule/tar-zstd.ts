/**
 * Writes a directory as a tar.zst stream into an open file: tar-stream's pack piped through the zstd
 * compressor. Entry names are relative to the directory. Entries are taken with lstat: a symlink is stored
 * as a link and never followed, a FIFO, socket or device is skipped (and reported), and every regular file
 * is opened through openInsideRoots with the directory as the only root, so a subdirectory swapped for a
 * symlink during the walk cannot pull in bytes from elsewhere. (Such a swap can still add names and
 * symlink targets from the other directory to the listing; file contents never.) Owner fields are fixed (uid/gid 0, no
 * names), so the container's users do not leak and extraction does not depend on them.
 * Caps are checked on the whole listing before any byte is archived, and file sizes are declared in the
 * tar headers, so a file that changes meanwhile fails the export (E_CHANGED_WHILE_READING).
 */
import { closeSync, constants, fstatSync, lstatSync, openSync, readdirSync, readlinkSync, readSync } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { posix } from 'node:path';
import tarStream, { type Header, type Pack } from 'tar-stream';
import { errnoOf, JackinError } from '../errors.ts';
import { openInsideRootsSync } from './safe-open.ts';
import { createZstdCompressor, ZSTD_BLOCK_BYTES } from './zstd-compressor.ts';

const fstatSyncBig = (fd: number) => fstatSync(fd, { bigint: true });

/** Bytes read per call from one file of the tree. */
const READ_BYTES = 1024 * 1024;
/** How far tar-stream's output may run ahead of the compressor. */
const PACK_AHEAD_BYTES = 2 * 1024 * 1024;
/** Synchronous work (listing, opening, reading) done between two turns of the event loop. */
const SLICE_MS = 4;

/**
 * Read buffers lent to tar-stream and handed back once the compressor has copied them, in power-of-two
 * classes. A fresh buffer per file left a 256 MiB tree's worth of garbage for the collector, which let the
 * capsule's peak RSS grow by about 40 MiB during a directory export. A chunk comes back only when it is
 * exactly the buffer lent (tar-stream pushes content buffers as they are); anything else is left to the GC.
 * One set serves every export of the process, so repeated exports reuse the same memory.
 */
class ReadBuffers {
  readonly #free = new Map<number, Buffer[]>();
  readonly #lent = new WeakMap<ArrayBufferLike, { size: number; length: number }>();
  #kept = 0;
  /** Free bytes kept over all classes: about what the pack may hold ahead of the compressor. */
  static readonly KEEP_BYTES = 3 * 1024 * 1024;

  take(length: number): Buffer {
    let size = 64 * 1024;
    while (size < length) size *= 2;
    let b = this.#free.get(size)?.pop();
    if (b !== undefined) this.#kept -= size;
    else b = Buffer.allocUnsafeSlow(size);
    this.#lent.set(b.buffer, { size, length });
    return b.subarray(0, length);
  }

  give(chunk: Uint8Array): void {
    const lent = this.#lent.get(chunk.buffer);
    if (lent === undefined || chunk.byteOffset !== 0 || chunk.byteLength !== lent.length) return;
    this.#lent.delete(chunk.buffer);
    if (this.#kept + lent.size > ReadBuffers.KEEP_BYTES) return;
    const list = this.#free.get(lent.size) ?? [];
    list.push(Buffer.from(chunk.buffer, 0, lent.size));
    this.#free.set(lent.size, list);
    this.#kept += lent.size;
  }
}

const buffers = new ReadBuffers();

/**
 * The walk uses synchronous fs calls, in slices of SLICE_MS with a turn of the event loop between them, so
 * the agent's terminal traffic keeps flowing: each promise-based call costs about 40 us of thread-pool round
 * trip against about 5 us synchronously, and a tree has several calls per entry.
 */
class Slicer {
  #since = performance.now();
  async turn(): Promise<void> {
    if (performance.now() - this.#since < SLICE_MS) return;
    await new Promise<void>((resolve) => setImmediate(resolve));
    this.#since = performance.now();
  }
}

export interface DirectoryCaps {
  readonly maxEntries: number;
  readonly maxTotalBytes: number;
}

export interface ArchiveSummary {
  /** Entries stored (directories, files, symlinks). */
  readonly entries: number;
  /** File content bytes stored, before compression. */
  readonly contentBytes: number;
  /** Relative names of special files left out. */
  readonly skipped: readonly string[];
}

type Listed =
  | { readonly type: 'directory'; readonly rel: string; readonly mode: number; readonly mtime: Date }
  | { readonly type: 'file'; readonly rel: string; readonly mode: number; readonly mtime: Date; readonly size: number }
  | { readonly type: 'symlink'; readonly rel: string; readonly mode: number; readonly mtime: Date; readonly target: string };

function capError(shown: string, what: string): JackinError {
  return new JackinError('E_DIR_CAP', `${shown}: ${what}; export a smaller directory or raise export.directories in the policy`);
}

function changedWhileListed(shown: string, rel: string, cause: unknown): JackinError {
  return new JackinError('E_CHANGED_WHILE_READING', `${rel === '' ? shown : `${shown}/${rel}`} changed while the directory was listed; export it again once it stops changing`, { cause });
}

/** A name that vanished or changed kind between readdir and lstat (the tree is changing): a clear, stable error. */
function listingCall<T>(shown: string, rel: string, call: () => T): T {
  try {
    return call();
  } catch (e) {
    const code = errnoOf(e);
    if (code === 'ENOENT' || code === 'ENOTDIR' || code === 'EINVAL' || code === 'ELOOP') throw changedWhileListed(shown, rel, e);
    throw e;
  }
}

/**
 * Opens directory `rel` of the tree for listing, and makes sure it is the one at that place inside `root`:
 * the final name is never followed (O_NOFOLLOW), and the opened directory's real location must be exactly
 * root/rel, so a directory on the way swapped for a symlink is refused (E_CHANGED_WHILE_READING) instead of
 * listed. The caller lists through /proc/self/fd/N, which stays that directory whatever is renamed later.
 */
function openListedDirectory(root: string, shown: string, rel: string): number {
  const fd = listingCall(shown, rel, () => openSync(posix.join(root, rel), constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW));
  let real: string;
  try {
    real = readlinkSync(`/proc/self/fd/${fd}`);
  } catch (e) {
    closeSync(fd);
    throw e;
  }
  if (real !== posix.join(root, rel)) {
    closeSync(fd);
    throw changedWhileListed(shown, rel, new Error(`opened ${real}, not ${posix.join(root, rel)}`));
  }
  return fd;
}

/** Every entry below `root`, sorted per directory so archives are reproducible; caps enforced as it goes. */
async function listTree(root: string, shown: string, caps: DirectoryCaps, slicer: Slicer): Promise<{ listed: Listed[]; skipped: string[] }> {
  const listed: Listed[] = [];
  const skipped: string[] = [];
  let total = 0;
  const pending: string[] = [''];
  while (pending.length > 0) {
    const relDir = pending.pop() ?? '';
    const dirFd = openListedDirectory(root, shown, relDir);
    try {
      const here = `/proc/self/fd/${dirFd}`;
      const names = listingCall(shown, relDir, () => readdirSync(here)).sort();
      const subdirs: string[] = [];
      for (const name of names) {
        const rel = relDir === '' ? name : `${relDir}/${name}`;
        await slicer.turn();
        const st = listingCall(shown, rel, () => lstatSync(posix.join(here, name)));
        const mode = st.mode & 0o777;
        if (st.isDirectory()) {
          listed.push({ type: 'directory', rel, mode, mtime: st.mtime });
          subdirs.push(rel);
        } else if (st.isFile()) {
          listed.push({ type: 'file', rel, mode, mtime: st.mtime, size: st.size });
          total += st.size;
        } else if (st.isSymbolicLink()) {
          listed.push({ type: 'symlink', rel, mode, mtime: st.mtime, target: listingCall(shown, rel, () => readlinkSync(posix.join(here, name))) });
        } else {
          skipped.push(rel);
          continue;
        }
        if (listed.length > caps.maxEntries) throw capError(shown, `more than ${caps.maxEntries} entries`);
        if (total > caps.maxTotalBytes) throw capError(shown, `more than ${caps.maxTotalBytes} bytes of file content`);
      }
      // Depth-first in sorted order: push in reverse so the first name is walked first.
      for (let i = subdirs.length - 1; i >= 0; i--) pending.push(subdirs[i] ?? '');
    } finally {
      closeSync(dirFd);
    }
  }
  return { listed, skipped };
}

/** A directory's entries, listed (caps checked) before any byte is archived. */
export interface DirectoryListing {
  readonly root: string;
  readonly shown: string;
  readonly listed: readonly Listed[];
  readonly skipped: readonly string[];
}

/** Lists real directory `root`; throws E_DIR_CAP when it is over a cap. */
export async function listDirectory(root: string, shown: string, caps: DirectoryCaps): Promise<DirectoryListing> {
  const { listed, skipped } = await listTree(root, shown, caps, new Slicer());
  return { root, shown, listed, skipped };
}

const TAR_BLOCK = 512;
const roundUp = (n: number, to: number): number => Math.ceil(n / to) * to;

/**
 * The most bytes the tar.zst of `listing` can take, for a host that accepts a streamed size (the exact
 * size follows the last chunk): every entry as a header, a pax extended header with its name and link
 * target, and its content padded to 512 bytes; then the end blocks; then zstd's worst case for that input
 * (ZSTD_COMPRESSBOUND, per block of ZSTD_BLOCK_BYTES), with room to spare. A file that grows after the
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
  return tar + Math.ceil(tar / 256) + frames * 1024;
}

/** Receives the archive's bytes in order; the archiver waits for each call (backpressure). */
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
export function archiveTopFolder(name: string): string {
  const base = posix.basename(name);
  return base === '' || base === '.' || base === '..' ? 'root' : base;
}

/** Archive a listed directory as tar.zst into `sink`, every entry under the folder `top`. */
export async function writeDirectoryArchive(listing: DirectoryListing, sink: ArchiveSink, top: string = archiveTopFolder(listing.root)): Promise<ArchiveSummary> {
  const { root, shown, listed, skipped } = listing;
  const folder = archiveTopFolder(top);
  const slicer = new Slicer();
  const compressor = await createZstdCompressor();
  const pack = tarStream.pack();

  // tar-stream queues whole entries without backpressure, so the producer waits while the consumer is more
  // than PACK_AHEAD_BYTES behind (memory stays bounded whatever the tree). `produced` counts each entry's
  // content and the least its headers take (headerFloor): never more than tar-stream emits, so the wait
  // always ends, and a tree of nothing but directories and long symlinks is bounded too.
  let produced = 0;
  let consumed = 0;
  let wake: (() => void) | undefined;
  const consumer = (async () => {
    for await (const chunk of pack as AsyncIterable<Uint8Array>) {
      consumed += chunk.byteLength;
      if (wake !== undefined && produced - consumed < PACK_AHEAD_BYTES / 2) {
        wake();
        wake = undefined;
      }
      const frames = compressor.push(chunk);
      buffers.give(chunk);
      for (const frame of frames) await sink(frame);
    }
    for (const frame of compressor.end()) await sink(frame);
  })();
  // A failed write (say, a full disk) must stop the producer, which would otherwise wait for a drain forever;
  // the producer failing first must not leave the consumer's rejection unhandled.
  let writeError: unknown;
  const consumerDone = consumer.then(
    () => undefined,
    (e: unknown) => {
      writeError = e;
      pack.destroy(e instanceof Error ? e : new Error(String(e)));
    },
  );

  const caughtUp = async (): Promise<void> => {
    while (produced - consumed > PACK_AHEAD_BYTES && writeError === undefined) {
      await Promise.race([new Promise<void>((resolve) => (wake = resolve)), consumerDone]);
    }
  };

  let contentBytes = 0;
  try {
    await addEntry(pack, { name: folder, type: 'directory', mode: 0o755, mtime: new Date(), uid: 0, gid: 0, uname: '', gname: '' });
    for (const e of listed) {
      await slicer.turn();
      const base = { name: `${folder}/${e.rel}`, mode: e.mode, mtime: e.mtime, uid: 0, gid: 0, uname: '', gname: '' };
      produced += headerFloor(e);
      switch (e.type) {
        case 'directory':
          await addEntry(pack, { ...base, type: 'directory' });
          break;
        case 'symlink':
          await addEntry(pack, { ...base, type: 'symlink', linkname: e.target });
          break;
        case 'file': {
          const header = { ...base, type: 'file' as const, size: e.size };
          produced += e.size;
          contentBytes += await addFile(pack, root, shown, e.rel, header, slicer);
          break;
        }
        default: {
          const never: never = e;
          throw new TypeError(`unknown entry ${JSON.stringify(never)}`);
        }
      }
      await caughtUp();
    }
    pack.finalize();
  } catch (e) {
    pack.destroy(e instanceof Error ? e : new Error(String(e)));
    await consumerDone;
    // A write failure is the real cause when it stopped the producer.
    throw writeError ?? e;
  }
  await consumerDone;
  if (writeError !== undefined) throw writeError;
  return { entries: listed.length, contentBytes, skipped };
}

/**
 * The fewest header bytes tar-stream writes for an entry: its 512-byte header, and when the name or link
 * target cannot fit a ustar header for certain (a name over 255 bytes, a target over 100), a pax header
 * block plus pax records holding both in full (so at least their bytes, padded to a block).
 */
function headerFloor(e: Listed): number {
  const name = Buffer.byteLength(e.rel);
  const target = e.type === 'symlink' ? Buffer.byteLength(e.target) : 0;
  if (name <= 255 && target <= 100) return TAR_BLOCK;
  return 2 * TAR_BLOCK + roundUp(name + target, TAR_BLOCK);
}

function addEntry(pack: Pack, header: Partial<Header> & Pick<Header, 'name'>, content?: Buffer): Promise<void> {
  return new Promise((resolve, reject) => {
    const cb = (err?: Error | null): void => (err ? reject(err) : resolve());
    if (content === undefined) pack.entry(header, cb);
    else pack.entry(header, content, cb);
  });
}

/**
 * Opens one file of the tree (never leaving it: the directory is the only root) and adds its `size` bytes
 * as an entry, refusing a file that changed since it was listed (size or mtime, a short read, a byte past
 * the end). A file that fits in one read is added whole; a larger one is streamed with tar-stream's
 * backpressure, turning the event loop between reads.
 */
async function addFile(pack: Pack, root: string, shown: string, rel: string, header: Partial<Header> & Pick<Header, 'name'> & { size: number }, slicer: Slicer): Promise<number> {
  const entryShown = `${shown}/${rel}`;
  const changed = (what: string): JackinError =>
    new JackinError('E_CHANGED_WHILE_READING', `${entryShown} changed while the directory was exported (${what}); export it again once it stops changing`);
  const size = header.size;
  const opened = openInsideRootsSync(posix.join(root, rel), entryShown, { realRoots: [root], outside: 'deny', confirmedOutside: false });
  try {
    if (opened.kind !== 'file' || opened.stat.size !== BigInt(size)) throw changed('no longer the listed file');
    const readAt = (at: number): Buffer => {
      const want = Math.min(READ_BYTES, size - at);
      const buf = buffers.take(want);
      let filled = 0;
      while (filled < want) {
        const n = readSync(opened.fd, buf, filled, want - filled, at + filled);
        if (n === 0) throw changed(`shrank to ${at + filled} of ${size} bytes`);
        filled += n;
      }
      return buf;
    };
    if (size <= READ_BYTES) {
      const content = size === 0 ? Buffer.alloc(0) : readAt(0);
      checkUnchanged(opened.fd, size, opened.stat.mtimeNs, changed);
      await addEntry(pack, header, content);
      return size;
    }
    let done!: Promise<void>;
    let sink!: ReturnType<Pack['entry']>;
    done = new Promise<void>((resolve, reject) => {
      sink = pack.entry(header, (err) => (err ? reject(err) : resolve()));
    });
    done.catch(() => undefined);
    try {
      for (let at = 0; at < size; ) {
        const bytes = readAt(at);
        at += bytes.length;
        // Hold until tar-stream drains (backpressure), or until the entry fails, so an error never hangs here.
        if (!sink.write(bytes)) await Promise.race([new Promise<void>((resolve) => sink.once('drain', () => resolve())), done]);
        await slicer.turn();
      }
      checkUnchanged(opened.fd, size, opened.stat.mtimeNs, changed);
    } catch (e) {
      sink.destroy(e instanceof Error ? e : new Error(String(e)));
      throw e;
    }
    sink.end(null); // streamx types require an argument; null writes nothing
    await done;
    return size;
  } finally {
    closeSync(opened.fd);
  }
}

/** After the last read: nothing past the listed size, and the same size and mtime as when opened. */
function checkUnchanged(fd: number, size: number, mtimeNs: bigint, changed: (what: string) => JackinError): void {
  if (readSync(fd, Buffer.alloc(1), 0, 1, size) !== 0) throw changed(`grew past ${size} bytes`);
  const st = fstatSyncBig(fd);
  if (st.size !== BigInt(size)) throw changed(`size is now ${st.size}, was ${size}`);
  if (st.mtimeNs !== mtimeNs) throw changed('modified');
}
