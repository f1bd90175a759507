/**
 * The capsule's side of an export: resolve a requested container path under the policy before any byte
 * moves (safe-open.ts), then offer its bytes as chunks of at most 1 MiB with the final byte count and
 * SHA-256.
 *
 * FileExportStart declares a size before the first chunk. A regular file has its fstat size. A directory is
 * listed first (caps checked before any byte moves), then:
 *  - for a host that accepts a streamed size (`streamSize`, docs/protocol.md section 7), archived as tar.zst
 *    while it streams: Start declares an upper bound (archiveBound), and the exact size follows the last
 *    chunk in a FileExportLength frame. Archiving and sending overlap, and nothing touches the disk;
 *  - otherwise archived into a 0600 temporary file under `<run>/exports/`, unlinked as soon as it is
 *    created (the open descriptor keeps it alive, so nothing is left behind even if the capsule is killed),
 *    and then streamed like a file with its exact size.
 */
import { randomBytes } from '../../lazy-builtins.ts';
import { constants } from 'node:fs';
import { mkdir, open, unlink, type FileHandle } from 'node:fs/promises';
import { posix } from 'node:path';
import { JackinError } from '../../errors.ts';
import { containerPath, decideDirectory, decideFileSize, expandRoots } from '../../policy/decide.ts';
import type { Policy } from '../../policy/schema.ts';
import { FdChunkReader, type ExportChunk, type ExportDigest } from './fd-chunk-reader.ts';
import { openInsideRoots, realRoots } from './safe-open.ts';
import { archiveBound } from './archive-bound.ts';
import { listDirectory, type DirectoryListing } from './directory-listing.ts';
import { fileSink, writeDirectoryArchive } from './tar-zstd.ts';
import { TransferHash } from '../../protocol/transfer-hash.ts';
import { EXPORT_CHUNK_BYTES } from './fd-chunk-reader.ts';

export { EXPORT_CHUNK_BYTES } from './fd-chunk-reader.ts';

export interface ExportContext {
  readonly policy: Policy;
  /** Absolute workspace directory; relative requests resolve against it and `${workspace}` expands to it. */
  readonly workspace: string;
  /** Absolute run directory: `${run}` in roots, and home of the temporary archives. */
  readonly runDir: string;
  /** The operator confirmed this export although it leaves the roots (policy outsideRoots = confirm). */
  readonly confirmedOutside?: boolean;
  /** The host accepts a directory whose exact size comes after the last chunk (FileExportLength). */
  readonly streamSize?: boolean;
}

export interface ExportSource {
  readonly kind: 'file' | 'directory';
  /** The path as requested. */
  readonly requested: string;
  /** Real location of what is exported. */
  readonly realPath: string;
  /** Suggested name on the host (the host sanitises it again): the file's name, or `<dir>.tar.zst`. */
  readonly name: string;
  /** Exact number of bytes chunks() yields; when `streamed`, an upper bound (the exact count is digest().bytes). */
  readonly size: number;
  /** A directory archived while it streams: send FileExportLength with digest().bytes before FileExportEnd. */
  readonly streamed: boolean;
  /** For a directory: special files (FIFOs, sockets, devices) left out, relative to it. */
  readonly skipped: readonly string[];
  /** One pass of chunks; throws E_CHANGED_WHILE_READING rather than completing when the file changed.
   * `allocate` supplies chunk buffers (a sender recycles them once written); default fresh buffers. */
  chunks(allocate?: (bytes: number) => Buffer): AsyncGenerator<ExportChunk, void, undefined>;
  /** Byte count and SHA-256 of everything yielded; call after chunks() completed. */
  digest(): ExportDigest;
  /** Release the descriptor (and with it a directory's temporary archive). Safe to call twice. */
  close(): Promise<void>;
}

/** Where directory archives are built inside the run directory. */
const EXPORT_TEMP_DIR = 'exports';

function suggestedName(lexical: string, real: string): string {
  return posix.basename(lexical) || posix.basename(real) || 'root';
}

/** Resolve `requested` under the policy and open it for export. The caller must close() the result. */
export async function openExportSource(requested: string, ctx: ExportContext): Promise<ExportSource> {
  const abs = containerPath(requested, ctx.workspace);
  const roots = await realRoots(expandRoots(ctx.policy.export.roots, { workspace: ctx.workspace, run: ctx.runDir }));
  const opened = await openInsideRoots(abs, requested, {
    realRoots: roots,
    outside: ctx.policy.export.outsideRoots,
    confirmedOutside: ctx.confirmedOutside ?? false,
  });
  try {
    switch (opened.kind) {
      case 'file': {
        const size = Number(opened.stat.size);
        const d = decideFileSize(size, ctx.policy);
        if (d.kind === 'too-large') {
          throw new JackinError('E_TOO_LARGE', `${requested} is ${size} bytes, over the export cap of ${d.cap} bytes (export.maxFileBytes in the policy)`);
        }
        const reader = new FdChunkReader({ handle: opened.handle, size, mtimeNs: opened.stat.mtimeNs, shown: requested });
        return new DescriptorSource('file', requested, opened.realPath, suggestedName(abs, opened.realPath), size, reader, opened.handle);
      }
      case 'directory': {
        await opened.handle.close();
        return await openDirectory(requested, abs, opened.realPath, ctx);
      }
      default: {
        const never: never = opened.kind;
        throw new TypeError(`unknown kind ${String(never)}`);
      }
    }
  } catch (e) {
    await opened.handle.close().catch(() => undefined);
    throw e;
  }
}

async function openDirectory(requested: string, abs: string, real: string, ctx: ExportContext): Promise<ExportSource> {
  const d = decideDirectory(0, 0, ctx.policy);
  if (d.kind === 'disabled') {
    throw new JackinError(
      'E_DIR_DISABLED',
      `${requested} is a directory and directory export is off (export.directories.enabled in the policy); export its files one by one`,
    );
  }
  const listing = await listDirectory(real, requested, ctx.policy.export.directories);
  const name = `${suggestedName(abs, real)}.tar.zst`;
  if (ctx.streamSize === true) return new StreamedArchive(requested, real, name, listing);
  const tmp = await createUnlinkedTemp(ctx.runDir);
  try {
    await writeDirectoryArchive(listing, fileSink(tmp), suggestedName(abs, real));
    const size = Number((await tmp.stat({ bigint: true })).size);
    // Our own file, unlinked, so nobody else can change it: no mtime check.
    const reader = new FdChunkReader({ handle: tmp, size, mtimeNs: undefined, shown: requested });
    return new DescriptorSource('directory', requested, real, name, size, reader, tmp, listing.skipped);
  } catch (e) {
    await tmp.close().catch(() => undefined);
    throw e;
  }
}

/** Archive bytes allowed to wait for the sender before the archiver pauses (memory bound). */
const STREAMED_ARCHIVE_QUEUE_BYTES = 2 * 1024 * 1024;

/**
 * A directory archived as it is sent: the archiver runs alongside chunks(), its output copied as it comes
 * into the chunks chunks() yields (the compressor reuses its own buffers, stream-compressor.ts). Once
 * STREAMED_ARCHIVE_QUEUE_BYTES of full chunks wait for the sender, the archiver waits: a slow host slows it. The
 * chunks are hashed like a file's; an archive that would pass the declared bound fails instead (it cannot,
 * see archiveBound).
 */
class StreamedArchive implements ExportSource {
  readonly kind = 'directory';
  readonly requested: string;
  readonly realPath: string;
  readonly name: string;
  readonly size: number;
  readonly streamed = true;
  readonly skipped: readonly string[];
  readonly #listing: DirectoryListing;
  #digest: ExportDigest | undefined;
  #started = false;
  // The hand-over between the archiver and chunks(), used from the start of chunks() on: full chunks, and
  // the one being filled.
  #alloc: (bytes: number) => Buffer = (n) => Buffer.allocUnsafe(n);
  readonly #full: Buffer[] = [];
  #filling: Buffer | undefined;
  #filled = 0;
  #finished = false;
  #stopped = false;
  #failure: unknown;
  #wakeSender: (() => void) | undefined;
  #wakeArchiver: (() => void) | undefined;

  constructor(requested: string, real: string, name: string, listing: DirectoryListing) {
    this.requested = requested;
    this.realPath = real;
    this.name = name;
    this.size = archiveBound(listing);
    this.skipped = listing.skipped;
    this.#listing = listing;
  }

  async *chunks(allocate?: (bytes: number) => Buffer): AsyncGenerator<ExportChunk, void, undefined> {
    if (this.#started) throw new Error('chunks() may run only once');
    this.#started = true;
    if (allocate !== undefined) this.#alloc = allocate;
    const hash = new TransferHash();
    const bound = this.size;
    const archiver = writeDirectoryArchive(this.#listing, (bytes) => this.#take(bytes), this.name.slice(0, -'.tar.zst'.length)).then(
      () => undefined,
      (e: unknown) => {
        this.#failure = e;
      },
    );
    void archiver.finally(() => {
      this.#finished = true;
      this.#wakeSender?.();
    });
    let offset = 0;
    try {
      for (;;) {
        if (this.#failure !== undefined) throw this.#failure;
        // Full 1 MiB chunks (the sender recycles those), then what the last one holds.
        let chunk = this.#full.shift();
        if (chunk === undefined && this.#finished && this.#filling !== undefined) {
          chunk = this.#filling.subarray(0, this.#filled);
          this.#filling = undefined;
        }
        if (chunk === undefined) {
          if (this.#finished) break;
          await new Promise<void>((resolve) => (this.#wakeSender = resolve));
          this.#wakeSender = undefined;
          continue;
        }
        this.#wakeArchiver?.();
        if (offset + chunk.byteLength > bound)
          throw new JackinError('E_EXPORT_IO', `${this.requested}: the archive passed its declared bound of ${bound} bytes`);
        yield { offset, bytes: chunk };
        offset += chunk.byteLength;
        await hash.update(chunk);
      }
      this.#digest = { bytes: offset, sha256: await hash.digest() };
    } finally {
      this.#stop();
      await archiver;
    }
  }

  digest(): ExportDigest {
    if (this.#digest === undefined) throw new Error('digest() called before chunks() completed');
    return this.#digest;
  }

  close(): Promise<void> {
    if (this.#started) this.#stop();
    return Promise.resolve();
  }

  /** The archiver's sink: copy its bytes into chunks at once (they are the compressor's, to be reused), and
   * hold the archiver while the full chunks waiting for the sender reach the queue's bound. */
  async #take(bytes: Uint8Array): Promise<void> {
    for (let from = 0; from < bytes.byteLength; ) {
      if (this.#filling === undefined) {
        this.#filling = this.#alloc(EXPORT_CHUNK_BYTES);
        this.#filled = 0;
      }
      const n = Math.min(bytes.byteLength - from, EXPORT_CHUNK_BYTES - this.#filled);
      this.#filling.set(bytes.subarray(from, from + n), this.#filled);
      this.#filled += n;
      from += n;
      if (this.#filled === EXPORT_CHUNK_BYTES) {
        this.#full.push(this.#filling);
        this.#filling = undefined;
      }
    }
    this.#wakeSender?.();
    while (this.#full.length * EXPORT_CHUNK_BYTES >= STREAMED_ARCHIVE_QUEUE_BYTES && !this.#stopped)
      await new Promise<void>((resolve) => (this.#wakeArchiver = resolve));
    if (this.#stopped) throw new JackinError('E_EXPORT_CLOSED', `export of ${this.requested} stopped`);
  }

  /** Stops the archiver: its next write fails (E_EXPORT_CLOSED). */
  #stop(): void {
    this.#stopped = true;
    this.#wakeArchiver?.();
  }
}

/** A 0600 file under `<run>/exports/` (0700), unlinked at once so no path ever outlives the export. */
async function createUnlinkedTemp(runDir: string): Promise<FileHandle> {
  const dir = posix.join(runDir, EXPORT_TEMP_DIR);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const path = posix.join(dir, `.archive-${randomBytes(8).toString('hex')}.tar.zst`);
  const flags = constants.O_RDWR | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;
  const handle = await open(path, flags, 0o600);
  await unlink(path);
  return handle;
}

/** A source read from a descriptor: a file, or a directory's archive in an unlinked temporary file. */
class DescriptorSource implements ExportSource {
  readonly kind: 'file' | 'directory';
  readonly requested: string;
  readonly realPath: string;
  readonly name: string;
  readonly size: number;
  readonly streamed = false;
  readonly skipped: readonly string[];
  readonly #reader: FdChunkReader;
  readonly #handle: FileHandle;
  #closed = false;

  constructor(
    kind: 'file' | 'directory',
    requested: string,
    realPath: string,
    name: string,
    size: number,
    reader: FdChunkReader,
    handle: FileHandle,
    skipped: readonly string[] = [],
  ) {
    this.kind = kind;
    this.requested = requested;
    this.realPath = realPath;
    this.name = name;
    this.size = size;
    this.skipped = skipped;
    this.#reader = reader;
    this.#handle = handle;
  }

  chunks(allocate?: (bytes: number) => Buffer): AsyncGenerator<ExportChunk, void, undefined> {
    return this.#reader.chunks(allocate);
  }

  digest(): ExportDigest {
    return this.#reader.digest();
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#handle.close();
  }
}
