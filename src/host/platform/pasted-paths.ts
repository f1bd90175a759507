/**
 * What terminals type when files are dropped on them, or a file manager's copy is pasted: one or more
 * absolute paths, each quoted ('...' or "..."), backslash-escaped (`my\ report.pdf`) or a `file://` URL,
 * separated by blanks or newlines. A paste is paths only if every word is one; anything else (prose, a
 * relative path, a URL of another host) is not, and the caller forwards it byte for byte.
 *
 * Each word keeps its position and quoting style, so the caller can put container paths in place of the
 * host paths, quoted the same way (renderPath), inside the same paste (rewritePaste). The words are
 * shell-words.ts's (quoting only, no expansion of any kind).
 */
import { fileURLToPath, pathToFileURL } from 'node:url';
import { shellWords, type ShellWord } from './shell-words.ts';

/** How one path was written: the style of its first quoted part, or a file URL. */
export type PathQuoting = 'plain' | 'single' | 'double' | 'uri';

interface PastedPathWord {
  /** UTF-16 offsets of the word in `PastedPaths.text`. */
  readonly start: number;
  readonly end: number;
  readonly path: string;
  readonly quoting: PathQuoting;
}

export interface PastedPaths {
  /** The paste as text, line ends (CR, CRLF) made LF. */
  readonly text: string;
  readonly words: readonly PastedPathWord[];
}

/** A drop of many files is still a few KiB; a longer paste is text, and is not parsed. */
const MAX_PASTED_PATHS_BYTES = 64 * 1024;
/** Most paths one paste may name. */
const MAX_PASTED_PATHS = 64;

const utf8 = new TextDecoder('utf-8', { fatal: true });

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
  // Blanks and line ends separate words (a terminal sends a pasted line end as CR); any other control
  // character means this is not a list of paths.
  if (/[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]/.test(text)) return null;
  text = text.replace(/\r\n?/g, '\n');
  let words: ShellWord[];
  try {
    words = shellWords(text);
  } catch {
    return null;
  }
  if (words.length === 0 || words.length > MAX_PASTED_PATHS) return null;
  const out: PastedPathWord[] = [];
  for (const w of words) {
    const p = localPath(w.word, w.quoting);
    if (p === null) return null;
    out.push({ start: w.start, end: w.end, path: p.path, quoting: p.quoting });
  }
  return { text, words: out };
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
  return out.replace(/\n+$/, '').replace(/\n/g, ' ');
}
