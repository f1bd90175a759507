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

/**
 * Index of the first byte of `data` at or after `from` that is not plain text (`data.length` when there is
 * none). Four bytes at a time: a 32-bit word has a byte below 0x20 exactly when
 * `(w - 0x20202020) & ~w & 0x80808080` is non-zero, and one of 0x7F or above exactly when
 * `((w + 0x01010101) | w) & 0x80808080` is (the classic "has less" / "has more" tests, exact for these
 * bounds); only such words, mostly the ones holding a CR or LF, are looked at byte by byte.
 */
export function firstNotPlain(data: Uint8Array, from = 0): number {
  const n = data.length;
  let i = from;
  // Byte by byte up to a 4-byte boundary of the underlying buffer, so the words below are aligned.
  while (i < n && ((data.byteOffset + i) & 3) !== 0) {
    if (PLAIN[data[i]!] !== 1) return i;
    i++;
  }
  const words = (n - i) >> 2;
  if (words > 0) {
    const w32 = new Uint32Array(data.buffer, data.byteOffset + i, words);
    for (let k = 0; k < words; k++) {
      const w = w32[k]!;
      if ((((w - 0x20202020) & ~w) | (w + 0x01010101) | w) & 0x80808080) {
        const at = i + 4 * k;
        for (let j = at; j < at + 4; j++) if (PLAIN[data[j]!] !== 1) return j;
      }
    }
    i += 4 * words;
  }
  while (i < n) {
    if (PLAIN[data[i]!] !== 1) return i;
    i++;
  }
  return n;
}

/**
 * Index of the first byte to parse (0: parse it all) in the batch made of `chunks` one after the other
 * (an index into their concatenation, which is never built).
 */
export function plainTextCut(chunks: readonly Uint8Array[], rows: number): number {
  // The plain prefix: whole chunks, then part of the first chunk that is not all plain.
  let plainChunks = 0;
  let plainEndInChunk = 0;
  for (; plainChunks < chunks.length; plainChunks++) {
    const c = chunks[plainChunks]!;
    const end = firstNotPlain(c);
    if (end < c.length) {
      plainEndInChunk = end;
      break;
    }
  }
  // Backwards from the end of the prefix: the last CR with enough line feeds after it.
  const need = 2 * rows + 1;
  let lineFeeds = 0;
  let base = 0;
  for (let k = 0; k < plainChunks; k++) base += chunks[k]!.length;
  for (let k = plainChunks; k >= 0; k--) {
    const c = chunks[k];
    if (c === undefined) continue; // every chunk was plain: start with the last one
    if (k < plainChunks) base -= c.length;
    const top = k === plainChunks ? plainEndInChunk : c.length;
    for (let i = top - 1; i >= 0; i--) {
      const b = c[i];
      if (b === 0x0a) lineFeeds++;
      else if (b === 0x0d && lineFeeds >= need) return base + i;
    }
  }
  return 0;
}
