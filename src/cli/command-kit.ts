/**
 * What every command module of both CLIs shares: the status setter a command's action reports through,
 * the package version, and a write that resolves once the text is handed to the stream.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** A command's action reports its exit status through this; the CLI's `run` returns it. */
export type SetStatus = (status: number) => void;

// Works from src/cli (tsx) and dist/cli (built): both are two levels below the package root.
export const PACKAGE_ROOT = fileURLToPath(new URL('../../', import.meta.url));

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
