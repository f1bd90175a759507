/**
 * Which host files may be staged into a capsule, decided on the host before a byte is sent: a regular
 * file (directories are refused: a tree is `jackin stage` of its files or an archive the operator makes),
 * never under a secret location (src/policy/secret-paths.ts, checked on the path as given and on the
 * path its symlinks resolve to), within JACKIN_STAGE_MAX_BYTES per file and per batch (one paste or one
 * `jackin stage` command). The file is opened here, once, without following a last-moment symlink swap
 * (host-file.ts), and the descriptor is what gets sent.
 */
import type { FileHandle } from 'node:fs/promises';
import { basename, isAbsolute, resolve } from 'node:path';
import { JackinError } from '../../errors.ts';
import { secretReason } from '../../policy/secret-paths.ts';
import { openExact, resolveHostPath } from '../platform/host-file.ts';

export interface StageSource {
  /** The path as the operator gave it (absolute). */
  readonly path: string;
  /** Where its symlinks lead, when that differs from `path`. */
  readonly resolved: string | null;
  /** A symlink other than a root-directory alias leads elsewhere (host-file.ts): a paste asks first. */
  readonly redirected: boolean;
  /** The base name the capsule stages it under (the name the operator saw). */
  readonly name: string;
  readonly size: number;
  readonly handle: FileHandle;
}

/** Opens `given` for staging or throws E_PATH_NOT_FOUND, E_STAGE_DIRECTORY, E_NOT_A_FILE, E_SECRET_PATH, E_STAGE_TOO_LARGE, E_PATH_UNREADABLE. */
export async function openStageSource(given: string, maxBytes: number): Promise<StageSource> {
  const path = isAbsolute(given) ? given : resolve(given);
  const secretGiven = secretReason(path);
  if (secretGiven !== null) throw new JackinError('E_SECRET_PATH', `${path} is not staged: ${secretGiven}`);
  const { real, redirected } = await resolveHostPath(path);
  const secretReal = secretReason(real);
  if (secretReal !== null) throw new JackinError('E_SECRET_PATH', `${path} is not staged: it leads to ${real}, and ${secretReal}`);
  const handle = await openExact(real, path);
  try {
    const st = await handle.stat();
    if (st.isDirectory()) throw new JackinError('E_STAGE_DIRECTORY', `${path} is a directory; stage its files (or an archive of it) instead`);
    if (!st.isFile()) throw new JackinError('E_NOT_A_FILE', `${path} is not a regular file`);
    if (st.size > maxBytes) {
      throw new JackinError('E_STAGE_TOO_LARGE', `${path} is ${st.size} bytes, over the cap of ${maxBytes} (JACKIN_STAGE_MAX_BYTES)`);
    }
    const name = basename(path);
    return { path, resolved: real === path ? null : real, redirected, name, size: st.size, handle };
  } catch (e) {
    await handle.close();
    throw e;
  }
}

export type OpenedSource = { ok: true; source: StageSource } | { ok: false; path: string; error: JackinError };

/**
 * Opens every path; a batch whose files together pass `maxBytes` is refused whole (E_STAGE_TOO_LARGE on
 * each), so a paste is staged entirely or not at all for that reason. Callers close what they got.
 */
export async function openStageSources(paths: readonly string[], maxBytes: number): Promise<OpenedSource[]> {
  const out: OpenedSource[] = [];
  for (const p of paths) {
    try {
      out.push({ ok: true, source: await openStageSource(p, maxBytes) });
    } catch (e) {
      const error = e instanceof JackinError ? e : new JackinError('E_PATH_UNREADABLE', `cannot open ${p}: ${(e as Error).message}`, { cause: e });
      out.push({ ok: false, path: p, error });
    }
  }
  const total = out.reduce((n, o) => n + (o.ok ? o.source.size : 0), 0);
  if (total <= maxBytes) return out;
  await closeSources(out);
  const error = new JackinError(
    'E_STAGE_TOO_LARGE',
    `these ${paths.length} files are ${total} bytes together, over the cap of ${maxBytes} per paste (JACKIN_STAGE_MAX_BYTES)`,
  );
  return out.map((o) => (o.ok ? { ok: false, path: o.source.path, error } : o));
}

export async function closeSources(sources: readonly OpenedSource[]): Promise<void> {
  await Promise.all(sources.map((o) => (o.ok ? o.source.handle.close().catch(() => undefined) : undefined)));
}
