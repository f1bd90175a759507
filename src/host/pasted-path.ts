/**
 * Decides whether one bracketed paste is exactly one absolute host path or `file://` URL, as terminals
 * and file managers produce when a file is dropped or a path copied: quoted ('...' or "..."),
 * shell-escaped (`my\ shot.png`), with a trailing newline or space. Anything else (prose, several paths, a
 * relative path) is not a path, and the caller forwards the paste byte for byte. Only after a path is
 * returned does the caller check that the file exists and is an image.
 */
import { fileURLToPath } from 'node:url';
import { splitShellWords } from './shell-words.ts';

/** A pasted path is short; a longer paste is text, and we do not spend time parsing it. */
export const MAX_PASTED_PATH_BYTES = 4096;

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** The decoded absolute path the paste names, or null. */
export function parsePastedPath(content: Buffer | string): string | null {
  let text: string;
  if (typeof content === 'string') {
    text = content;
  } else {
    if (content.length > MAX_PASTED_PATH_BYTES) return null;
    try {
      text = utf8.decode(content);
    } catch {
      return null;
    }
  }
  if (text.length > MAX_PASTED_PATH_BYTES) return null;
  // Terminals add a trailing newline (a copied line) or a space (GNOME Terminal's drop); nothing else.
  text = text.replace(/[\r\n \t]+$/, '').replace(/^[ \t]+/, '');
  // A control character anywhere (a second line included) means this is not one path.
  if (text === '' || /[\x00-\x1f\x7f]/.test(text)) return null;
  let words: string[];
  try {
    words = splitShellWords(text);
  } catch {
    return null;
  }
  if (words.length !== 1) return null;
  const word = words[0]!;
  if (/^file:/i.test(word)) {
    try {
      // Rejects file://otherhost/..., encoded slashes and non-absolute forms.
      const p = fileURLToPath(new URL(word));
      return p.startsWith('/') ? p : null;
    } catch {
      return null;
    }
  }
  return word.startsWith('/') ? word : null;
}
