/**
 * Decides whether one bracketed paste is exactly one absolute host path or `file://` URL, as terminals
 * and file managers produce when a file is dropped or a path copied: quoted ('...' or "..."),
 * shell-escaped (`my\ shot.png`), with a trailing newline or space. Anything else (prose, several paths, a
 * relative path) is not a path, and the caller forwards the paste byte for byte. Only after a path is
 * returned does the caller check that the file exists and is an image. The parsing is pasted-paths.ts's.
 */
import { parsePastedPaths } from './pasted-paths.ts';

/** A pasted path is short; a longer paste is text, and we do not spend time parsing it. */
const MAX_PASTED_PATH_BYTES = 4096;

/** The decoded absolute path the paste names, or null. */
export function parsePastedPath(content: Buffer | string): string | null {
  const parsed = parsePastedPaths(content, MAX_PASTED_PATH_BYTES);
  if (parsed === null || parsed.words.length !== 1) return null;
  // One path on one line: a second line, even of blanks between words, means this is not one path.
  const [word] = parsed.words;
  if (/[\r\n]/.test(parsed.text.slice(0, word!.end).trimStart())) return null;
  return word!.path;
}
