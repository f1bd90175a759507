/**
 * Writes a listed directory (directory-listing.ts) as a tar.zst stream: tar-stream's pack piped through the
 * zstd compressor, with bounded memory (the pack may run at most PACK_AHEAD_BYTES ahead of the sink). Entry
 * names are relative to the directory. Every regular file is opened from its checked parent directory
 * (openEntrySync; openInsideRootsSync without /proc) with the directory as the only root, so a subdirectory
 * swapped for a symlink during the walk cannot pull in bytes from elsewhere. Owner fields are fixed (uid/gid
 * 0, no names), so the container's users do not leak and extraction does not depend on them. File sizes are
 * declared in the tar headers, so a file that changes after the listing fails the export
 * (E_CHANGED_WHILE_READING).
 */
import { closeSync, fstatSync, readSync } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { posix } from 'node:path';
import { createRequire } from 'node:module';
import type TarStream from 'tar-stream';
import type { Header, Pack } from 'tar-stream';
import { JackinError } from '../../errors.ts';
import { headerFloor } from './archive-bound.ts';
import { procFdAvailable } from './descriptor-location.ts';
import { openListedDirectory, type DirectoryListing } from './directory-listing.ts';
import { readBuffers } from './read-buffers.ts';
import { openEntrySync, openInsideRootsSync } from './safe-open.ts';
import { Slicer } from './slicer.ts';
import { createZstdCompressor } from './zstd-compressor.ts';

// Required, not imported: a bundle would hoist an import and load it for every capsule command (scripts/bundle.mjs).
// And only at the first directory export: with its dependencies it was about 15 ms of every capsule's start.
let tarStreamModule: typeof TarStream | undefined;
const tarStream = (): typeof TarStream => (tarStreamModule ??= createRequire(import.meta.url)('tar-stream') as typeof TarStream);

const fstatSyncBig = (fd: number) => fstatSync(fd, { bigint: true });

/** Bytes read per call from one file of the tree. */
const READ_BYTES = 1024 * 1024;
/** How far tar-stream's output may run ahead of the compressor. */
const PACK_AHEAD_BYTES = 2 * 1024 * 1024;

export interface ArchiveSummary {
  /** Entries stored (directories, files, symlinks). */
  readonly entries: number;
  /** File content bytes stored, before compression. */
  readonly contentBytes: number;
  /** Relative names of special files left out. */
  readonly skipped: readonly string[];
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
  const pack = tarStream().pack();

  // tar-stream queues whole entries without backpressure, so the producer waits while the consumer is more
  // than PACK_AHEAD_BYTES behind (memory stays bounded whatever the tree). `produced` counts each entry's
  // content and the least its headers take (headerFloor): never more than tar-stream emits, so the wait
  // always ends, and a tree of nothing but directories and long symlinks is bounded too.
  let produced = 0;
  let consumed = 0;
  let wake: (() => void) | undefined;
  const consumer = (async () => {
    try {
      for await (const chunk of pack as AsyncIterable<Uint8Array>) {
        consumed += chunk.byteLength;
        if (wake !== undefined && produced - consumed < PACK_AHEAD_BYTES / 2) {
          wake();
          wake = undefined;
        }
        const ready = compressor.push(chunk);
        readBuffers.give(chunk); // copied by push()
        for (const out of await ready) await sink(out);
      }
      for (const out of await compressor.end()) await sink(out);
    } catch (e) {
      compressor.destroy();
      throw e;
    }
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
  const parents = new ParentDirectory(root, shown);
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
          contentBytes += await addFile(pack, root, shown, e.rel, header, slicer, parents);
          break;
        }
        default: {
          const never: never = e;
          throw new TypeError(`unknown entry ${JSON.stringify(never)}`);
        }
      }
      await caughtUp();
    }
    parents.close();
    pack.finalize();
  } catch (e) {
    parents.close();
    pack.destroy(e instanceof Error ? e : new Error(String(e)));
    await consumerDone;
    // A write failure is the real cause when it stopped the producer.
    throw writeError ?? e;
  }
  await consumerDone;
  if (writeError !== undefined) throw writeError;
  return { entries: listed.length, contentBytes, skipped };
}

function addEntry(pack: Pack, header: Partial<Header> & Pick<Header, 'name'>, content?: Buffer): Promise<void> {
  return new Promise((resolve, reject) => {
    const cb = (err?: Error | null): void => (err ? reject(err) : resolve());
    if (content === undefined) pack.entry(header, cb);
    else pack.entry(header, content, cb);
  });
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
 * Opens one file of the tree (never leaving it: the directory is the only root) and adds its `size` bytes
 * as an entry, refusing a file that changed since it was listed (size or mtime, a short read, a byte past
 * the end). A file that fits in one read is added whole; a larger one is streamed with tar-stream's
 * backpressure, turning the event loop between reads.
 */
async function addFile(
  pack: Pack,
  root: string,
  shown: string,
  rel: string,
  header: Partial<Header> & Pick<Header, 'name'> & { size: number },
  slicer: Slicer,
  parents: ParentDirectory,
): Promise<number> {
  const entryShown = `${shown}/${rel}`;
  const changed = (what: string): JackinError =>
    new JackinError('E_CHANGED_WHILE_READING', `${entryShown} changed while the directory was exported (${what}); export it again once it stops changing`);
  const size = header.size;
  const inRoot = { realRoots: [root], outside: 'deny', confirmedOutside: false } as const;
  const slash = rel.lastIndexOf('/');
  const opened = procFdAvailable()
    ? openEntrySync(parents.fd(slash < 0 ? '' : rel.slice(0, slash)), rel.slice(slash + 1), entryShown, inRoot)
    : openInsideRootsSync(posix.join(root, rel), entryShown, inRoot);
  try {
    if (opened.kind !== 'file' || opened.stat.size !== BigInt(size)) throw changed('no longer the listed file');
    const readAt = (at: number): Buffer => {
      const want = Math.min(READ_BYTES, size - at);
      const buf = readBuffers.take(want);
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
