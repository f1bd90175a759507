/**
 * Splits a string into words the way a POSIX shell does for quoting only, the one splitter for every
 * command line and pasted path jackin reads (JACKIN_OPENER, JACKIN_CLIPBOARD=command:, a pasted path):
 * unquoted blanks (space, tab, newline; not other Unicode spaces) separate words; single quotes are literal;
 * double quotes honour `\\ \" \$ \``; a backslash outside quotes escapes the next character; a
 * backslash-newline is a line continuation and disappears, inside double quotes too. No expansion of any
 * kind ($VAR, ~, globs, $(…)) happens: the words are used as given.
 */
import { JackinError } from '../../errors.ts';

/** Builds the error for bad quoting; `what` reads like "an unterminated single quote". */
export type BadQuoting = (what: string) => JackinError;

function isBlank(c: string): boolean {
  return c === ' ' || c === '\t' || c === '\n';
}

/** One word and where it was: offsets of its first and past its last character, and its first part's quoting. */
export interface ShellWord {
  readonly word: string;
  readonly start: number;
  readonly end: number;
  readonly quoting: 'plain' | 'single' | 'double';
}

/**
 * The words of `s`. An unterminated quote or a trailing backslash throws `badQuoting(what)`, by default
 * E_BAD_QUOTING naming the problem and the text.
 */
export function splitShellWords(s: string, badQuoting?: BadQuoting): string[] {
  return shellWords(s, badQuoting).map((w) => w.word);
}

/** The words of `s` with their places and quoting (a pasted path is rewritten in place, quoted the same way). */
export function shellWords(s: string, badQuoting?: BadQuoting): ShellWord[] {
  const words: ShellWord[] = [];
  let word = '';
  let quoting: ShellWord['quoting'] | null = null;
  let start = 0;
  let i = 0;
  const fail = (what: string): never => {
    throw badQuoting?.(what) ?? new JackinError('E_BAD_QUOTING', `${what} in ${JSON.stringify(s)}; close the quote or escape it`);
  };
  const begin = (q: ShellWord['quoting']): void => {
    if (quoting !== null) return;
    quoting = q;
    start = i;
  };
  const close = (): void => {
    if (quoting !== null) words.push({ word, start, end: i, quoting });
    word = '';
    quoting = null;
  };
  while (i < s.length) {
    const c = s[i]!;
    if (isBlank(c)) {
      close();
      i++;
    } else if (c === "'") {
      const end = s.indexOf("'", i + 1);
      if (end < 0) fail('an unterminated single quote');
      begin('single');
      word += s.slice(i + 1, end);
      i = end + 1;
    } else if (c === '"') {
      begin('double');
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
        begin('plain');
        word += s[i + 1];
      }
      i += 2;
    } else {
      begin('plain');
      word += c;
      i++;
    }
  }
  close();
  return words;
}
