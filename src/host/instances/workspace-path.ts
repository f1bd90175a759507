/**
 * Host paths the operator names for `jackin run --image` (`--volume`, `--env-file`) that lie in the
 * workspace. The container writes the workspace, so any name in it may be a symlink the agent planted
 * (`data` -> `~/.ssh`, `.env` -> another project's `.env`): the operator meant what the name shows, and the
 * engine (or jackin) would mount or read the other thing. A path written inside the workspace must
 * therefore still be inside it once its symlinks are resolved, and the caller uses the resolved path, so
 * what is mounted or read is what was checked. A path written outside the workspace is the operator's own
 * choice, symlinks and all.
 */
import { realpathSync } from 'node:fs';

/** True when `path` is `root` or below it (both absolute and normalised). */
export function isWithin(path: string, root: string): boolean {
  return path === root || path.startsWith(root.endsWith('/') ? root : `${root}/`);
}

export interface ResolvedHostPath {
  /** The path with every symlink resolved. */
  real: string;
  /** True when the path, read one name at a time, passes through the workspace (however it is spelled). */
  inWorkspace: boolean;
  /** True when the path passes through the workspace and its resolved path is not in it. */
  leavesWorkspace: boolean;
}

/**
 * Resolves `path` (absolute, normalised), and says whether it leaves `workspace` through a symlink: some
 * leading part of it resolves into the workspace (`./data`, `/home/op/proj/data`, `~/proj-link/data`) and
 * the whole does not. Throws realpath's error (ENOENT, EACCES, ELOOP) when it does not resolve.
 */
export function resolveHostPath(path: string, workspace: string): ResolvedHostPath {
  const real = realpathSync(path);
  let ws = workspace;
  try {
    ws = realpathSync(workspace);
  } catch {
    // A missing workspace is refused later, before anything starts.
  }
  let inWorkspace = isWithin(real, ws);
  for (let i = path.indexOf('/', 1); !inWorkspace && i !== -1; i = path.indexOf('/', i + 1)) {
    try {
      inWorkspace = isWithin(realpathSync(path.slice(0, i)), ws);
    } catch {
      // Resolved as a whole just above: a part that no longer does changed meanwhile, and the whole is checked.
    }
  }
  return { real, inWorkspace, leavesWorkspace: inWorkspace && !isWithin(real, ws) };
}
