/**
 * Where a screen model may start parsing a flood of plain text and still end with the same screen.
 *
 * A program that floods its terminal (a build log, `cat` of a big file) sends mostly ASCII lines. Of those,
 * only the last screenful can still be seen; parsing every byte made the capsule's model the most expensive
 * part of relaying such a flood. Plain text here is every ASCII byte (0x00-0x7F) but ESC, SO and SI: the
 * printable characters, DEL (ignored by the parser), and the C0 controls whose only effect in the model is
 * on the cursor or on rows the flood pushes out of sight (CR, LF, VT and FF (which act as LF), BS (with
 * reverse wraparound it may clear the wrap flag of the cursor's row), HT (moves to a tab stop, never sets
 * one), BEL (the model has no bell listener), NUL, CAN, SUB and the rest, which do nothing). What it leaves
 * out: ESC, which starts every escape sequence (modes, attributes, charset designations, tab stops,
 * titles, links), SO and SI, which switch the charset in use, and every byte of 0x80 or above (UTF-8,
 * whose decoder carries state, and C1 controls). When a batch of output starts with plain text, parsing it
 * can start at a CR that is followed, still inside the plain text, by at least 2 x rows + 1 line feeds
 * (0x0A; VT and FF are not counted), and leave the model exactly where parsing all of it would:
 *  - the CR puts the cursor in column 0 either way, so every later line is placed the same;
 *  - with no scroll region, rows + 1 line feeds scroll every row that was on the screen before the cut out
 *    of sight, and the next `rows` line feeds scroll in fresh rows (blank, in the current attributes): the
 *    last `rows` rows, the cursor and the wrap state come from the bytes after the cut alone;
 *  - what was skipped could only have reached the scrollback, which the model does not keep (scrollback 0).
 * The caller must check the rest of that argument: everything before the batch is already parsed (so its
 * state is exact), the parser is between sequences (a read can end inside one), and no scroll region is
 * set. screen-model.test.ts checks the equivalence on random screens and floods (controls included)
 * against a model that parses every byte.
 */

import { isAscii } from 'node:buffer';

const ESC = 0x1b;
const SO = 0x0e;
const SI = 0x0f;

// Buffer's indexOf is memchr on any Uint8Array; TypedArray.prototype.includes, what a Uint8Array that is
// not a Buffer would use, loops in C++ about ten times slower.
const bufferIndexOf = Buffer.prototype.indexOf as (this: Uint8Array, value: number) => number;

function has(data: Uint8Array, byte: number): boolean {
  return bufferIndexOf.call(data, byte) !== -1;
}

/** Whether byte `b` is plain text (see above). */
function plain(b: number): boolean {
  return b < 0x80 && b !== ESC && b !== SO && b !== SI;
}

/**
 * Index of the first byte of `data` at or after `from` that is not plain text (`data.length` when there is
 * none). A chunk that is all plain, the usual case during a flood, is recognised by native scans (simdutf's
 * ASCII check, then memchr for each of the three excluded controls): about three times faster than the
 * word-at-a-time loop in JavaScript this replaced. Only a chunk that holds a non-plain byte is then
 * walked byte by byte, up to that byte.
 */
export function firstNotPlain(data: Uint8Array, from = 0): number {
  const rest = from === 0 ? data : data.subarray(from);
  if (isAscii(rest) && !has(rest, ESC) && !has(rest, SO) && !has(rest, SI)) return data.length;
  for (let i = from; i < data.length; i++) if (!plain(data[i]!)) return i;
  return data.length;
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
