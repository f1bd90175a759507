/**
 * Where exports land on the host: `<downloads>/jackin/<instance>/`, where `<downloads>` is
 * `JACKIN_DOWNLOAD_DIR`, else the XDG download directory on Linux (~/.config/user-dirs.dirs), else
 * ~/Downloads. An explicit `--to DIR` is used as the destination directory itself.
 */
import { readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import { sanitizeExportName } from './sanitize-name.ts';

export interface DownloadDirInputs {
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly home: string;
  readonly platform: NodeJS.Platform;
  /** Text of user-dirs.dirs, when it exists (Linux only). */
  readonly userDirs: string | undefined;
}

/** The XDG_DOWNLOAD_DIR value from user-dirs.dirs text, with `$HOME` expanded; undefined when unset. */
export function parseXdgDownloadDir(text: string, home: string): string | undefined {
  for (const line of text.split('\n')) {
    const m = /^\s*XDG_DOWNLOAD_DIR\s*=\s*"([^"]*)"\s*$/.exec(line);
    if (m === null) continue;
    const value = (m[1] ?? '').replace(/^\$HOME(?=\/|$)/, home);
    // The spec says a value equal to $HOME means "disabled"; relative values are not allowed.
    if (!isAbsolute(value) || resolve(value) === resolve(home)) return undefined;
    return value;
  }
  return undefined;
}

/** The downloads directory, pure given its inputs. */
export function pickDownloadsDir(i: DownloadDirInputs): string {
  const override = i.env['JACKIN_DOWNLOAD_DIR'];
  if (override !== undefined && override !== '') return resolve(override);
  if (i.platform === 'linux' && i.userDirs !== undefined) {
    const xdg = parseXdgDownloadDir(i.userDirs, i.home);
    if (xdg !== undefined) return xdg;
  }
  return join(i.home, 'Downloads');
}

/** The downloads directory for this process (reads user-dirs.dirs on Linux). */
export async function findDownloadsDir(env: NodeJS.ProcessEnv = process.env, platform: NodeJS.Platform = process.platform): Promise<string> {
  const home = env['HOME'] ?? homedir();
  let userDirs: string | undefined;
  if (platform === 'linux') {
    const config = env['XDG_CONFIG_HOME'] !== undefined && env['XDG_CONFIG_HOME'] !== '' ? env['XDG_CONFIG_HOME'] : join(home, '.config');
    userDirs = await readFile(join(config, 'user-dirs.dirs'), 'utf8').catch(() => undefined);
  }
  return pickDownloadsDir({ env, home, platform, userDirs });
}

/** The export directory: `--to` as given, else `<downloads>/jackin/<instance>` (instance name sanitised). */
export async function exportDirectory(instance: string, to?: string, env: NodeJS.ProcessEnv = process.env): Promise<string> {
  if (to !== undefined) return resolve(to);
  return join(await findDownloadsDir(env), 'jackin', sanitizeExportName(instance));
}
