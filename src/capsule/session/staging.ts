/**
 * Stages validated images into `<run>/clipboard/` for the program: directory 0700, files 0600 created
 * exclusively (`wx`) under random names that carry no host path and no clipboard text, extension from
 * the format found in the bytes. The bytes are validated again here, whatever the host said: the capsule
 * never trusts the host's format byte. Staged files live as long as the capsule (an agent may read one
 * after the prompt was submitted); `cleanup()` removes the directory when the capsule exits.
 */
import { randomBytes } from '../../lazy-builtins.ts';
import { lstat, chmod, mkdir, open, rm, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { JackinError } from '../../errors.ts';
import { IMAGE_EXTENSIONS, type ImageFormat } from '../../protocol/frames.ts';
import { DEFAULT_MAX_IMAGE_BYTES, validateImage } from '../../policy/image-signature.ts';
import { writeAllAt } from '../../write-at.ts';

/** A path inside the capsule's staging directory; never a host path (the brand keeps them apart). */
export type StagedPath = string & { readonly __brand: 'StagedPath' };

export interface StagedImage {
  path: StagedPath;
  /** The file name alone, e.g. `clip-20260130-101502-3f9a0c1d2e4b5a69.png`. */
  name: string;
  format: ImageFormat;
  bytes: number;
  /** The format the sender declared, when it differs from the bytes (for the notice). */
  declaredFormat?: ImageFormat;
}

export const STAGING_DIR_NAME = 'clipboard';
/** Name attempts before giving up; 64 random bits make even one collision practically impossible. */
const NAME_ATTEMPTS = 8;

export interface StagingOptions {
  maxBytes?: number;
  /** Random bytes source, injectable for the collision test. */
  random?: (n: number) => Buffer;
  /** Clock for the name's timestamp, injectable for tests. */
  now?: () => Date;
}

/** `clip-YYYYMMDD-HHMMSS-<16 hex>.<ext>`: sortable by time, unguessable, free of any caller text. */
export function stagedName(format: ImageFormat, when: Date, random: Buffer): string {
  const p = (n: number): string => String(n).padStart(2, '0');
  const stamp = `${when.getUTCFullYear()}${p(when.getUTCMonth() + 1)}${p(when.getUTCDate())}-${p(when.getUTCHours())}${p(when.getUTCMinutes())}${p(when.getUTCSeconds())}`;
  return `clip-${stamp}-${random.toString('hex')}.${IMAGE_EXTENSIONS[format]}`;
}

/**
 * Creates `dir` 0700 if missing; refuses (E_STAGING_UNSAFE) a symlink or non-directory in its place or one
 * owned by someone else, and tightens a wider mode left by someone else. Shared by every staging area.
 */
export async function ensurePrivateDir(dir: string): Promise<void> {
  await mkdir(dir, { mode: 0o700 }).catch((e: NodeJS.ErrnoException) => {
    if (e.code !== 'EEXIST') throw new JackinError('E_STAGING_FAILED', `cannot create ${dir}: ${e.message}`, { cause: e });
  });
  const st = await lstat(dir);
  if (!st.isDirectory()) {
    throw new JackinError('E_STAGING_UNSAFE', `${dir} exists but is not a directory (a symlink?); remove it and retry`);
  }
  if (typeof process.getuid === 'function' && st.uid !== process.getuid()) {
    throw new JackinError('E_STAGING_UNSAFE', `${dir} is owned by uid ${st.uid}, not by this capsule (uid ${process.getuid()})`);
  }
  if ((st.mode & 0o777) !== 0o700) await chmod(dir, 0o700);
}

export class ImageStaging {
  readonly dir: string;
  readonly maxBytes: number;
  readonly #random: (n: number) => Buffer;
  readonly #now: () => Date;

  constructor(runDir: string, opts: StagingOptions = {}) {
    this.dir = join(runDir, STAGING_DIR_NAME);
    this.maxBytes = opts.maxBytes ?? DEFAULT_MAX_IMAGE_BYTES;
    this.#random = opts.random ?? randomBytes;
    this.#now = opts.now ?? (() => new Date());
  }

  /**
   * Creates the directory 0700 if missing; refuses (E_STAGING_UNSAFE) a symlink or non-directory in its
   * place, and tightens a wider mode left by someone else.
   */
  async ensureDir(): Promise<void> {
    await ensurePrivateDir(this.dir);
  }

  /**
   * Validates `bytes` (size cap and structure; E_IMAGE_TOO_LARGE / E_UNSUPPORTED_IMAGE) and writes them
   * to a new 0600 file. Nothing is left behind on failure.
   */
  async stage(bytes: Buffer, declaredFormat?: ImageFormat): Promise<StagedImage> {
    const format = validateImage(bytes, { maxBytes: this.maxBytes });
    await this.ensureDir();
    for (let attempt = 0; attempt < NAME_ATTEMPTS; attempt++) {
      const name = stagedName(format, this.#now(), this.#random(8));
      const path = join(this.dir, name);
      let fh;
      try {
        fh = await open(path, 'wx', 0o600);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === 'EEXIST') continue;
        throw new JackinError('E_STAGING_FAILED', `cannot create ${path}: ${(e as Error).message}`, { cause: e });
      }
      try {
        await writeAllAt(fh, bytes, 0);
        await fh.close();
      } catch (e) {
        await fh.close().catch(() => undefined);
        await unlink(path).catch(() => undefined);
        throw new JackinError('E_STAGING_FAILED', `cannot write ${path}: ${(e as Error).message}`, { cause: e });
      }
      const staged: StagedImage = { path: path as StagedPath, name, format, bytes: bytes.length };
      if (declaredFormat !== undefined && declaredFormat !== format) staged.declaredFormat = declaredFormat;
      return staged;
    }
    throw new JackinError('E_STAGING_FAILED', `no free name in ${this.dir} after ${NAME_ATTEMPTS} attempts`);
  }

  /** Removes the staging directory and everything in it (capsule exit). */
  async cleanup(): Promise<void> {
    await rm(this.dir, { recursive: true, force: true });
  }
}
