/**
 * Help text laid out for the terminal it is read on. The texts after each command's help are written like
 * Markdown: lines of one paragraph are joined and re-wrapped at the help width, a blank line ends a
 * paragraph, and an indented line (an example) stays a line of its own, wrapped only when it is too long,
 * under its description column. Lines break at spaces only: a word longer than the width stays whole.
 */

/** Width of help when the output is no terminal and COLUMNS says nothing. */
const DEFAULT_HELP_WIDTH = 80;

/** The width help is wrapped at on `stream`: the terminal's, else COLUMNS, else 80. */
export function helpWidthFor(stream: { isTTY?: boolean; columns?: number }, env: Readonly<Record<string, string | undefined>> = process.env): number {
  if (stream.isTTY === true && stream.columns !== undefined && stream.columns > 0) return stream.columns;
  const columns = env['COLUMNS'];
  if (columns !== undefined && /^[1-9][0-9]{0,4}$/u.test(columns)) return Number(columns);
  return DEFAULT_HELP_WIDTH;
}

/** Greedy fill of `words` into lines of at most `width` columns; the first starts with `first`, the rest with `rest`. */
function fill(words: readonly string[], width: number, first: string, rest: string): string[] {
  const lines: string[] = [];
  let line = first;
  let empty = true;
  for (const word of words) {
    if (!empty && line.length + 1 + word.length > width) {
      lines.push(line);
      line = rest + word;
    } else {
      line = empty ? line + word : `${line} ${word}`;
    }
    empty = false;
  }
  lines.push(line);
  return lines;
}

/** An indented line, kept whole when it fits, else wrapped under its description column (or 4 columns in). */
function wrapIndented(line: string, width: number): string[] {
  if (line.length <= width) return [line];
  const indent = /^\s*/u.exec(line)![0];
  // `  jackin ls      list local instances`: the description starts after the last run of 2+ spaces.
  const column = /^(\s+\S.*\S\s{2,})\S/u.exec(line)?.[1];
  const words = (s: string): string[] => s.trim().split(/\s+/u);
  const hanging = ' '.repeat(indent.length + 4);
  if (column === undefined) return fill(words(line), width, indent, hanging);
  if (column.length <= width / 2) return fill(words(line.slice(column.length)), width, column, ' '.repeat(column.length));
  // A description column too far right: the example on its line(s), its description below it.
  return [...fill(words(column), width, indent, hanging), ...fill(words(line.slice(column.length)), width, hanging, hanging)];
}

/** `text` laid out at `width` columns (see the module comment). */
export function wrapHelpText(text: string, width: number): string {
  const out: string[] = [];
  let paragraph: string[] = [];
  const flush = (): void => {
    if (paragraph.length === 0) return;
    out.push(...fill(paragraph.join(' ').trim().split(/\s+/u), width, '', ''));
    paragraph = [];
  };
  for (const line of text.split('\n')) {
    if (line.trim() === '') {
      flush();
      out.push('');
    } else if (/^\s/u.test(line)) {
      flush();
      out.push(...wrapIndented(line.trimEnd(), width));
    } else {
      paragraph.push(line);
    }
  }
  flush();
  return out.join('\n');
}
