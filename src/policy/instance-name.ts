/**
 * The one rule for an instance name, wherever one enters: `jackin run --name`, `run --image`, `attach`,
 * `stop`, `export --from`, a container record, and the capsule's own `serve --name` (a name it reports is
 * printed by the host). A name is a directory under `$JACKIN_HOME/sockets/` and a word people read in
 * tables and messages, so it holds no path character (`/`, `\`, NUL), is not `.` or `..`, does not start
 * with `-` (it would read as an option), and holds no character that is not shown as itself: control
 * characters (C0, DEL, C1: an escape sequence in a name reached the terminal that ran `jackin stop`), format
 * characters (bidi marks, embeddings, overrides and isolates, zero-width characters, tags), line and
 * paragraph separators, other white space, lone surrogates, private-use and unassigned code points. Pure.
 */

/** Longest name, in UTF-16 code units (a directory name stays well under the file system's 255 bytes). */
export const MAX_INSTANCE_NAME_LENGTH = 128;

/** Characters never in a name (see the header); `u` flag: one match per code point. */
const NOT_IN_NAME = /[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Z}/\\]/u;

/** Why `name` is not an instance name (a sentence for a message), or null when it is one. */
export function instanceNameProblem(name: string): string | null {
  if (name.length === 0) return 'it is empty';
  if (name.length > MAX_INSTANCE_NAME_LENGTH) return `it is longer than ${MAX_INSTANCE_NAME_LENGTH} characters`;
  if (name === '.' || name === '..') return 'it is a dot directory';
  if (name.startsWith('-')) return 'it starts with "-"';
  const bad = NOT_IN_NAME.exec(name);
  if (bad !== null) {
    const cp = bad[0].codePointAt(0)!;
    return bad[0] === '/' || bad[0] === '\\'
      ? `it holds a path separator "${bad[0]}"`
      : `it holds the character U+${cp.toString(16).toUpperCase().padStart(4, '0')}, which is not shown as itself`;
  }
  return null;
}

/** What a refused name is replaced with in a message: its code points, so nothing in it reaches a terminal. */
export function describeRefusedName(name: string): string {
  const shown = [...name.slice(0, 64)].map((c) => (/^[\x21-\x7e]$/.test(c) && c !== '"' && c !== '\\' ? c : `\\u{${c.codePointAt(0)!.toString(16)}}`)).join('');
  return `"${shown}${name.length > 64 ? '…' : ''}"`;
}
