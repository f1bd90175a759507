/**
 * Splits a string into words the way a POSIX shell does for quoting only, the one splitter for every
 * command line and pasted path jackin reads (JACKIN_OPENER, JACKIN_CLIPBOARD=command:, a pasted path):
 * unquoted blanks (space, tab, newline; not other Unicode spaces) separate words; single quotes are literal;
 * double quotes honour `\\ \" \$ \``; a backslash outside quotes escapes the next character; a
 * backslash-newline is a line continuation and disappears, inside double quotes too. No expansion of any
 * kind ($VAR, ~, globs, $(…)) happens: the words are used as given.
 */
import { JackinError } from '../errors.ts';

/** Builds the error for bad quoting; `what` reads like "an unterminated single quote". */
export type BadQuoting = (what: string) => JackinError;

function isBlank(c: string): boolean {
  return c === ' ' || c === '\t' || c === '\n';
}

/**
 * The words of `s`. An unterminated quote or a trailing backslash throws `badQuoting(what)`, by default
 * E_BAD_QUOTING naming the problem and the text.
 */
export function splitShellWords(s: string, badQuoting?: BadQuoting): string[] {
  const words: string[] = [];
  let word = '';
  let inWord = false;
  let i = 0;
  const fail = (what: string): never => {
    throw badQuoting?.(what) ?? new JackinError('E_BAD_QUOTING', `${what} in ${JSON.stringify(s)}; close the quote or escape it`);
  };
  while (i < s.length) {
    const c = s[i]!;
    if (isBlank(c)) {
      if (inWord) words.push(word);
      word = '';
      inWord = false;
      i++;
    } else if (c === "'") {
      const end = s.indexOf("'", i + 1);
      if (end < 0) fail('an unterminated single quote');
      word += s.slice(i + 1, end);
      inWord = true;
      i = end + 1;
    } else if (c === '"') {
      inWord = true;
      i++;
      for (;;) {
        if (i >= s.length) fail('an unterminated double quote');
        const d = s[i]!;
        if (d === '"') {
          i++;
          break;
        }
        if (d === '\\' && i + 1 < s.length && '\\"$`\n'.includes(s[i + 1]!)) {
          if (s[i + 1] !== '\n') word += s[i + 1];
          i += 2;
        } else {
          word += d;
          i++;
        }
      }
    } else if (c === '\\') {
      if (i + 1 >= s.length) fail('a trailing backslash');
      if (s[i + 1] !== '\n') {
        word += s[i + 1];
        inWord = true;
      }
      i += 2;
    } else {
      word += c;
      inWord = true;
      i++;
    }
  }
  if (inWord) words.push(word);
  return words;
}
