/**
 * The policy a capsule reads at start (policies/*.json, docs/policy.md). Pure types and defaults: the file
 * is parsed by load.ts and applied by decide.ts. Sizes are plain byte counts once loaded.
 */
import { GiB } from './size.ts';

/** What happens to a path whose real location is outside every allowed root. */
export const OUTSIDE_ROOTS_MODES = ['deny', 'confirm'] as const;
export type OutsideRootsMode = (typeof OUTSIDE_ROOTS_MODES)[number];

/** Placeholders a root may use; expanded by `expandRoots` in decide.ts. */
export const ROOT_PLACEHOLDERS = ['workspace', 'run'] as const;
type RootPlaceholder = (typeof ROOT_PLACEHOLDERS)[number];
export type RootVars = Readonly<Record<RootPlaceholder, string>>;

export interface DirectoryExportPolicy {
  /** Whether a directory may be exported (as `<name>.tar.zst`). */
  readonly enabled: boolean;
  /** Most entries (files, directories, symlinks) one archive may hold. */
  readonly maxEntries: number;
  /** Most file content bytes (before compression) one archive may hold. */
  readonly maxTotalBytes: number;
}

export interface ExportPolicy {
  /** Allowed roots, absolute or starting with a placeholder such as `${workspace}`. */
  readonly roots: readonly string[];
  /** Largest regular file that may be exported. */
  readonly maxFileBytes: number;
  readonly directories: DirectoryExportPolicy;
  /** A path whose real location is outside the roots is refused (`deny`) or needs the operator (`confirm`). */
  readonly outsideRoots: OutsideRootsMode;
}

export interface Policy {
  readonly version: 1;
  readonly export: ExportPolicy;
}

export const DEFAULT_POLICY: Policy = {
  version: 1,
  export: {
    roots: ['${workspace}', '${run}/clipboard', '${run}/uploads'],
    maxFileBytes: 8 * GiB,
    directories: { enabled: true, maxEntries: 100_000, maxTotalBytes: 8 * GiB },
    outsideRoots: 'deny',
  },
};
