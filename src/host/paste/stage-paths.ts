/**
 * The file half of a paste: every host path a paste, drop or copied file list named, staged in the capsule
 * (`<run>/files/<random>/<name>`, through stage-client.ts on a fresh connection) where it may be. A secret
 * location, a directory or a file over JACKIN_STAGE_MAX_BYTES stays the host path, with a notice saying why;
 * a path whose symlinks lead elsewhere (host-file.ts) is staged only once the operator confirmed the file it
 * leads to. Every file gets a notice and a line in the host's record.
 */
import { describeError, isRefusal, JackinError } from '../../errors.ts';
import { stageMaxBytes } from '../../policy/stage-limits.ts';
import type { Transport } from '../../transport/transport.ts';
import { formatBytes } from '../../ui/format-bytes.ts';
import { symlinkDeclined } from '../platform/host-file.ts';
import type { FeatureSession } from '../session/feature-session.ts';
import { stageFile } from './stage-client.ts';
import { closeSources, openStageSources } from './stage-source.ts';

/** What staging uses of the session. */
export type StagePathsSession = Pick<FeatureSession, 'notify' | 'logAction' | 'confirm'>;

export interface StagePathsOptions {
  /** Opens a new connection to the same capsule. */
  readonly connect: () => Promise<Transport>;
  readonly env: NodeJS.ProcessEnv;
  /** The host's record of host actions (one line per staged or refused file). */
  readonly record?: (line: string) => void;
}

/**
 * Stages every path that may be; returns, per path, the container path or the host path (refused, with a
 * notice), or null when a path is not an existing file at all (the paste is then text, left alone).
 */
export async function stagePaths(s: StagePathsSession, paths: readonly string[], o: StagePathsOptions): Promise<string[] | null> {
  let cap: number;
  try {
    cap = stageMaxBytes(o.env);
  } catch (e) {
    s.notify('error', `Pasted files not staged: ${describeError(e)}`);
    return null;
  }
  const refused = (path: string, e: unknown): void => {
    const code = e instanceof JackinError ? e.code : 'E_INTERNAL';
    const refusal = isRefusal(code);
    s.notify(refusal ? 'warning' : 'error', `Not staged, pasted as the host path: ${describeError(e)}`);
    o.record?.(`not staged ${path}: ${code}: ${describeError(e)}`);
    s.logAction({ action: 'stage', target: path, result: refusal ? 'refused' : 'failed', detail: `${code}: ${describeError(e)}` });
  };
  const opened = await openStageSources(paths, cap);
  try {
    if (opened.some((f) => !f.ok && f.error.code === 'E_PATH_NOT_FOUND')) return null;
    const out: string[] = [];
    for (const f of opened) {
      if (!f.ok) {
        refused(f.path, f.error);
        out.push(f.path);
        continue;
      }
      const src = f.source;
      try {
        // The name may be a symlink the container made in a shared directory: the operator confirms the
        // file it really leads to, or nothing of it is read.
        const real = src.resolved ?? src.path;
        if (src.redirected && !(await s.confirm({ kind: 'stage', target: real, label: src.path }))) throw symlinkDeclined(src.path, real);
        const r = await stageFile(src, { connect: o.connect, capsuleNotice: false });
        const via = r.resolved === null ? '' : ` (symlink to ${r.resolved})`;
        s.notify('success', `Staged ${r.source}${via} as ${r.destination} (${formatBytes(r.bytes)})`);
        o.record?.(`staged ${r.source}${via} -> ${r.destination} (${r.bytes} bytes, sha256 ${r.sha256})`);
        s.logAction({ action: 'stage', target: r.source, result: 'ok', detail: `${r.destination} (${r.bytes} bytes)${via}` });
        out.push(r.destination);
      } catch (e) {
        refused(src.path, e);
        out.push(src.path);
      }
    }
    return out;
  } finally {
    await closeSources(opened);
  }
}
