/**
 * Where an open descriptor really is, the one question every descriptor-safe check asks. With /proc (Linux)
 * the kernel answers: readlink /proc/self/fd/N names the file the descriptor holds, whatever was renamed or
 * swapped since. Without /proc (macOS, for a local `jackin run`) the answer is the path that was checked,
 * when that path is free of symlinks now (its realpath is itself) and names the descriptor's file (same
 * dev and inode); otherwise a text that matches no root and no expected path. The fallback proves the same
 * thing for a path with no symlinks in it, but only at the moment of the check: an agent swapping a
 * directory back and forth fast enough can still win a race the /proc answer does not have.
 *
 * The probe is decided once, here, and nowhere else: tests run the no-/proc path on Linux with
 * `simulateNoProcFd` (test/import-graph.test.ts keeps every other file of src/ off /proc/self/fd).
 */
import { existsSync, lstatSync, readlinkSync, realpathSync, type BigIntStats } from 'node:fs';
import { lstat, readlink, realpath } from 'node:fs/promises';
import { errnoOf } from '../../errors.ts';

const PROC_FD = '/proc/self/fd';
let hasProcFd = existsSync(PROC_FD);

/** Whether descriptors have paths under /proc/self/fd here (false on macOS, or under simulateNoProcFd). */
export function procFdAvailable(): boolean {
  return hasProcFd;
}

/** A path that names open descriptor `fd` as long as it stays open, or null on a system without /proc. */
export function procFdPath(fd: number): string | null {
  return hasProcFd ? `${PROC_FD}/${fd}` : null;
}

/**
 * For tests: behave as a system without /proc until the returned function is called. The result is the
 * same as on macOS, where `existsSync('/proc/self/fd')` is false.
 */
export function simulateNoProcFd(): () => void {
  const was = hasProcFd;
  hasProcFd = false;
  return () => {
    hasProcFd = was;
  };
}

function fallbackAnswer(expected: string, st: BigIntStats, again: BigIntStats, real: string): string {
  if (again.dev !== st.dev || again.ino !== st.ino) return `(a different file than ${expected})`;
  if (real !== expected) return `(${expected}, reached through a symlink to ${real})`;
  return expected;
}

function goneAnswer(expected: string, e: unknown): string {
  return `(${expected} is gone: ${errnoOf(e) ?? 'error'})`;
}

/** The real location of descriptor `fd`, whose fstat is `st`; `expected` is the symlink-free path it was opened by. */
export async function descriptorLocation(fd: number, expected: string, st: BigIntStats): Promise<string> {
  const proc = procFdPath(fd);
  if (proc !== null) return readlink(proc);
  try {
    const again = await lstat(expected, { bigint: true });
    return fallbackAnswer(expected, st, again, await realpath(expected));
  } catch (e) {
    return goneAnswer(expected, e);
  }
}

/** descriptorLocation with synchronous calls. */
export function descriptorLocationSync(fd: number, expected: string, st: BigIntStats): string {
  const proc = procFdPath(fd);
  if (proc !== null) return readlinkSync(proc);
  try {
    const again = lstatSync(expected, { bigint: true });
    return fallbackAnswer(expected, st, again, realpathSync.native(expected));
  } catch (e) {
    return goneAnswer(expected, e);
  }
}
