/** A system error on one of the program's own paths, as a JackinError with the path, the error and the fix. */
import { describeError, errnoOf, JackinError } from '../errors.ts';

/** What to do about a system error on a path of the program's own, by its errno; `setting` names where that path comes from. */
function pathErrorFix(errno: string, setting: string): string {
  switch (errno) {
    case 'EACCES':
    case 'EPERM':
      return `check its permissions, or set ${setting} to a directory of yours`;
    case 'ENOSPC':
    case 'EDQUOT':
      return 'free some space on that file system';
    case 'EROFS':
      return `the file system is read-only: set ${setting} to a writable directory`;
    case 'ENOTDIR':
    case 'EEXIST':
    case 'ELOOP':
      return `a part of that path is not a directory: check ${setting}`;
    default:
      return `check that path, or set ${setting} to another directory`;
  }
}

/**
 * A Node system error on a path that no command turned into a JackinError (JACKIN_HOME or the run directory
 * is a file, not writable, on a full disk): `code` with the path, the error and the fix, instead of an
 * internal error. Null for anything else.
 */
export function pathError(e: unknown, code: 'E_HOST_IO' | 'E_RUN_DIR', setting: string): JackinError | null {
  const errno = errnoOf(e);
  if (errno === undefined || !(e instanceof Error) || !('syscall' in e) || typeof e.syscall !== 'string') return null;
  if (!('path' in e) || typeof e.path !== 'string') return null;
  // Node's message is "ENOTDIR: not a directory, scandir '/x'": keep the description.
  const what = /^[A-Z]+: (.*?), \w+/u.exec(describeError(e))?.[1] ?? errno;
  return new JackinError(code, `cannot ${e.syscall} ${e.path}: ${what} (${errno}); ${pathErrorFix(errno, setting)}`, { cause: e });
}
