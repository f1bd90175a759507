/**
 * The host's writer for one export. Bytes go to a 0600 temporary file in the destination directory, named
 * `.<name>.jackin-partial-<pid>-<random>` so a leftover is obviously partial (the next export into the
 * directory removes leftovers whose writer is gone: removeStalePartials); finish() checks byte count and
 * SHA-256, fsyncs, and publishes with fs.link (which fails with EEXIST instead of replacing, unlike rename),
 * moving on to `name-1.ext`, `name-2.ext`... until a name is free, then unlinks the temporary name. On any
 * failure, or abort(), the temporary file is removed, so nothing ever appears under a final name unless it
 * is complete and verified. The host-side size cap and free-space check apply whatever the capsule claims.
 */
import { randomBytes } from '../../lazy-builtins.ts';
import { constants } from 'node:fs';
import { link, lstat, mkdir, open, readdir, statfs, unlink, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { errnoOf, JackinError } from '../../errors.ts';
import { parseSize } from '../../policy/size.ts';
import { VerifiedTransfer } from '../../protocol/verified-transfer.ts';
import { truncateUtf8 } from '../../protocol/text.ts';
import { fitName, sanitizeExportName, splitExtension } from '../platform/sanitize-name.ts';
import { writeAllAt, writeAllAtSync } from '../../write-at.ts';

/**
 * Host-side cap on one export unless JACKIN_EXPORT_MAX_BYTES or the caller sets another: 4 GiB, beyond
 * any report, screenshot or build output an agent hands over, and small enough that a capsule cannot fill
 * a disk with one request. Checked against the declared size before any byte is written.
 */
export const DEFAULT_HOST_EXPORT_CAP = 4 * 1024 ** 3;
/** A partial file whose writer is gone, or untouched for this long, is a leftover (a live export writes far more often). */
export const STALE_PARTIAL_AGE_MS = 10 * 60_000;
/** Temporary names: `.<name>.jackin-partial-<pid>-<8 hex>` (older versions wrote no pid). */
const PARTIAL_NAME = /^\..*\.jackin-partial-(?:(\d{1,10})-)?[0-9a-f]{8}$/su;

/**
 * The host cap from JACKIN_EXPORT_MAX_BYTES (bytes, or `512 MiB`, `8 GiB`, `8g`...), else DEFAULT_HOST_EXPORT_CAP.
 * Throws E_EXPORT_CONFIG for a value that is not a size.
 */
export function hostExportCap(env: Readonly<Record<string, string | undefined>> = process.env): number {
  const raw = env['JACKIN_EXPORT_MAX_BYTES'];
  if (raw === undefined || raw.trim() === '') return DEFAULT_HOST_EXPORT_CAP;
  const n = parseSize(/^\s*\d+\s*$/u.test(raw) ? Number(raw) : raw);
  if (n === undefined) {
    throw new JackinError('E_EXPORT_CONFIG', `JACKIN_EXPORT_MAX_BYTES=${JSON.stringify(raw.slice(0, 40))} is not a size; write bytes or e.g. "8 GiB" or 8g`);
  }
  return n;
}

function processGone(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return false;
  } catch (e) {
    return errnoOf(e) === 'ESRCH';
  }
}

/**
 * Removes the partial files earlier interrupted exports (a killed jackin, a crash) left in `dir`: only
 * regular files named like ours, owned by this user, whose writing process is gone or which nobody has
 * written for STALE_PARTIAL_AGE_MS. Returns how many were removed; never throws.
 */
export async function removeStalePartials(dir: string, now: number = Date.now()): Promise<number> {
  const uid = process.getuid?.();
  if (uid === undefined) return 0;
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return 0;
  }
  let removed = 0;
  for (const name of names) {
    const m = PARTIAL_NAME.exec(name);
    if (m === null) continue;
    const pid = m[1] === undefined ? undefined : Number(m[1]);
    if (pid === process.pid) continue;
    const path = join(dir, name);
    try {
      const st = await lstat(path);
      if (!st.isFile() || st.uid !== uid) continue;
      const idle = now - st.mtimeMs > STALE_PARTIAL_AGE_MS;
      if (!idle && (pid === undefined || !processGone(pid))) continue;
      await unlink(path);
      removed++;
    } catch {
      // Gone already, or not ours to remove.
    }
  }
  return removed;
}
/** Space left free on the destination filesystem beyond the file itself. */
const FREE_SPACE_MARGIN = 16 * 1024 * 1024;
/** Bytes written between two background writebacks (fdatasync) while a transfer runs. */
const EARLY_WRITEBACK_BYTES = 64 * 1024 * 1024;
/** How many `name-N.ext` candidates to try before giving up. */
const MAX_NAME_ATTEMPTS = 10_000;

export interface ExportSinkOptions {
  /** Destination directory; created 0700 (with parents) when missing. */
  readonly directory: string;
  /** Largest export accepted; default hostExportCap() (JACKIN_EXPORT_MAX_BYTES, else DEFAULT_HOST_EXPORT_CAP). */
  readonly maxBytes?: number;
  /** Bytes to leave free beyond the export; default FREE_SPACE_MARGIN. */
  readonly freeSpaceMargin?: number;
  /** Write on the event loop's thread (writeAllAtSync) instead of libuv's pool: only for a process that
   * serves nothing else meanwhile (`jackin export`). An attached session keeps the pool, so a slow disk
   * never holds its keystrokes. Default false. */
  readonly inlineWrites?: boolean;
}

interface ExportResult {
  readonly destination: string;
  readonly bytes: number;
  readonly sha256hex: string;
}

type State =
  | { readonly kind: 'idle' }
  | { readonly kind: 'open'; readonly handle: FileHandle; readonly temp: string; readonly name: string; readonly transfer: VerifiedTransfer }
  | { readonly kind: 'done' };

function ioError(what: string, e: unknown): JackinError {
  if (e instanceof JackinError) return e;
  if (errnoOf(e) === 'ENOSPC' || errnoOf(e) === 'EDQUOT') {
    return new JackinError('E_NO_SPACE', `${what}: no space left on the destination; free some space or export with --to another disk`, { cause: e });
  }
  return new JackinError('E_EXPORT_WRITE', `${what}: ${e instanceof Error ? e.message : String(e)}`, { cause: e });
}

/** Said after a digest mismatch of an export. */
const NOTHING_SAVED = 'nothing was saved, export it again';

/**
 * One export's writer: begin(), write() chunk after chunk, then finish() or abort(). The transfer's checks
 * (offsets, sizes, SHA-256) are VerifiedTransfer's; this class owns the temporary file and the publish.
 */
export class ExportSink {
  readonly #directory: string;
  readonly #cap: number | undefined;
  readonly #margin: number;
  readonly #inlineWrites: boolean;
  #state: State = { kind: 'idle' };
  #written = 0;
  #lastWrite: Promise<void> = Promise.resolve();
  // Hashing is queued as chunks arrive (in order: write() checks offsets), while the writes run in libuv's
  // pool, one at a time but overlapping the hash and the socket. A failure poisons
  // every later write; finish() and abort() wait for all of them.
  readonly #pending = new Set<Promise<void>>();
  #failure: JackinError | undefined;
  // Start writing back to the disk every EARLY_WRITEBACK_BYTES, in the background, so the final fsync has
  // little left to do instead of the whole file (that fsync is still what makes the file durable).
  #unsynced = 0;
  #writeback: Promise<void> | undefined;
  // Every caller waits for the same removal: a failed write starts it, and abort() (which the client calls
  // right after) must not resolve while the temporary file still exists.
  #cleaning: Promise<void> | undefined;

  constructor(options: ExportSinkOptions) {
    this.#directory = options.directory;
    this.#cap = options.maxBytes;
    this.#margin = options.freeSpaceMargin ?? FREE_SPACE_MARGIN;
    this.#inlineWrites = options.inlineWrites === true;
  }

  /** Check size, cap and free space, then create the temporary file. Returns the sanitised name.
   * `declaredSize` is exact, or an upper bound when settleSize() will give the exact size. */
  async begin(rawName: string, declaredSize: number): Promise<string> {
    if (this.#state.kind !== 'idle') throw new JackinError('E_EXPORT_STATE', 'export sink: begin() called twice');
    const name = sanitizeExportName(rawName);
    const transfer = new VerifiedTransfer({ size: declaredSize, label: name, hint: NOTHING_SAVED });
    let cap: number;
    try {
      cap = this.#cap ?? hostExportCap();
    } catch (e) {
      this.#state = { kind: 'done' };
      throw e;
    }
    if (declaredSize > cap) {
      this.#state = { kind: 'done' };
      throw new JackinError(
        'E_TOO_LARGE',
        `${JSON.stringify(rawName)} is ${declaredSize} bytes, over the host cap of ${cap} bytes (JACKIN_EXPORT_MAX_BYTES raises it)`,
      );
    }
    const dir = this.#directory;
    try {
      await mkdir(dir, { recursive: true, mode: 0o700 });
      await removeStalePartials(dir);
      const fs = await statfs(dir);
      const free = fs.bavail * fs.bsize;
      if (declaredSize + this.#margin > free) {
        throw new JackinError('E_NO_SPACE', `${name} needs ${declaredSize} bytes but ${dir} has ${free} bytes free; free some space or use --to`);
      }
      // The temporary name keeps the final name readable but must itself fit in 255 bytes.
      // The pid tells a later export whether the writer is still alive (removeStalePartials).
      const temp = join(dir, `.${truncateUtf8(name, 200, '')}.jackin-partial-${process.pid}-${randomBytes(4).toString('hex')}`);
      const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;
      const handle = await open(temp, flags, 0o600);
      this.#state = { kind: 'open', handle, temp, name, transfer };
      // umask can only remove bits, but make the mode exact anyway.
      await handle.chmod(0o600);
    } catch (e) {
      return this.#fail(e, `writing ${name}`);
    }
    return name;
  }

  /** Append `bytes` at `offset` (must equal the end of the previous chunk). Resolves when written: await it
   * for backpressure. Several writes may be in flight; `bytes` must not change until this resolves. */
  write(offset: number, bytes: Uint8Array): Promise<void> {
    if (this.#failure !== undefined) return Promise.reject(this.#failure);
    const s = this.#state;
    if (s.kind !== 'open') return Promise.reject(new JackinError('E_EXPORT_STATE', 'export sink: write() before begin() or after finish()'));
    let hashed: Promise<void>;
    try {
      // Hashing is queued in arrival order and runs in slices between socket reads (transfer-hash.ts).
      hashed = s.transfer.accept(offset, bytes);
    } catch (e) {
      return this.#fail(e, s.name);
    }
    hashed.catch(() => undefined);
    // Writes run one after another: ext4 (and most filesystems) serialise buffered writes to one file on
    // its inode lock, so concurrent pwrites from libuv's pool only spun on that lock (measured: a sixth of
    // the host's CPU during a 1 GiB export went to rwsem spinning).
    const previous = this.#lastWrite;
    const w = (async () => {
      try {
        await previous;
        const stopIfFailed = (): void => {
          if (this.#failure !== undefined) throw this.#failure;
        };
        if (this.#inlineWrites) writeAllAtSync(s.handle.fd, bytes, offset, stopIfFailed);
        else await writeAllAt(s.handle, bytes, offset, stopIfFailed);
        this.#written += bytes.byteLength;
        this.#unsynced += bytes.byteLength;
        this.#kickWriteback(s);
        await hashed;
      } catch (e) {
        await this.#fail(e, `writing ${s.name}`);
      }
    })();
    this.#lastWrite = w.catch(() => undefined);
    this.#pending.add(w);
    void w.then(
      () => this.#pending.delete(w),
      () => this.#pending.delete(w),
    );
    return w;
  }

  /** For an export whose declared size was an upper bound: its exact size, sent after the last chunk (the
   * bytes written so far, within the bound). E_TRANSFER_SIZE_MISMATCH otherwise. */
  settleSize(exactSize: number): void {
    if (this.#failure !== undefined) throw this.#failure;
    const s = this.#state;
    if (s.kind !== 'open') throw new JackinError('E_EXPORT_STATE', 'export sink: settleSize() before begin() or after it ended');
    s.transfer.settleSize(exactSize);
  }

  /** Verify, fsync and publish under a name that did not exist. The declared size (or the settled one)
   * must have arrived, and its SHA-256 be `sha256` (32 bytes or hex). */
  async finish(sha256: Uint8Array | string): Promise<ExportResult> {
    await this.#settled();
    if (this.#failure !== undefined) throw this.#failure;
    const s = this.#state;
    if (s.kind !== 'open') throw new JackinError('E_EXPORT_STATE', 'export sink: finish() before begin() or after it ended');
    try {
      const actual = (await s.transfer.verify(sha256)).toString('hex');
      await s.handle.sync();
      await s.handle.close();
      const destination = await publish(s.temp, this.#directory, s.name);
      await unlink(s.temp);
      await syncDir(this.#directory);
      this.#state = { kind: 'done' };
      return { destination, bytes: this.#written, sha256hex: actual };
    } catch (e) {
      return this.#fail(e, `writing ${s.name}`);
    }
  }

  /** Drop the transfer and remove the temporary file. Safe to call at any time, more than once. */
  async abort(reason?: string): Promise<void> {
    this.#failure ??= new JackinError('E_EXPORT_ABORTED', `aborted${reason === undefined ? '' : `: ${reason}`}`);
    await this.#settled();
    await this.#cleanup();
  }

  async #settled(): Promise<void> {
    while (this.#pending.size > 0) await Promise.allSettled([...this.#pending]);
  }

  #kickWriteback(s: Extract<State, { kind: 'open' }>): void {
    if (this.#unsynced < EARLY_WRITEBACK_BYTES || this.#writeback !== undefined) return;
    this.#unsynced = 0;
    const w = s.handle.datasync().then(
      () => {
        this.#writeback = undefined;
      },
      async (e: unknown) => {
        this.#writeback = undefined;
        await this.#fail(e, `writing ${s.name}`).catch(() => undefined);
      },
    );
    this.#writeback = w;
    this.#pending.add(w);
    void w.then(() => this.#pending.delete(w));
  }

  #cleanup(): Promise<void> {
    if (this.#cleaning !== undefined) return this.#cleaning;
    const s = this.#state;
    this.#state = { kind: 'done' };
    this.#cleaning = (async () => {
      if (s.kind !== 'open') return;
      await s.handle.close().catch(() => undefined);
      await unlink(s.temp).catch(() => undefined);
    })();
    return this.#cleaning;
  }

  async #fail(e: unknown, what: string): Promise<never> {
    const err = ioError(what, e);
    this.#failure ??= err;
    await this.#cleanup();
    throw err;
  }
}

/** Hard-link `temp` under the first free name; never replaces an existing file. */
async function publish(temp: string, dir: string, name: string): Promise<string> {
  const { stem, ext } = splitExtension(name);
  for (let n = 0; n < MAX_NAME_ATTEMPTS; n++) {
    const candidate = join(dir, n === 0 ? name : fitName(stem, `-${n}`, ext));
    try {
      await link(temp, candidate);
      return candidate;
    } catch (e) {
      if (errnoOf(e) !== 'EEXIST') throw e;
    }
  }
  throw new JackinError('E_EXPORT_WRITE', `no free name for ${name} in ${dir} after ${MAX_NAME_ATTEMPTS} tries; clean up the directory`);
}

/** Persist the directory entry too, so a crash after finish() cannot lose the published name. */
async function syncDir(dir: string): Promise<void> {
  const h = await open(dir, constants.O_RDONLY | constants.O_DIRECTORY);
  try {
    await h.sync();
  } finally {
    await h.close();
  }
}
