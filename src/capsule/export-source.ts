/**
 * The capsule's side of an export: resolve a requested container path under the policy before any byte
 * moves (safe-open.ts), then offer its bytes as chunks of at most 1 MiB with the final byte count and
 * SHA-256.
 *
 * Size is always known before the first chunk, because FileExportStart declares it: a regular file has its
 * fstat size; a directory is first archived as tar.zst into a 0600 temporary file under `<run>/exports/`,
 * which is unlinked as soon as it is created (the open descriptor keeps it alive), so nothing is left behind
 * even if the capsule is killed, and then streamed like a file. This costs disk space in the run directory
 * (bounded by the directory caps) and a delay before the first chunk, in exchange for a protocol whose
 * every transfer declares its size up front.
 */
import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { mkdir, open, unlink, type FileHandle } from 'node:fs/promises';
import { posix } from 'node:path';
import { JackinError } from '../errors.ts';
import { containerPath, decideDirectory, decideFileSize, expandRoots } from '../policy/decide.ts';
import type { Policy } from '../policy/schema.ts';
import { FdChunkReader, type ExportChunk, type ExportDigest } from './fd-chunk-reader.ts';
import { openInsideRoots, realRoots } from './safe-open.ts';
import { writeDirectoryArchive, type ArchiveSummary } from './tar-zstd.ts';

export { EXPORT_CHUNK_BYTES, type ExportChunk, type ExportDigest } from './fd-chunk-reader.ts';

export interface ExportContext {
  readonly policy: Policy;
  /** Absolute workspace directory; relative requests resolve against it and `${workspace}` expands to it. */
  readonly workspace: string;
  /** Absolute run directory: `${run}` in roots, and home of the temporary archives. */
  readonly runDir: string;
  /** The operator confirmed this export although it leaves the roots (policy outsideRoots = confirm). */
  readonly confirmedOutside?: boolean;
}

export interface ExportSource {
  readonly kind: 'file' | 'directory';
  /** The path as requested. */
  readonly requested: string;
  /** Real location of what is exported. */
  readonly realPath: string;
  /** Suggested name on the host (the host sanitises it again): the file's name, or `<dir>.tar.zst`. */
  readonly name: string;
  /** Exact number of bytes chunks() yields. */
  readonly size: number;
  /** For a directory: what the archive holds. */
  readonly archive: ArchiveSummary | undefined;
  /** One pass of chunks; throws E_CHANGED_WHILE_READING rather than completing when the file changed.
   * `allocate` supplies chunk buffers (a sender recycles them once written); default fresh buffers. */
  chunks(allocate?: (bytes: number) => Buffer): AsyncGenerator<ExportChunk, void, undefined>;
  /** Byte count and SHA-256 of everything yielded; call after chunks() completed. */
  digest(): ExportDigest;
  /** Release the descriptor (and with it a directory's temporary archive). Safe to call twice. */
  close(): Promise<void>;
}

/** Where directory archives are built inside the run directory. */
export const EXPORT_TEMP_DIR = 'exports';

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
        return sourceOf('file', requested, opened.realPath, suggestedName(abs, opened.realPath), size, undefined, reader, opened.handle);
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
    throw new JackinError('E_DIR_DISABLED', `${requested} is a directory and directory export is off (export.directories.enabled in the policy); export its files one by one`);
  }
  const tmp = await createUnlinkedTemp(ctx.runDir);
  try {
    const archive = await writeDirectoryArchive(real, requested, tmp, ctx.policy.export.directories);
    const size = Number((await tmp.stat({ bigint: true })).size);
    // Our own file, unlinked, so nobody else can change it: no mtime check.
    const reader = new FdChunkReader({ handle: tmp, size, mtimeNs: undefined, shown: requested });
    return sourceOf('directory', requested, real, `${suggestedName(abs, real)}.tar.zst`, size, archive, reader, tmp);
  } catch (e) {
    await tmp.close().catch(() => undefined);
    throw e;
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

function sourceOf(
  kind: 'file' | 'directory',
  requested: string,
  realPath: string,
  name: string,
  size: number,
  archive: ArchiveSummary | undefined,
  reader: FdChunkReader,
  handle: FileHandle,
): ExportSource {
  let closed = false;
  return {
    kind,
    requested,
    realPath,
    name,
    size,
    archive,
    chunks: (allocate) => reader.chunks(allocate),
    digest: () => reader.digest(),
    async close() {
      if (closed) return;
      closed = true;
      await handle.close();
    },
  };
}
