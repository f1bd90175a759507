/**
 * Lists a directory for export, before any byte is archived: every entry below the root (lstat: a symlink
 * is an entry, never followed; a FIFO, socket or device is skipped and reported), sorted per directory so
 * archives are reproducible, with the policy's caps enforced as it goes. Each directory is opened without
 * following its last name and checked to be exactly the one at that place inside the root (its descriptor's
 * real location, descriptor-location.ts), so a directory swapped for a symlink is refused, never listed
 * through the link. With /proc the names are read through /proc/self/fd/N, which stays that directory
 * whatever is renamed later; without /proc (macOS) through the checked path.
 */
import { closeSync, constants, fstatSync, lstatSync, openSync, readdirSync, readlinkSync } from 'node:fs';
import { posix } from 'node:path';
import { errnoOf, JackinError } from '../../errors.ts';
import { descriptorLocationSync, procFdPath } from './descriptor-location.ts';
import { Slicer } from './slicer.ts';

export interface DirectoryCaps {
  readonly maxEntries: number;
  readonly maxTotalBytes: number;
}

type Listed =
  | { readonly type: 'directory'; readonly rel: string; readonly mode: number; readonly mtime: Date }
  | { readonly type: 'file'; readonly rel: string; readonly mode: number; readonly mtime: Date; readonly size: number }
  | { readonly type: 'symlink'; readonly rel: string; readonly mode: number; readonly mtime: Date; readonly target: string };

/** A directory's entries, listed (caps checked) before any byte is archived. */
export interface DirectoryListing {
  readonly root: string;
  readonly shown: string;
  readonly listed: readonly Listed[];
  readonly skipped: readonly string[];
}

function capError(shown: string, what: string): JackinError {
  return new JackinError('E_DIR_CAP', `${shown}: ${what}; export a smaller directory or raise export.directories in the policy`);
}

function changedWhileListed(shown: string, rel: string, cause: unknown): JackinError {
  return new JackinError(
    'E_CHANGED_WHILE_READING',
    `${rel === '' ? shown : `${shown}/${rel}`} changed while the directory was listed; export it again once it stops changing`,
    { cause },
  );
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
 * listed. The archiver opens each directory again this way to open its files from it (tar-zstd.ts).
 */
export function openListedDirectory(root: string, shown: string, rel: string): number {
  const path = posix.join(root, rel);
  const fd = listingCall(shown, rel, () => openSync(path, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW));
  let real: string;
  try {
    real = descriptorLocationSync(fd, path, fstatSync(fd, { bigint: true }));
  } catch (e) {
    closeSync(fd);
    throw e;
  }
  if (real !== path) {
    closeSync(fd);
    throw changedWhileListed(shown, rel, new Error(`opened ${real}, not ${path}`));
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
      const here = procFdPath(dirFd) ?? posix.join(root, relDir);
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

/** Lists real directory `root`; throws E_DIR_CAP when it is over a cap. */
export async function listDirectory(root: string, shown: string, caps: DirectoryCaps): Promise<DirectoryListing> {
  const { listed, skipped } = await listTree(root, shown, caps, new Slicer());
  return { root, shown, listed, skipped };
}
