/**
 * What terminals type when files are dropped on them, or a file manager's copy is pasted: one or more
 * absolute paths, each quoted ('...' or "..."), backslash-escaped (`my\ report.pdf`) or a `file://` URL,
 * separated by blanks or newlines. A paste is paths only if every word is one; anything else (prose, a
 * relative path, a URL of another host) is not, and the caller forwards it byte for byte.
 *
 * Each word keeps its position and quoting style, so the caller can put container paths in place of the
 * host paths, quoted the same way (renderPath), inside the same paste (rewritePaste). Shell quoting only:
 * no expansion of any kind ($VAR, ~, globs).
 */
import { fileURLToPath, pathToFileURL } from 'node:url';

/** How one path was written: the style of its first quoted part, or a file URL. */
export type PathQuoting = 'plain' | 'single' | 'double' | 'uri';

export interface PastedPathWord {
  /** UTF-16 offsets of the word in the paste's text. */
  readonly start: number;
  readonly end: number;
  readonly path: string;
  readonly quoting: PathQuoting;
}

export interface PastedPaths {
  readonly text: string;
  readonly words: readonly PastedPathWord[];
}

/** A drop of many files is still a few KiB; a longer paste is text, and is not parsed. */
export const MAX_PASTED_PATHS_BYTES = 64 * 1024;
/** Most paths one paste may name. */
export const MAX_PASTED_PATHS = 64;

const utf8 = new TextDecoder('utf-8', { fatal: true });
const BLANK = /[ \t\r\n]/;

/** One shell word at `i` (not a blank): its decoded text, end offset and first part's quoting; null when unterminated. */
function readWord(s: string, i: number): { word: string; end: number; quoting: 'plain' | 'single' | 'double' } | null {
  let word = '';
  let quoting: 'plain' | 'single' | 'double' | undefined;
  while (i < s.length && !BLANK.test(s[i]!)) {
    const c = s[i]!;
    if (c === "'") {
      const end = s.indexOf("'", i + 1);
      if (end < 0) return null;
      word += s.slice(i + 1, end);
      quoting ??= 'single';
      i = end + 1;
    } else if (c === '"') {
      quoting ??= 'double';
      i++;
      for (;;) {
        if (i >= s.length) return null;
        const d = s[i]!;
        if (d === '"') {
          i++;
          break;
        }
        if (d === '\\' && i + 1 < s.length && '\\"$`'.includes(s[i + 1]!)) {
          word += s[i + 1];
          i += 2;
        } else {
          word += d;
          i++;
        }
      }
    } else if (c === '\\') {
      if (i + 1 >= s.length || s[i + 1] === '\n') return null;
      word += s[i + 1];
      quoting ??= 'plain';
      i += 2;
    } else {
      word += c;
      quoting ??= 'plain';
      i++;
    }
  }
  return { word, end: i, quoting: quoting ?? 'plain' };
}

function localPath(word: string, quoting: PathQuoting): { path: string; quoting: PathQuoting } | null {
  if (/^file:/i.test(word)) {
    try {
      // Rejects file://otherhost/..., encoded slashes and non-absolute forms.
      const p = fileURLToPath(new URL(word));
      return p.startsWith('/') ? { path: p, quoting: quoting === 'plain' ? 'uri' : quoting } : null;
    } catch {
      return null;
    }
  }
  return word.startsWith('/') ? { path: word, quoting } : null;
}

/** The paths a paste consists of, or null when it is anything else. */
export function parsePastedPaths(content: Buffer | string, maxBytes = MAX_PASTED_PATHS_BYTES): PastedPaths | null {
  let text: string;
  if (typeof content === 'string') {
    text = content;
    if (Buffer.byteLength(text) > maxBytes) return null;
  } else {
    if (content.length > maxBytes) return null;
    try {
      text = utf8.decode(content);
    } catch {
      return null;
    }
  }
  // Blanks and line ends separate words; any other control character means this is not a list of paths.
  if (/[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]/.test(text)) return null;
  const words: PastedPathWord[] = [];
  let i = 0;
  while (i < text.length) {
    if (BLANK.test(text[i]!)) {
      i++;
      continue;
    }
    const w = readWord(text, i);
    if (w === null) return null;
    const p = localPath(w.word, w.quoting);
    if (p === null || words.length >= MAX_PASTED_PATHS) return null;
    words.push({ start: i, end: w.end, path: p.path, quoting: p.quoting });
    i = w.end;
  }
  return words.length === 0 ? null : { text, words };
}

/** `path` written in `quoting`, so the program reads it back as the same path. */
export function renderPath(path: string, quoting: PathQuoting): string {
  switch (quoting) {
    case 'single':
      return `'${path.replace(/'/g, "'\\''")}'`;
    case 'double':
      return `"${path.replace(/["\\$`]/g, '\\$&')}"`;
    case 'uri':
      // pathToFileURL leaves sub-delimiters such as ' and $ as they are; encode every character a shell
      // would read specially, so the URL is one word however the program splits its input.
      return pathToFileURL(path).href.replace(/[^A-Za-z0-9\-._~/:%@]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`);
    case 'plain':
      return path.replace(/[^A-Za-z0-9_\-.,:/@%+=\u0080-\uffff]/g, '\\$&');
    default: {
      const never: never = quoting;
      throw new TypeError(`unexpected quoting ${JSON.stringify(never)}`);
    }
  }
}

/**
 * The paste with word k replaced by `replacements[k]` (rendered in its quoting). Line ends become spaces and
 * trailing ones are dropped: a staged path is never followed by Enter.
 */
export function rewritePaste(parsed: PastedPaths, replacements: readonly string[]): string {
  let out = '';
  let at = 0;
  parsed.words.forEach((w, k) => {
    out += parsed.text.slice(at, w.start) + renderPath(replacements[k] ?? w.path, w.quoting);
    at = w.end;
  });
  out += parsed.text.slice(at);
  return out.replace(/[\r\n]+$/, '').replace(/\r\n|[\r\n]/g, ' ');
}
