/**
 * The C library the host's Node brings with it into a container (`--capsule host`): glibc's loader and
 * every shared library `ldd` names for the host's Node and for the PTY package's binary, each file mounted
 * read-only under /opt/jackin/lib (the loader as `ld.so`, each library by the name the binaries ask for).
 * The capsule starts as `/opt/jackin/lib/ld.so --library-path /opt/jackin/lib /opt/jackin/node ...`, so it
 * needs nothing of the image: Alpine (musl), distroless and busybox-only images run it as Debian ones do.
 * The program the capsule starts is the image's own and runs on the image's own libraries (the loader's
 * path applies to the capsule's process only, never to what it executes). Only those files are lent, not
 * their directory, and nothing is copied or written: `--dry-run` prints the same mounts.
 */
import { execFile } from 'node:child_process';
import { realpath } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';

const execFileP = promisify(execFile);
/** The name the loader gets in the library directory (its own name differs by architecture). */
export const LOADER_NAME = 'ld.so';
const LDD_TIMEOUT_MS = 10_000;

/** What one binary needs: each library by the name it asks for, and the loader. */
interface Needs {
  readonly libraries: Map<string, string>;
  readonly loader: string | null;
  /** A library ldd could not find: the binary would not start from the copy either. */
  readonly missing: string[];
}

/**
 * Reads `ldd` output: `libc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x...)` for a library, `/lib64/ld-linux-x86-64.so.2 (0x...)`
 * for the loader, `libfoo.so.1 => not found` for a library it cannot find; the vDSO has no file and is skipped.
 */
export function parseLdd(out: string): Needs {
  const libraries = new Map<string, string>();
  const missing: string[] = [];
  let loader: string | null = null;
  for (const line of out.split('\n')) {
    const lib = /^\s*(\S+)\s+=>\s+(\/\S+)\s+\(0x[0-9a-f]+\)\s*$/i.exec(line);
    if (lib !== null) {
      libraries.set(lib[1]!, lib[2]!);
      continue;
    }
    const notFound = /^\s*(\S+)\s+=>\s+not found\s*$/.exec(line);
    if (notFound !== null) {
      missing.push(notFound[1]!);
      continue;
    }
    const ld = /^\s*(\/\S+)\s+\(0x[0-9a-f]+\)\s*$/i.exec(line);
    if (ld !== null) loader = ld[1]!;
  }
  return { libraries, loader, missing };
}

async function ldd(binary: string): Promise<Needs | null> {
  try {
    const { stdout } = await execFileP('ldd', [binary], { timeout: LDD_TIMEOUT_MS, encoding: 'utf8' });
    return parseLdd(stdout);
  } catch {
    // No ldd (not glibc), or a static binary ("not a dynamic executable"): nothing to lend.
    return null;
  }
}

/** The PTY package's binary for this host, or null when it is not where the package keeps it. */
export function ptyBinary(packageRoot: string): string | null {
  try {
    const require = createRequire(join(packageRoot, 'package.json'));
    return join(dirname(require.resolve(`@lydell/node-pty-${process.platform}-${process.arch}/package.json`)), 'pty.node');
  } catch {
    return null;
  }
}

/** One file lent: the host's file (its real path) and its name under /opt/jackin/lib. */
export interface LentFile {
  readonly name: string;
  readonly path: string;
}

/**
 * The files to mount under /opt/jackin/lib for `binaries`, the loader first (named LOADER_NAME), the
 * libraries by name; null when the host cannot lend them (no ldd, a static Node, a library ldd cannot
 * find): the capsule then runs on the image's own glibc, as it did before.
 */
export async function hostLibraries(binaries: readonly string[]): Promise<LentFile[] | null> {
  const files = new Map<string, string>();
  let loader: string | null = null;
  for (const binary of binaries) {
    const needs = await ldd(binary);
    if (needs === null || needs.loader === null || needs.missing.length > 0) return null;
    loader = needs.loader;
    for (const [name, path] of needs.libraries) files.set(name, path);
  }
  if (loader === null) return null;
  const lent: LentFile[] = [{ name: LOADER_NAME, path: await realpath(loader) }];
  for (const [name, path] of [...files.entries()].sort(([a], [b]) => a.localeCompare(b))) lent.push({ name, path: await realpath(path) });
  return lent;
}
