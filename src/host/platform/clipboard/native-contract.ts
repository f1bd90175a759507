/**
 * The one JSON output contract of the platform helpers in native/ (macOS JXA, Windows PowerShell): a
 * single JSON object on stdout (the last non-empty line counts, so a stray warning above it is harmless).
 *
 *   {"kind":"image","format":"png","path":"/tmp/x/clip.png","types":["public.png"]}
 *   {"kind":"file","path":"/Users/me/shot.png"}
 *   {"kind":"file","path":"/Users/me/a.pdf","paths":["/Users/me/a.pdf","/Users/me/b.csv"]}  (several copied files)
 *   {"kind":"text","text":"/Users/me/shot.png"}       (mode "text" only)
 *   {"kind":"none"}
 *   {"kind":"error","message":"..."}
 *
 * `format` is the helper's hint only: validation decides the format from the bytes.
 */
import { JackinError } from '../../../errors.ts';

export type NativeOutput =
  | { kind: 'image'; format: string; path: string; types: string[] }
  | { kind: 'file'; path: string; paths?: string[] }
  | { kind: 'text'; text: string }
  | { kind: 'none' }
  | { kind: 'error'; message: string };

function bad(helper: string, why: string, out: string): JackinError {
  return new JackinError('E_CLIPBOARD_READ_FAILED', `the ${helper} clipboard helper printed ${why}: ${JSON.stringify(out.slice(0, 200))}`);
}

/** Parses a helper's stdout into the contract, or throws E_CLIPBOARD_READ_FAILED naming what was wrong. */
export function parseNativeOutput(helper: string, stdout: string): NativeOutput {
  const line = stdout
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l !== '')
    .at(-1);
  if (line === undefined) throw bad(helper, 'nothing', stdout);
  let v: unknown;
  try {
    v = JSON.parse(line);
  } catch {
    throw bad(helper, 'something that is not JSON', line);
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw bad(helper, 'a non-object', line);
  const o = v as Record<string, unknown>;
  const str = (k: string): string => {
    const x = o[k];
    if (typeof x !== 'string' || x === '') throw bad(helper, `no string "${k}"`, line);
    return x;
  };
  switch (o.kind) {
    case 'image': {
      const types = Array.isArray(o.types) ? o.types.filter((t): t is string => typeof t === 'string') : [];
      return { kind: 'image', format: str('format'), path: str('path'), types };
    }
    case 'file': {
      const path = str('path');
      const paths = Array.isArray(o.paths) ? o.paths.filter((p): p is string => typeof p === 'string' && p !== '') : [];
      return paths.length > 0 ? { kind: 'file', path, paths } : { kind: 'file', path };
    }
    case 'text':
      return { kind: 'text', text: typeof o.text === 'string' ? o.text : '' };
    case 'none':
      return { kind: 'none' };
    case 'error':
      return { kind: 'error', message: typeof o.message === 'string' ? o.message : 'unknown error' };
    default:
      throw bad(helper, `an unknown kind ${JSON.stringify(o.kind)}`, line);
  }
}

/**
 * A Windows path printed by the PowerShell helper, as seen from WSL: `C:\Users\me\a.png` becomes
 * `/mnt/c/Users/me/a.png` (WSL's default automount root; `mountRoot` overrides it). UNC paths and
 * anything that is not a drive path return null.
 */
export function windowsPathToWsl(p: string, mountRoot = '/mnt/'): string | null {
  const m = /^([A-Za-z]):[\\/](.*)$/.exec(p);
  if (m === null) return null;
  const root = mountRoot.endsWith('/') ? mountRoot : `${mountRoot}/`;
  return `${root}${m[1]!.toLowerCase()}/${m[2]!.replace(/\\/g, '/')}`;
}
