import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

/** Every entry under <run>/files, relative: `<dir>/<name>` for a staged file, a bare name for a partial one. */
export function stagedFiles(runDir: string): string[] {
  const root = join(runDir, 'files');
  if (!existsSync(root)) return [];
  const out: string[] = [];
  for (const e of readdirSync(root, { withFileTypes: true })) {
    if (e.isDirectory()) for (const f of readdirSync(join(root, e.name))) out.push(`${e.name}/${f}`);
    else out.push(e.name);
  }
  return out;
}
