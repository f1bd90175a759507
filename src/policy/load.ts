/**
 * Parse and validate a policy file's text (callers read the file: this module does no I/O). Every field is
 * optional and falls back to DEFAULT_POLICY; an unknown key, a wrong type or an unknown placeholder is an
 * E_POLICY_INVALID error naming the source, the key path and the fix.
 */
import { JackinError } from '../errors.ts';
import {
  DEFAULT_POLICY,
  OUTSIDE_ROOTS_MODES,
  ROOT_PLACEHOLDERS,
  type DirectoryExportPolicy,
  type ExportPolicy,
  type OutsideRootsMode,
  type Policy,
} from './schema.ts';
import { parseSize } from './size.ts';

/** Longest policy file accepted; a real one is a few hundred bytes. */
export const MAX_POLICY_TEXT_BYTES = 64 * 1024;
/** Most roots one policy may list (each is checked per export). */
const MAX_POLICY_ROOTS = 64;

type Json = Record<string, unknown>;

function invalid(source: string, key: string, problem: string): JackinError {
  return new JackinError('E_POLICY_INVALID', `policy ${source}: ${key} ${problem}; see docs/policy.md`);
}

function isObject(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function object(source: string, key: string, v: unknown, allowed: readonly string[]): Json {
  if (!isObject(v)) throw invalid(source, key, `must be an object, got ${JSON.stringify(v)}`);
  for (const k of Object.keys(v)) {
    if (!allowed.includes(k)) {
      const path = key === '(top level)' ? k : `${key}.${k}`;
      throw invalid(source, path, `is not a known key (known here: ${allowed.join(', ')})`);
    }
  }
  return v;
}

function size(source: string, key: string, v: unknown, fallback: number): number {
  if (v === undefined) return fallback;
  const n = parseSize(v);
  if (n === undefined) {
    throw invalid(source, key, `must be a byte count or a size like "512 MiB" or "512m", got ${JSON.stringify(v)}`);
  }
  return n;
}

function bool(source: string, key: string, v: unknown, fallback: boolean): boolean {
  if (v === undefined) return fallback;
  if (typeof v !== 'boolean') throw invalid(source, key, `must be true or false, got ${JSON.stringify(v)}`);
  return v;
}

function count(source: string, key: string, v: unknown, fallback: number): number {
  if (v === undefined) return fallback;
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) {
    throw invalid(source, key, `must be a non-negative integer, got ${JSON.stringify(v)}`);
  }
  return v;
}

const PLACEHOLDER_RE = /\$\{([^}]*)\}/g;

function root(source: string, key: string, v: unknown): string {
  if (typeof v !== 'string' || v.length === 0 || v.includes('\0')) {
    throw invalid(source, key, `must be a non-empty path string, got ${JSON.stringify(v)}`);
  }
  for (const m of v.matchAll(PLACEHOLDER_RE)) {
    const name = m[1] ?? '';
    if (!(ROOT_PLACEHOLDERS as readonly string[]).includes(name)) {
      throw invalid(source, key, `uses unknown placeholder \${${name}} (known: \${workspace}, \${run})`);
    }
    if (m.index !== 0) throw invalid(source, key, `may use a placeholder only at its start, got ${JSON.stringify(v)}`);
  }
  if (!v.startsWith('/') && !v.startsWith('${')) {
    throw invalid(source, key, `must be absolute or start with \${workspace} or \${run}, got ${JSON.stringify(v)}`);
  }
  return v;
}

function roots(source: string, v: unknown, fallback: readonly string[]): readonly string[] {
  if (v === undefined) return fallback;
  if (!Array.isArray(v)) throw invalid(source, 'export.roots', `must be an array of paths, got ${JSON.stringify(v)}`);
  if (v.length > MAX_POLICY_ROOTS) throw invalid(source, 'export.roots', `lists ${v.length} roots, at most ${MAX_POLICY_ROOTS}`);
  return v.map((r, i) => root(source, `export.roots[${i}]`, r));
}

function outside(source: string, v: unknown, fallback: OutsideRootsMode): OutsideRootsMode {
  if (v === undefined) return fallback;
  const mode = OUTSIDE_ROOTS_MODES.find((m) => m === v);
  if (mode === undefined) {
    throw invalid(source, 'export.outsideRoots', `must be "deny" or "confirm", got ${JSON.stringify(v)}`);
  }
  return mode;
}

function directories(source: string, v: unknown, d: DirectoryExportPolicy): DirectoryExportPolicy {
  if (v === undefined) return d;
  const o = object(source, 'export.directories', v, ['enabled', 'maxEntries', 'maxTotalBytes']);
  return {
    enabled: bool(source, 'export.directories.enabled', o['enabled'], d.enabled),
    maxEntries: count(source, 'export.directories.maxEntries', o['maxEntries'], d.maxEntries),
    maxTotalBytes: size(source, 'export.directories.maxTotalBytes', o['maxTotalBytes'], d.maxTotalBytes),
  };
}

function exportPolicy(source: string, v: unknown, d: ExportPolicy): ExportPolicy {
  if (v === undefined) return d;
  const o = object(source, 'export', v, ['roots', 'maxFileBytes', 'directories', 'outsideRoots']);
  return {
    roots: roots(source, o['roots'], d.roots),
    maxFileBytes: size(source, 'export.maxFileBytes', o['maxFileBytes'], d.maxFileBytes),
    directories: directories(source, o['directories'], d.directories),
    outsideRoots: outside(source, o['outsideRoots'], d.outsideRoots),
  };
}

/** Validate already-parsed JSON; `source` names the file in errors. */
function policyFromJson(value: unknown, source: string): Policy {
  const o = object(source, '(top level)', value, ['$comment', 'version', 'export']);
  if (o['version'] !== 1) {
    throw invalid(source, 'version', `must be 1, got ${JSON.stringify(o['version'])}`);
  }
  if (o['$comment'] !== undefined && typeof o['$comment'] !== 'string') {
    throw invalid(source, '$comment', 'must be a string');
  }
  return { version: 1, export: exportPolicy(source, o['export'], DEFAULT_POLICY.export) };
}

/** Parse a policy file's text; `source` (usually its path) names the file in errors. */
export function parsePolicy(text: string, source: string): Policy {
  if (text.length > MAX_POLICY_TEXT_BYTES) {
    throw new JackinError('E_POLICY_INVALID', `policy ${source}: ${text.length} characters, at most ${MAX_POLICY_TEXT_BYTES}`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw new JackinError('E_POLICY_INVALID', `policy ${source}: not valid JSON (${e instanceof Error ? e.message : String(e)})`, { cause: e });
  }
  return policyFromJson(value, source);
}
