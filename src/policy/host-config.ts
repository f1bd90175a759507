/**
 * The operator's config file (`$XDG_CONFIG_HOME/jackin/config.json` or `config.toml`, or the file JACKIN_CONFIG
 * names): `JACKIN_*` settings, `{"JACKIN_NOTIFY": "off"}` or by short name `{"notify": "off"}` (TOML:
 * `notify = "off"`). Each value
 * counts as that variable set in the environment, and only where the environment does not set it: the
 * environment wins. Only the host CLI (`jackin`) reads it; jackin-capsule never does. Pure: the file is read
 * by src/cli/config-file.ts.
 */
import { JackinError } from '../errors.ts';

/** A TOML parser (smol-toml's parse, which src/cli/config-file.ts loads only for a .toml file). */
export type TomlParse = (text: string) => unknown;

/** Every `JACKIN_*` variable the config file may set: the ones docs/guide.md ("Environment variables") lists. */
export const CONFIG_VARIABLES: readonly string[] = [
  'JACKIN_HOME',
  'JACKIN_RUN_DIR',
  'JACKIN_DOWNLOAD_DIR',
  'JACKIN_OPENER',
  'JACKIN_SSH_COMMAND',
  'JACKIN_OPEN_LINKS',
  'JACKIN_MOUSE',
  'JACKIN_PASTE_IMAGE_PATHS',
  'JACKIN_PASTE_FILE_PATHS',
  'JACKIN_STAGE_MAX_BYTES',
  'JACKIN_CLIPBOARD',
  'JACKIN_PALETTE_KEY',
  'JACKIN_PASTE_KEY',
  'JACKIN_LOGIN_FORWARD',
  'JACKIN_PORT_OFFERS',
  'JACKIN_CONFIRM',
  'JACKIN_UPSTREAM_REQUESTS',
  'JACKIN_EXPORT_MAX_BYTES',
  'JACKIN_COPY',
  'JACKIN_NOTIFY',
  'JACKIN_NOTIFIER',
  'JACKIN_NOTIFY_BELL',
  'JACKIN_GRAPHICS',
  'JACKIN_HINT',
  'JACKIN_ALT_SCREEN',
  'JACKIN_CACHE_DIR',
  'JACKIN_CAPSULE',
  'JACKIN_REGISTRY',
];

/** The variable a config key names: `JACKIN_NOTIFY` itself, or its short name `notify`; null for neither. */
export function configVariable(key: string): string | null {
  if (CONFIG_VARIABLES.includes(key)) return key;
  if (/^[a-z_]+$/u.test(key) && CONFIG_VARIABLES.includes(`JACKIN_${key.toUpperCase()}`)) return `JACKIN_${key.toUpperCase()}`;
  return null;
}

/** 1-based line and column of `offset` in `text`. */
function lineColumn(text: string, offset: number): string {
  const before = text.slice(0, offset).split('\n');
  return `line ${before.length}, column ${before.at(-1)!.length + 1}`;
}

const FIX = {
  json: 'write one JSON object of JACKIN_* settings, e.g. {"JACKIN_NOTIFY": "off"} (docs/guide.md, "The config file")',
  toml: 'write JACKIN_* settings as top-level keys, e.g. JACKIN_NOTIFY = "off" (docs/guide.md, "The config file")',
};

/** A config file's format: TOML for a name ending in .toml, JSON for any other. */
export function configFormat(file: string): 'json' | 'toml' {
  return file.toLowerCase().endsWith('.toml') ? 'toml' : 'json';
}

/** The file's text as one object, or E_CONFIG with the line and column of the error. */
function parseText(text: string, file: string, format: 'json' | 'toml', parseToml: TomlParse): unknown {
  try {
    return format === 'toml' ? parseToml(text) : JSON.parse(text);
  } catch (e) {
    let where = '';
    // smol-toml's TomlError carries the line and column.
    const { line, column } = (e ?? {}) as { line?: unknown; column?: unknown };
    if (format === 'toml' && typeof line === 'number' && typeof column === 'number') where = ` at line ${line}, column ${column}`;
    else {
      // Node 20 says "at position N", later Nodes add "(line L column C)": the position is in both.
      const position = /position (\d+)/u.exec(e instanceof Error ? e.message : '')?.[1];
      if (position !== undefined) where = ` at ${lineColumn(text, Number(position))}`;
    }
    throw new JackinError('E_CONFIG', `config file ${file} is not valid ${format === 'toml' ? 'TOML' : 'JSON'}${where}: ${FIX[format]}`);
  }
}

/** The settings in the text of config file `file`: variable name -> value. Throws E_CONFIG naming the file and the line or key. */
export function parseConfig(text: string, file: string, parseToml: TomlParse): Map<string, string> {
  const format = configFormat(file);
  const data = parseText(text, file, format, parseToml);
  if (typeof data !== 'object' || data === null || Array.isArray(data)) {
    throw new JackinError('E_CONFIG', `config file ${file} is not a JSON object: ${FIX[format]}`);
  }
  const settings = new Map<string, string>();
  for (const [key, value] of Object.entries(data)) {
    const name = configVariable(key);
    if (name === null) {
      throw new JackinError(
        'E_CONFIG',
        `config file ${file}: unknown key ${JSON.stringify(key.slice(0, 80))}; the keys are the JACKIN_* variables of docs/guide.md ("Environment variables"), e.g. "JACKIN_NOTIFY" or "notify"`,
      );
    }
    if (settings.has(name)) throw new JackinError('E_CONFIG', `config file ${file}: ${name} is set twice (by "${key}" and another key); keep one`);
    // true and false are the switches' on- and off-words (src/policy/env-switch.ts), as strings.
    if (typeof value === 'string') settings.set(name, value);
    else if (typeof value === 'boolean' || (typeof value === 'number' && Number.isFinite(value))) settings.set(name, String(value));
    else
      throw new JackinError(
        'E_CONFIG',
        `config file ${file}: the value of "${key}" is not a string, a boolean or a number; write it as in the environment, e.g. "off"`,
      );
  }
  return settings;
}

/** Sets each of `settings` in `env` that `env` does not set already (the environment wins); returns the names set. */
export function applyConfig(settings: ReadonlyMap<string, string>, env: Record<string, string | undefined>): string[] {
  const applied: string[] = [];
  for (const [name, value] of settings) {
    if (env[name] !== undefined) continue;
    env[name] = value;
    applied.push(name);
  }
  return applied;
}
