/**
 * Splits a string into words the way a POSIX shell does for quoting only: single quotes are literal,
 * double quotes honour `\\ \" \$ \``, a backslash outside quotes escapes the next character, unquoted
 * blanks separate words. No expansion of any kind ($VAR, ~, globs) happens: the words are used as given.
 */
import { JackinError } from '../../errors.ts';

/** The words of `s`, or throws E_BAD_QUOTING for an unterminated quote or a trailing backslash. */
export function splitShellWords(s: string): string[] {
  const words: string[] = [];
  let word = '';
  let inWord = false;
  let i = 0;
  const fail = (what: string): never => {
    throw new JackinError('E_BAD_QUOTING', `${what} in ${JSON.stringify(s)}; close the quote or escape it`);
  };
  while (i < s.length) {
    const c = s[i]!;
    if (c === ' ' || c === '\t' || c === '\n') {
      if (inWord) words.push(word);
      word = '';
      inWord = false;
      i++;
    } else if (c === "'") {
      const end = s.indexOf("'", i + 1);
      if (end < 0) fail('unterminated single quote');
      word += s.slice(i + 1, end);
      inWord = true;
      i = end + 1;
    } else if (c === '"') {
      inWord = true;
      i++;
      for (;;) {
        if (i >= s.length) fail('unterminated double quote');
        const d = s[i]!;
        if (d === '"') {
          i++;
          break;
        }
        if (d === '\\' && i + 1 < s.length && '\\"$`\n'.includes(s[i + 1]!)) {
          // A backslash-newline inside double quotes is a line continuation, as in sh.
          if (s[i + 1] !== '\n') word += s[i + 1];
          i += 2;
        } else {
          word += d;
          i++;
        }
      }
    } else if (c === '\\') {
      if (i + 1 >= s.length) fail('trailing backslash');
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
