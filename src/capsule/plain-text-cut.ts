/**
 * Where a screen model may start parsing a flood of plain text and still end with the same screen.
 *
 * A program that floods its terminal (a build log, `cat` of a big file) sends mostly printable ASCII
 * lines. Of those, only the last screenful can still be seen; parsing every byte made the capsule's model
 * the most expensive part of relaying such a flood. When a batch of output starts with plain text (bytes
 * 0x20-0x7E, CR and LF only: no escape sequence, no other control, nothing that changes a mode, the
 * attributes, the charset or a tab stop), parsing it can start at a CR that is followed, still inside the
 * plain text, by at least 2 x rows + 1 line feeds, and leave the model exactly where parsing all of it would:
 *  - the CR puts the cursor in column 0 either way, so every later line is placed the same;
 *  - with no scroll region, rows + 1 line feeds scroll every row that was on the screen before the cut out
 *    of sight, and the next `rows` line feeds scroll in fresh rows (blank, in the current attributes): the
 *    last `rows` rows, the cursor and the wrap state come from the bytes after the cut alone;
 *  - what was skipped could only have reached the scrollback, which the model does not keep (scrollback 0).
 * The caller must check the rest of that argument: everything before the batch is already parsed (so its
 * state is exact), the parser is between sequences (a read can end inside one), and no scroll region is
 * set. screen-model.test.ts checks the equivalence on random
 * screens and floods against a model that parses every byte.
 */

const PLAIN = new Uint8Array(256);
for (let b = 0x20; b <= 0x7e; b++) PLAIN[b] = 1;
PLAIN[0x0d] = 1;
PLAIN[0x0a] = 1;

/** Index of the first byte to parse (0: parse it all). */
export function plainTextCut(data: Uint8Array, rows: number): number {
  let plainEnd = 0;
  const n = data.length;
  while (plainEnd < n && PLAIN[data[plainEnd]!] === 1) plainEnd++;
  const need = 2 * rows + 1;
  let lineFeeds = 0;
  for (let i = plainEnd - 1; i > 0; i--) {
    const b = data[i];
    if (b === 0x0a) lineFeeds++;
    else if (b === 0x0d && lineFeeds >= need) return i;
  }
  return 0;
}
