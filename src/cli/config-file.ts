/**
 * Reads the operator's config file (src/policy/host-config.ts) for the host CLI: the file JACKIN_CONFIG
 * names, else `$XDG_CONFIG_HOME/jackin/config.json` or `config.toml` (default `~/.config/jackin/`), which may
 * be absent (both present is an error: which one wins would be a guess). jackin applies it to its own environment before any command reads a `JACKIN_*` variable, so a
 * value from the file is exactly that variable set in the environment: what jackin starts inherits it as it
 * would an exported one, and nothing else carries it into a container.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { JackinError } from '../errors.ts';
import { isOffWord } from '../policy/env-switch.ts';
import { applyConfig, parseConfig } from '../policy/host-config.ts';
import type * as SmolToml from 'smol-toml';

// Required, not imported: a bundle would hoist an import and load it at every start (scripts/bundle.mjs),
// for the few operators who write TOML.
const parseToml = (text: string): unknown => (createRequire(import.meta.url)('smol-toml') as typeof SmolToml).parse(text);

type Env = Readonly<Record<string, string | undefined>>;

/** The config file to read, and whether JACKIN_CONFIG named it (then it must exist); null for JACKIN_CONFIG=none (any off-word). */
export function configFilePath(env: Env): { path: string; named: boolean } | null {
  const named = env['JACKIN_CONFIG'];
  if (isOffWord(named)) return null;
  if (named !== undefined && named !== '') return { path: named, named: true };
  const xdg = env['XDG_CONFIG_HOME'];
  const base = xdg !== undefined && xdg !== '' ? xdg : join(env['HOME'] || homedir(), '.config');
  const json = join(base, 'jackin', 'config.json');
  const toml = join(base, 'jackin', 'config.toml');
  if (!existsSync(toml)) return { path: json, named: false };
  if (existsSync(json)) throw new JackinError('E_CONFIG', `two config files, ${json} and ${toml}: keep one`);
  return { path: toml, named: false };
}

/** The config file read: its path and its settings; null when there is none. Throws E_CONFIG. */
export function loadConfigFile(env: Env): { path: string; settings: Map<string, string> } | null {
  const file = configFilePath(env);
  if (file === null) return null;
  const { path, named } = file;
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' && !named) return null;
    const why = code === 'ENOENT' ? 'does not exist' : code === 'EISDIR' ? 'is a directory' : `cannot be read (${code ?? 'error'})`;
    throw new JackinError('E_CONFIG', `config file ${path}${named ? ' (JACKIN_CONFIG)' : ''} ${why}: fix the path in JACKIN_CONFIG or create the file`);
  }
  return { path, settings: parseConfig(text, path, parseToml) };
}

/** Applies the config file to `env` (the environment wins); returns the file read, or null. Throws E_CONFIG. */
export function applyConfigFile(env: Record<string, string | undefined> = process.env): string | null {
  const config = loadConfigFile(env);
  if (config === null) return null;
  applyConfig(config.settings, env);
  return config.path;
}
