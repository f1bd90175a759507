/**
 * Pure export decisions. The capsule resolves a path on disk (export-source.ts) and asks these functions
 * about the result; nothing here touches the filesystem, so a real path given to `decideLocation` must
 * already be the real location of an opened file (symlinks resolved by the kernel, not by string work).
 */
import { posix } from 'node:path';
import { JackinError } from '../errors.ts';
import type { OutsideRootsMode, Policy, RootVars } from './schema.ts';

/** Longest container path a request may name (same as the FileExportStart source field). */
const MAX_CONTAINER_PATH_BYTES = 4096;

/**
 * The absolute, lexically normalised container path for a request: a relative path resolves against the
 * workspace. `..` is normalised away here, which is safe only because the location check runs on the
 * opened file's real path afterwards.
 */
export function containerPath(input: string, workspace: string): string {
  if (input.length === 0) throw new JackinError('E_BAD_PATH', 'export path is empty; name a file, e.g. jackin export report.txt');
  if (input.includes('\0')) throw new JackinError('E_BAD_PATH', `export path ${JSON.stringify(input)} contains a NUL byte`);
  if (Buffer.byteLength(input) > MAX_CONTAINER_PATH_BYTES) {
    throw new JackinError('E_BAD_PATH', `export path is ${Buffer.byteLength(input)} bytes, at most ${MAX_CONTAINER_PATH_BYTES}`);
  }
  if (!posix.isAbsolute(workspace)) throw new TypeError(`workspace must be absolute, got ${workspace}`);
  return posix.resolve(workspace, input);
}

/** The policy's roots with `${workspace}` and `${run}` replaced, normalised and de-duplicated. */
export function expandRoots(roots: readonly string[], vars: RootVars): string[] {
  const out: string[] = [];
  for (const r of roots) {
    const expanded = r.replace(/^\$\{(workspace|run)\}/, (_m, name: 'workspace' | 'run') => vars[name]);
    if (!posix.isAbsolute(expanded)) throw new TypeError(`root ${r} expanded to a relative path ${expanded}`);
    const n = posix.normalize(expanded);
    const trimmed = n.length > 1 && n.endsWith('/') ? n.slice(0, -1) : n;
    if (!out.includes(trimmed)) out.push(trimmed);
  }
  return out;
}

/** True when absolute normalised `p` is `root` or below it (`/a/bc` is not inside `/a/b`). */
export function isInside(root: string, p: string): boolean {
  if (root === '/') return p.startsWith('/');
  return p === root || p.startsWith(`${root}/`);
}

export type LocationDecision = { readonly kind: 'allow'; readonly root: string } | { readonly kind: 'confirm' } | { readonly kind: 'deny' };

/** Whether a real (symlink-free) path may be exported given the real paths of the allowed roots. */
export function decideLocation(realPath: string, realRoots: readonly string[], outside: OutsideRootsMode): LocationDecision {
  for (const root of realRoots) if (isInside(root, realPath)) return { kind: 'allow', root };
  switch (outside) {
    case 'deny':
      return { kind: 'deny' };
    case 'confirm':
      return { kind: 'confirm' };
    default: {
      const never: never = outside;
      throw new TypeError(`unknown outsideRoots mode ${String(never)}`);
    }
  }
}

export type SizeDecision = { readonly kind: 'allow' } | { readonly kind: 'too-large'; readonly cap: number };

export function decideFileSize(size: number, policy: Policy): SizeDecision {
  const cap = policy.export.maxFileBytes;
  return size > cap ? { kind: 'too-large', cap } : { kind: 'allow' };
}

export type DirectoryDecision =
  | { readonly kind: 'allow' }
  | { readonly kind: 'disabled' }
  | { readonly kind: 'too-many-entries'; readonly cap: number }
  | { readonly kind: 'too-many-bytes'; readonly cap: number };

/** Whether a directory holding `entries` entries and `totalBytes` content bytes (so far) may be exported. */
export function decideDirectory(entries: number, totalBytes: number, policy: Policy): DirectoryDecision {
  const d = policy.export.directories;
  if (!d.enabled) return { kind: 'disabled' };
  if (entries > d.maxEntries) return { kind: 'too-many-entries', cap: d.maxEntries };
  if (totalBytes > d.maxTotalBytes) return { kind: 'too-many-bytes', cap: d.maxTotalBytes };
  return { kind: 'allow' };
}
