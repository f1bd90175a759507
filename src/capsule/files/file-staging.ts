/**
 * Host files staged for the program under `<run>/files/<random>/<original name>`: the files directory and
 * each random directory 0700, the file 0600, the original base name kept (the agent sees `report.pdf`).
 *
 * The capsule trusts nothing the host said: the name is checked again (one path component, no control
 * characters, not `.`/`..`), the size against this capsule's own cap and the free space, every chunk's
 * offset and length against the declared size, and at the end the byte count and SHA-256. The bytes go to
 * `<run>/files/.partial-<random>` (created exclusively, 0600) while they arrive; only after every check
 * passed is the random directory made and the file linked under its final name (link fails rather than
 * replace) and the partial name removed. An interrupted transfer therefore never leaves anything under a
 * final name, and its partial file is removed when the connection closes. `cleanup()` removes the whole
 * files directory when the capsule exits.
 */
import { randomBytes } from '../../lazy-builtins.ts';
import { link, mkdir, open, rm, rmdir, statfs, unlink, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { JackinError } from '../../errors.ts';
import { MAX_STAGED_PATH_BYTES } from '../../protocol/limits.ts';
import { VerifiedTransfer } from '../../protocol/verified-transfer.ts';
import { ensurePrivateDir, type StagedPath } from '../session/staging.ts';
import { writeAllAt } from '../../write-at.ts';

export const FILES_DIR_NAME = 'files';
/** Longest file name most file systems take. */
const MAX_STAGED_NAME_BYTES = 255;
/** Free space left after a staged file, so staging never fills the disk the program writes to. */
const STAGE_FREE_SPACE_MARGIN = 64 * 1024 * 1024;
const PARTIAL_PREFIX = '.partial-';

export interface StagedFile {
  readonly path: StagedPath;
  readonly name: string;
  readonly bytes: number;
  /** Lower-case hex. */
  readonly sha256: string;
}

export interface FileStagingOptions {
  /** This capsule's cap on one file (JACKIN_STAGE_MAX_BYTES in its environment). */
  readonly maxBytes: number;
  readonly random?: (n: number) => Buffer;
  /** Free bytes left after a file; default STAGE_FREE_SPACE_MARGIN. */
  readonly freeSpaceMargin?: number;
}

/** Checks a name the host sent: one path component the program can open as it is. E_BAD_STAGE_NAME. */
export function checkStagedName(name: unknown): string {
  const bad = (why: string): never => {
    throw new JackinError('E_BAD_STAGE_NAME', `file name ${JSON.stringify(name)?.slice(0, 300)} ${why}`);
  };
  if (typeof name !== 'string' || name === '') return bad('is empty or not a string');
  const bytes = Buffer.byteLength(name, 'utf8');
  if (bytes > MAX_STAGED_NAME_BYTES) bad(`is ${bytes} bytes, over ${MAX_STAGED_NAME_BYTES}`);
  if (name.includes('/')) bad('contains "/"');
  if (name === '.' || name === '..') bad('is a directory reference');
  if (/[\x00-\x1f\x7f]/.test(name)) bad('contains a control character');
  if (name.startsWith(PARTIAL_PREFIX)) bad(`starts with ${PARTIAL_PREFIX}, which staging keeps for itself`);
  if (Buffer.from(name, 'utf8').toString('utf8') !== name) bad('is not valid Unicode');
  return name;
}

/** One file arriving: sequential chunks into the partial file, then finish() or abort(). */
export class FileStageTransfer {
  readonly #transfer: VerifiedTransfer;
  #done = false;

  readonly #staging: FileStaging;
  readonly #fh: FileHandle;
  readonly #partial: string;
  constructor(
    staging: FileStaging,
    fh: FileHandle,
    partial: string,
    readonly name: string,
    readonly size: number,
  ) {
    this.#staging = staging;
    this.#fh = fh;
    this.#partial = partial;
    this.#transfer = new VerifiedTransfer({ size, label: name });
  }

  get received(): number {
    return this.#transfer.received;
  }

  /** Checks the chunk (rejecting before any await), then writes and hashes it; resolves when both are done. */
  async write(offset: number, bytes: Buffer): Promise<void> {
    if (this.#done) throw new JackinError('E_TRANSFER_UNKNOWN', `the transfer of ${this.name} is over`);
    const hashed = this.#transfer.accept(offset, bytes);
    await writeAllAt(this.#fh, bytes, offset);
    await hashed;
  }

  /** Verifies size and digest, then publishes under `<run>/files/<random>/<name>`. */
  async finish(sha256: Buffer): Promise<StagedFile> {
    if (this.#done) throw new JackinError('E_TRANSFER_UNKNOWN', `the transfer of ${this.name} is over`);
    this.#done = true;
    try {
      const digest = await this.#transfer.verify(sha256);
      await this.#fh.close();
      const path = await this.#staging.publish(this.#partial, this.name);
      return { path, name: this.name, bytes: this.size, sha256: digest.toString('hex') };
    } finally {
      await this.#fh.close().catch(() => undefined);
      await unlink(this.#partial).catch(() => undefined);
    }
  }

  /** Drops the transfer: the partial file goes, nothing was published. Idempotent. */
  async abort(): Promise<void> {
    if (this.#done) return;
    this.#done = true;
    await this.#fh.close().catch(() => undefined);
    await unlink(this.#partial).catch(() => undefined);
  }
}

export class FileStaging {
  readonly dir: string;
  readonly maxBytes: number;
  readonly #random: (n: number) => Buffer;
  readonly #margin: number;

  constructor(runDir: string, opts: FileStagingOptions) {
    this.dir = join(runDir, FILES_DIR_NAME);
    this.maxBytes = opts.maxBytes;
    this.#random = opts.random ?? randomBytes;
    this.#margin = opts.freeSpaceMargin ?? STAGE_FREE_SPACE_MARGIN;
  }

  /** Checks name, size and space, and opens the partial file. Throws a JackinError; leaves nothing then. */
  async begin(name: unknown, size: unknown): Promise<FileStageTransfer> {
    const checked = checkStagedName(name);
    if (typeof size !== 'number' || !Number.isSafeInteger(size) || size < 0) {
      throw new JackinError('E_BAD_REQUEST', `stage size ${JSON.stringify(size)} is not a byte count`);
    }
    if (size > this.maxBytes) {
      throw new JackinError('E_STAGE_TOO_LARGE', `${checked} is ${size} bytes, over this capsule's cap of ${this.maxBytes} (JACKIN_STAGE_MAX_BYTES)`);
    }
    // The final path must fit the FileStaged frame: dir + "/" + 16 hex + "/" + name.
    if (Buffer.byteLength(join(this.dir, 'x'.repeat(16), checked)) > MAX_STAGED_PATH_BYTES) {
      throw new JackinError('E_BAD_STAGE_NAME', `the staged path of ${checked} would be longer than ${MAX_STAGED_PATH_BYTES} bytes`);
    }
    await ensurePrivateDir(this.dir);
    const fs = await statfs(this.dir);
    const free = fs.bavail * fs.bsize;
    if (size + this.#margin > free) {
      throw new JackinError('E_NO_SPACE', `${checked} needs ${size} bytes; ${free} are free in ${this.dir} (keeping ${this.#margin} spare)`);
    }
    const partial = join(this.dir, `${PARTIAL_PREFIX}${this.#random(8).toString('hex')}`);
    let fh: FileHandle;
    try {
      fh = await open(partial, 'wx', 0o600);
    } catch (e) {
      throw new JackinError('E_STAGING_FAILED', `cannot create ${partial}: ${(e as Error).message}`, { cause: e });
    }
    return new FileStageTransfer(this, fh, partial, checked, size);
  }

  /** Links a verified partial file under a new random directory; never replaces anything. */
  async publish(partial: string, name: string): Promise<StagedPath> {
    await ensurePrivateDir(this.dir);
    for (let attempt = 0; attempt < 8; attempt++) {
      const sub = join(this.dir, this.#random(8).toString('hex'));
      try {
        await mkdir(sub, { mode: 0o700 });
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === 'EEXIST') continue;
        throw new JackinError('E_STAGING_FAILED', `cannot create ${sub}: ${(e as Error).message}`, { cause: e });
      }
      const path = join(sub, name);
      try {
        await link(partial, path);
      } catch (e) {
        await rmdir(sub).catch(() => undefined);
        throw new JackinError('E_STAGING_FAILED', `cannot publish ${path}: ${(e as Error).message}`, { cause: e });
      }
      return path as StagedPath;
    }
    throw new JackinError('E_STAGING_FAILED', `no free directory name in ${this.dir}`);
  }

  /** Removes every staged file (capsule exit). */
  async cleanup(): Promise<void> {
    await rm(this.dir, { recursive: true, force: true });
  }
}
