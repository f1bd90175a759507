// What a hostile container can leave in a shared workspace: a file of the operator's outside it
// (`private/<target>`), and a symlink to it under an innocent name inside it (`workspace/<link>`).
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface PlantedSymlink {
  /** The temporary directory holding both (resolved, so paths compare with realpath's). */
  readonly dir: string;
  readonly workspace: string;
  /** The operator's file, outside the workspace. */
  readonly target: string;
  /** The symlink to it, inside the workspace. */
  readonly link: string;
}

/** Makes the pair in a new temporary directory, removed after the test. */
export function plantSymlink(t: { after: (fn: () => void) => void }, names: { target: string; link: string }, bytes: Buffer | string): PlantedSymlink {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'jackin-planted-')));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const workspace = join(dir, 'workspace');
  mkdirSync(join(dir, 'private'));
  mkdirSync(workspace);
  const target = join(dir, 'private', names.target);
  writeFileSync(target, bytes);
  const link = join(workspace, names.link);
  symlinkSync(target, link);
  return { dir, workspace, target, link };
}
