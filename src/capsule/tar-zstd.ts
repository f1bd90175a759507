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
import { lstat, readdir, readlink, type FileHandle } from 'node:fs/promises';
import { posix } from 'node:path';
import tarStream, { type Header, type Pack } from 'tar-stream';
import { JackinError } from '../errors.ts';
import { FdChunkReader } from './fd-chunk-reader.ts';
import { openInsideRoots } from './safe-open.ts';
import { createZstdCompressor } from './zstd-compressor.ts';

/** Files up to this size are read whole, ahead of packing. */
const SMALL_FILE_BYTES = 1024 * 1024;
/** Read-ahead window: files and bytes. */
const PREFETCH_FILES = 8;
const PREFETCH_BYTES = 2 * 1024 * 1024;
/** How far tar-stream's output may run ahead of the compressor. */
const PACK_AHEAD_BYTES = 4 * 1024 * 1024;

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

/** Every entry below `root`, sorted per directory so archives are reproducible; caps enforced as it goes. */
async function listTree(root: string, shown: string, caps: DirectoryCaps): Promise<{ listed: Listed[]; skipped: string[] }> {
  const listed: Listed[] = [];
  const skipped: string[] = [];
  let total = 0;
  const pending: string[] = [''];
  while (pending.length > 0) {
    const relDir = pending.pop() ?? '';
    const names = (await readdir(posix.join(root, relDir))).sort();
    const subdirs: string[] = [];
    for (const name of names) {
      const rel = relDir === '' ? name : `${relDir}/${name}`;
      const st = await lstat(posix.join(root, rel));
      const mode = st.mode & 0o777;
      if (st.isDirectory()) {
        listed.push({ type: 'directory', rel, mode, mtime: st.mtime });
        subdirs.push(rel);
      } else if (st.isFile()) {
        listed.push({ type: 'file', rel, mode, mtime: st.mtime, size: st.size });
        total += st.size;
      } else if (st.isSymbolicLink()) {
        listed.push({ type: 'symlink', rel, mode, mtime: st.mtime, target: await readlink(posix.join(root, rel)) });
      } else {
        skipped.push(rel);
        continue;
      }
      if (listed.length > caps.maxEntries) throw capError(shown, `more than ${caps.maxEntries} entries`);
      if (total > caps.maxTotalBytes) throw capError(shown, `more than ${caps.maxTotalBytes} bytes of file content`);
    }
    // Depth-first in sorted order: push in reverse so the first name is walked first.
    for (let i = subdirs.length - 1; i >= 0; i--) pending.push(subdirs[i] ?? '');
  }
  return { listed, skipped };
}

async function writeAll(out: FileHandle, data: Uint8Array): Promise<void> {
  let at = 0;
  while (at < data.byteLength) {
    const { bytesWritten } = await out.write(data, at, data.byteLength - at);
    at += bytesWritten;
  }
}

/** Archive real directory `root` into `out` (written from its current position). */
export async function writeDirectoryArchive(root: string, shown: string, out: FileHandle, caps: DirectoryCaps): Promise<ArchiveSummary> {
  const { listed, skipped } = await listTree(root, shown, caps);
  const compressor = await createZstdCompressor();
  const pack = tarStream.pack();

  // tar-stream queues whole entries without backpressure, so the producer waits while the consumer is more
  // than PACK_AHEAD_BYTES behind (memory stays bounded whatever the tree).
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
      for (const frame of compressor.push(chunk)) await writeAll(out, frame);
    }
    for (const frame of compressor.end()) await writeAll(out, frame);
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

  // Small files are opened and read ahead, several at once, while earlier entries are packed: one at a
  // time, each file's open/stat/read/close round trips through the thread pool made the walk latency-bound.
  const prefetched = new Map<number, Promise<Buffer>>();
  let prefetchedBytes = 0;
  let nextPrefetch = 0;
  const topUp = (from: number): void => {
    nextPrefetch = Math.max(nextPrefetch, from);
    while (nextPrefetch < listed.length && prefetched.size < PREFETCH_FILES && prefetchedBytes < PREFETCH_BYTES) {
      const e = listed[nextPrefetch];
      if (e !== undefined && e.type === 'file' && e.size > 0 && e.size <= SMALL_FILE_BYTES) {
        const p = readSmallFile(root, shown, e.rel, e.size);
        p.catch(() => undefined);
        prefetched.set(nextPrefetch, p);
        prefetchedBytes += e.size;
      }
      nextPrefetch++;
    }
  };

  let contentBytes = 0;
  try {
    for (const [i, e] of listed.entries()) {
      topUp(i);
      const base = { name: e.rel, mode: e.mode, mtime: e.mtime, uid: 0, gid: 0, uname: '', gname: '' };
      switch (e.type) {
        case 'directory':
          await addEntry(pack, { ...base, type: 'directory' });
          break;
        case 'symlink':
          await addEntry(pack, { ...base, type: 'symlink', linkname: e.target });
          break;
        case 'file': {
          const header = { ...base, type: 'file' as const, size: e.size };
          const ahead = prefetched.get(i);
          if (ahead !== undefined) {
            prefetched.delete(i);
            const content = await ahead;
            prefetchedBytes -= e.size;
            produced += content.length;
            await addEntry(pack, header, content);
            contentBytes += e.size;
          } else {
            produced += e.size;
            contentBytes += await addFile(pack, root, shown, e.rel, header);
          }
          await caughtUp();
          break;
        }
        default: {
          const never: never = e;
          throw new TypeError(`unknown entry ${JSON.stringify(never)}`);
        }
      }
    }
    pack.finalize();
  } catch (e) {
    pack.destroy(e instanceof Error ? e : new Error(String(e)));
    // Let every read ahead finish and close its descriptor before the caller closes the archive.
    await Promise.allSettled(prefetched.values());
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

/** Opens one file of the tree (never leaving it) and reads its `size` bytes, refusing a file that changed. */
async function readSmallFile(root: string, shown: string, rel: string, size: number): Promise<Buffer> {
  const entryShown = `${shown}/${rel}`;
  const opened = await openInsideRoots(posix.join(root, rel), entryShown, { realRoots: [root], outside: 'deny', confirmedOutside: false });
  try {
    if (opened.kind !== 'file' || opened.stat.size !== BigInt(size)) {
      throw new JackinError('E_CHANGED_WHILE_READING', `${entryShown} changed while the directory was exported; export it again once it stops changing`);
    }
    const reader = new FdChunkReader({ handle: opened.handle, size, mtimeNs: opened.stat.mtimeNs, shown: entryShown, hash: false });
    const parts: Buffer[] = [];
    for await (const { bytes } of reader.chunks()) parts.push(bytes);
    return parts.length === 1 && parts[0] !== undefined ? parts[0] : Buffer.concat(parts);
  } finally {
    await opened.handle.close();
  }
}

async function addFile(pack: Pack, root: string, shown: string, rel: string, header: Partial<Header> & Pick<Header, 'name'> & { size: number }): Promise<number> {
  const entryShown = `${shown}/${rel}`;
  const opened = await openInsideRoots(posix.join(root, rel), entryShown, { realRoots: [root], outside: 'deny', confirmedOutside: false });
  try {
    if (opened.kind !== 'file' || opened.stat.size !== BigInt(header.size)) {
      throw new JackinError('E_CHANGED_WHILE_READING', `${entryShown} changed while the directory was exported; export it again once it stops changing`);
    }
    let done!: Promise<void>;
    let sink!: ReturnType<Pack['entry']>;
    done = new Promise<void>((resolve, reject) => {
      sink = pack.entry(header, (err) => (err ? reject(err) : resolve()));
    });
    done.catch(() => undefined);
    const reader = new FdChunkReader({ handle: opened.handle, size: header.size, mtimeNs: opened.stat.mtimeNs, shown: entryShown, hash: false });
    for await (const { bytes } of reader.chunks()) {
      // Hold until tar-stream drains (backpressure), or until the entry fails, so an error never hangs here.
      if (!sink.write(bytes)) await Promise.race([new Promise<void>((resolve) => sink.once('drain', () => resolve())), done]);
    }
    sink.end(null); // streamx types require an argument; null writes nothing
    await done;
    return header.size;
  } finally {
    await opened.handle.close();
  }
}
