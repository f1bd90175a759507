/**
 * Open a container path for export so that nothing outside the allowed roots is ever read, whatever the
 * agent does to the tree meanwhile. Order matters:
 *  1. realpath + policy pre-check, so a path that plainly resolves outside (`../../etc/passwd`, `/dev/zero`,
 *     a symlink to `/etc/hosts`) is refused without ever being opened (opening a device can have effects);
 *  2. open the resolved path with O_NOFOLLOW (a final component swapped to a symlink fails with ELOOP) and
 *     O_NONBLOCK (a FIFO swapped in opens at once instead of waiting for a writer);
 *  3. fstat the descriptor: only a regular file (or, when the caller wants one, a directory) goes on;
 *  4. the authoritative check: the kernel's name for the OPENED descriptor (readlink /proc/self/fd/N) must
 *     be inside a root. Steps 1-2 race with a swapped symlink or directory; step 4 does not, because the
 *     descriptor cannot change what it refers to.
 * Without /proc (macOS for a local `jackin run`), step 4 compares the descriptor's dev/inode with a fresh
 * lstat of the checked real path instead, which proves the same thing for a path with no symlinks in it
 * (descriptor-location.ts, shared with the directory walk).
 *
 * openInsideRootsSync takes the same steps with synchronous calls, for the many entries of a directory
 * export: each promise-based fs call costs about 40 us of thread-pool round trip against about 5 us
 * synchronously, which made a 1,800-file tree spend half a second just opening and checking. With /proc a
 * directory export opens its files with openEntrySync instead: from their checked directory's descriptor,
 * by name, steps 2-4 only. The steps that decide anything (precheck, kindOf, checkLocation) are shared.
 */
import { closeSync, constants, fstatSync, openSync, realpathSync } from 'node:fs';
import { open, realpath, type FileHandle } from 'node:fs/promises';
import type { BigIntStats } from 'node:fs';
import { errnoOf, JackinError } from '../../errors.ts';
import { decideLocation } from '../../policy/decide.ts';
import type { OutsideRootsMode } from '../../policy/schema.ts';
import { descriptorLocation, descriptorLocationSync, procFdPath } from './descriptor-location.ts';

type OpenedKind = 'file' | 'directory';

export interface OpenedPath {
  readonly handle: FileHandle;
  /** Real location of the opened descriptor. */
  readonly realPath: string;
  readonly kind: OpenedKind;
  readonly stat: BigIntStats;
}

export interface SafeOpenOptions {
  /** Real paths (realpath) of the allowed roots. */
  readonly realRoots: readonly string[];
  readonly outside: OutsideRootsMode;
  /** The operator confirmed this export although it leaves the roots (only with outside = 'confirm'). */
  readonly confirmedOutside: boolean;
}

const OPEN_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK | constants.O_NOCTTY;

function notFound(shown: string, e: unknown): JackinError {
  return new JackinError('E_NOT_FOUND', `${shown}: no such file or directory in the container (${errnoOf(e) ?? 'error'})`, { cause: e });
}

function fsError(shown: string, e: unknown): JackinError {
  switch (errnoOf(e)) {
    case 'ENOENT':
    case 'ENOTDIR':
      return notFound(shown, e);
    case 'ELOOP':
      return new JackinError('E_POLICY_DENIED', `${shown}: too many symbolic links, or a symlink appeared while it was checked`, { cause: e });
    case 'EACCES':
    case 'EPERM':
      return new JackinError('E_PERMISSION', `${shown}: permission denied inside the container`, { cause: e });
    default:
      return new JackinError('E_EXPORT_IO', `${shown}: ${e instanceof Error ? e.message : String(e)}`, { cause: e });
  }
}

function outsideError(shown: string, real: string, roots: readonly string[]): JackinError {
  return new JackinError(
    'E_POLICY_DENIED',
    `${shown} resolves to ${real}, outside the allowed export roots (${roots.join(', ') || 'none'}); ` +
      'copy it under the workspace or add a root to the export policy',
  );
}

/** Refuse or pass a real path per policy (the pre-check, step 1). */
function precheck(shown: string, real: string, opts: SafeOpenOptions): void {
  const d = decideLocation(real, opts.realRoots, opts.outside);
  switch (d.kind) {
    case 'allow':
      return;
    case 'deny':
      throw outsideError(shown, real, opts.realRoots);
    case 'confirm':
      if (opts.confirmedOutside) return;
      throw new JackinError('E_NEEDS_CONFIRMATION', `${shown} resolves to ${real}, outside the allowed export roots; the operator must confirm this export`);
    default: {
      const never: never = d;
      throw new TypeError(`unknown decision ${JSON.stringify(never)}`);
    }
  }
}

function kindOf(shown: string, st: BigIntStats): OpenedKind {
  if (st.isFile()) return 'file';
  if (st.isDirectory()) return 'directory';
  const what = st.isFIFO()
    ? 'a FIFO'
    : st.isCharacterDevice()
      ? 'a character device'
      : st.isBlockDevice()
        ? 'a block device'
        : st.isSocket()
          ? 'a socket'
          : 'not a regular file';
  return ((): never => {
    throw new JackinError('E_NOT_REGULAR', `${shown} is ${what}; only regular files and directories can be exported`);
  })();
}

/** A realpath that failed: refused as outside when it is, so the answer says nothing about what exists there. */
function unresolved(absPath: string, shown: string, opts: SafeOpenOptions, e: unknown): JackinError {
  if (opts.outside === 'deny' && decideLocation(absPath, opts.realRoots, 'deny').kind !== 'allow') {
    return outsideError(shown, absPath, opts.realRoots);
  }
  return fsError(shown, e);
}

/** The authoritative check (step 4) on the opened descriptor's real location. */
function checkLocation(shown: string, real: string, location: string, opts: SafeOpenOptions): void {
  // After a confirmed outside export the descriptor must still be the file that was resolved and shown.
  const d = decideLocation(location, opts.realRoots, 'deny');
  if (d.kind !== 'allow' && !(opts.confirmedOutside && opts.outside === 'confirm' && location === real)) {
    throw outsideError(shown, location, opts.realRoots);
  }
}

/**
 * Open `absPath` (already lexically absolute) for export. `shown` is the path as the requester wrote it,
 * for messages. The caller owns the returned handle.
 */
export async function openInsideRoots(absPath: string, shown: string, opts: SafeOpenOptions): Promise<OpenedPath> {
  let real: string;
  try {
    real = await realpath(absPath);
  } catch (e) {
    throw unresolved(absPath, shown, opts, e);
  }
  precheck(shown, real, opts);

  let handle: FileHandle;
  try {
    handle = await open(real, OPEN_FLAGS);
  } catch (e) {
    throw fsError(shown, e);
  }
  try {
    const st = await handle.stat({ bigint: true });
    const kind = kindOf(shown, st);
    const location = await descriptorLocation(handle.fd, real, st);
    checkLocation(shown, real, location, opts);
    return { handle, realPath: location, kind, stat: st };
  } catch (e) {
    await handle.close();
    throw e;
  }
}

export interface OpenedFd {
  /** A raw descriptor; the caller closes it (closeSync). */
  readonly fd: number;
  readonly realPath: string;
  readonly kind: OpenedKind;
  readonly stat: BigIntStats;
}

/** openInsideRoots with synchronous calls (see the header): the same steps, a raw descriptor. */
export function openInsideRootsSync(absPath: string, shown: string, opts: SafeOpenOptions): OpenedFd {
  let real: string;
  try {
    real = realpathSync.native(absPath);
  } catch (e) {
    throw unresolved(absPath, shown, opts, e);
  }
  precheck(shown, real, opts);
  return openCheckedSync(real, shown, opts);
}

/** Steps 2-4 with synchronous calls: open `path` (the last name never followed), then check the descriptor. */
function openCheckedSync(path: string, shown: string, opts: SafeOpenOptions): OpenedFd {
  let fd: number;
  try {
    fd = openSync(path, OPEN_FLAGS);
  } catch (e) {
    throw fsError(shown, e);
  }
  try {
    const st = fstatSync(fd, { bigint: true });
    const kind = kindOf(shown, st);
    const location = descriptorLocationSync(fd, path, st);
    checkLocation(shown, path, location, opts);
    return { fd, realPath: location, kind, stat: st };
  } catch (e) {
    closeSync(fd);
    throw e;
  }
}

/**
 * Opens entry `name` of directory descriptor `dirFd` (a directory already checked to be where it should be,
 * see openListedDirectory) with the same steps 2-4, through /proc/self/fd/N/name: the kernel walks from
 * the directory the descriptor holds, as openat would, so no directory on the way can be swapped for a
 * symlink, and the realpath of step 1 is not needed. Only with /proc (procFdAvailable); without it the
 * caller opens the path with openInsideRootsSync.
 */
export function openEntrySync(dirFd: number, name: string, shown: string, opts: SafeOpenOptions): OpenedFd {
  const dir = procFdPath(dirFd);
  if (dir === null) throw new Error('openEntrySync needs descriptor paths (procFdAvailable): open the path with openInsideRootsSync');
  if (name === '' || name === '.' || name === '..' || name.includes('/')) throw new TypeError(`not one name: ${JSON.stringify(name)}`);
  return openCheckedSync(`${dir}/${name}`, shown, opts);
}

/** Real paths of the roots that exist; a missing root (say, no uploads yet) simply allows nothing. */
export async function realRoots(roots: readonly string[]): Promise<string[]> {
  const out: string[] = [];
  for (const r of roots) {
    try {
      const real = await realpath(r);
      if (!out.includes(real)) out.push(real);
    } catch (e) {
      if (errnoOf(e) !== 'ENOENT' && errnoOf(e) !== 'ENOTDIR') throw e;
    }
  }
  return out;
}
