/**
 * Opening a host file that a paste, a drop or a copied file named. The name may point into a directory
 * the container writes (a shared workspace), so the container can have made it a symlink to any file of
 * the operator's (`shot.png` -> `~/Documents/passport.png`): the operator meant the file the name shows,
 * and the host would read and send the other one. So:
 *
 * - resolveHostPath says whether the path's symlinks lead somewhere other than the path says. A symlink in
 *   the root directory is a system alias (macOS `/var` -> `/private/var`, `/tmp`, `/etc`; `/lib` ->
 *   `usr/lib`): only root makes those, and every macOS temporary file is under one, so it does not count.
 *   Any other symlink on the way does; the caller then asks the operator, naming the real file.
 * - openExact opens the resolved path without following a symlink at its end and, where /proc shows what
 *   a descriptor is (Linux), checks that the file opened is the one resolved: a directory on the way that
 *   was swapped for a symlink between the check and the open is caught, not followed.
 */
import { constants } from 'node:fs';
import { lstat, open, readlink, realpath, stat, type FileHandle } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { JackinError } from '../../errors.ts';

export interface ResolvedHostPath {
  /** The path with every symlink resolved. */
  readonly real: string;
  /** True when a symlink other than a root-directory alias changed where the path leads. */
  readonly redirected: boolean;
}

/** Asks the operator whether to read `real`, the file that `given` leads to through a symlink. */
export type ConfirmRedirect = (given: string, real: string) => Promise<boolean>;

/** `abs` with a symlink in the root directory (its first component) resolved, the rest as written. */
async function throughRootAlias(abs: string): Promise<string> {
  const first = /^\/[^/]+/.exec(abs)?.[0];
  if (first === undefined) return abs;
  try {
    if (!(await lstat(first)).isSymbolicLink()) return abs;
    return (await realpath(first)) + abs.slice(first.length);
  } catch {
    return abs;
  }
}

/**
 * Resolves `given` (relative to the working directory; `.` and `..` read as text first, as Node's
 * realpath does); throws E_PATH_NOT_FOUND or E_PATH_UNREADABLE.
 */
export async function resolveHostPath(given: string): Promise<ResolvedHostPath> {
  const abs = resolve(given);
  let real: string;
  try {
    real = await realpath(abs);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') throw new JackinError('E_PATH_NOT_FOUND', `no file at ${given}`, { cause: e });
    throw new JackinError('E_PATH_UNREADABLE', `cannot resolve ${given}: ${(e as Error).message}`, { cause: e });
  }
  const expected = await throughRootAlias(abs);
  return { real, redirected: real !== expected && !(await sameFileSpelledOtherwise(expected, real)) };
}

/**
 * Whether `expected` (the path as given, root alias resolved) and `real` differ only in letter case and
 * name the same file with no symlink on the way. On a case-insensitive file system (macOS and Windows by
 * default) realpath spells each name as stored, so `Shot.PNG` comes back as `shot.png`: the same file, not a
 * redirect. A symlink to a name that differs only in case still is one: a case-sensitive volume (APFS can
 * be one) holds both names as two files.
 */
export async function sameFileSpelledOtherwise(expected: string, real: string): Promise<boolean> {
  if (expected.toLowerCase() !== real.toLowerCase()) return false;
  try {
    for (let p = expected; dirname(p) !== p; p = dirname(p)) {
      if ((await lstat(p)).isSymbolicLink()) return false;
    }
    const [named, opened] = await Promise.all([lstat(expected), stat(real)]);
    return named.dev === opened.dev && named.ino === opened.ino;
  } catch {
    return false;
  }
}

/** The refusal when the operator did not confirm where `given` leads. */
export function symlinkDeclined(given: string, real: string): JackinError {
  return new JackinError('E_SYMLINK_DECLINED', `${given} leads to ${real} through a symlink, and that was not confirmed; nothing was read`);
}

/**
 * Resolves `given` and, when its symlinks lead elsewhere, asks `confirm`; returns the real path to open.
 * Throws E_SYMLINK_DECLINED when the operator said no (nothing was read), or what resolveHostPath throws.
 */
export async function confirmedRealPath(given: string, confirm: ConfirmRedirect | undefined): Promise<string> {
  const { real, redirected } = await resolveHostPath(given);
  if (redirected && confirm !== undefined && !(await confirm(given, real))) throw symlinkDeclined(given, real);
  return real;
}

/**
 * Opens `real` (a resolved path) for reading: no symlink followed at its end, non-blocking (a FIFO cannot
 * hang the host), and on Linux the descriptor checked to be `real` itself. `shown` names it in errors.
 * Throws E_PATH_NOT_FOUND, E_PATH_UNREADABLE or E_CHANGED_WHILE_READING.
 */
export async function openExact(real: string, shown: string): Promise<FileHandle> {
  let handle: FileHandle;
  try {
    handle = await open(real, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') throw new JackinError('E_PATH_NOT_FOUND', `no file at ${shown}`, { cause: e });
    if (code === 'ELOOP')
      throw new JackinError('E_CHANGED_WHILE_READING', `${shown} changed while it was opened (it became a symlink); try again once nothing moves it`, {
        cause: e,
      });
    throw new JackinError('E_PATH_UNREADABLE', `cannot open ${shown}: ${(e as Error).message}`, { cause: e });
  }
  if (process.platform === 'linux') {
    let opened: string | null = null;
    try {
      opened = await readlink(`/proc/self/fd/${handle.fd}`);
    } catch {
      // No /proc (a restricted mount): the O_NOFOLLOW open is what we have.
    }
    if (opened !== null && opened !== real) {
      await handle.close();
      throw new JackinError('E_CHANGED_WHILE_READING', `${shown} changed while it was opened (it now leads to ${opened}); try again once nothing moves it`);
    }
  }
  return handle;
}
