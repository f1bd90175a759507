/**
 * What every command module of both CLIs shares: the status setter a command's action reports through,
 * the package version, a write that resolves once the text is handed to the stream, and the check of a
 * program's working directory.
 */
import { readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { PACKAGE_ROOT } from '../package-root.ts';
import { JackinError } from '../errors.ts';

/** A command's action reports its exit status through this; the CLI's `run` returns it. */
export type SetStatus = (status: number) => void;

export function packageVersion(): string {
  try {
    const pkg = JSON.parse(readFileSync(join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { version?: unknown };
    return typeof pkg.version === 'string' ? pkg.version : '0.0.0';
  } catch {
    return '0.0.0';
  }
}

export function writeAll(stream: NodeJS.WriteStream, text: string): Promise<void> {
  return new Promise((res) => {
    if (text.length === 0 || stream.destroyed) return res();
    stream.write(text, () => res());
  });
}

/** The program's working directory (`--workspace` of jackin run and jackin-capsule serve), made absolute; E_USAGE unless it is a directory. */
export function checkWorkspace(dir: string): string {
  const workspace = resolve(dir);
  try {
    if (!statSync(workspace).isDirectory()) throw new Error('not a directory');
  } catch (cause) {
    throw new JackinError('E_USAGE', `workspace ${workspace} is not a directory: pass an existing --workspace`, { cause });
  }
  return workspace;
}
