/**
 * The character widths of the screen model: the ones programs measure with (glibc's wcwidth) and current
 * terminals draw with, instead of xterm.js's default Unicode 6 table, under which an emoji such as U+1F90C
 * took one column where the operator's terminal takes two and every later column of the line was off.
 * The table is generated (scripts/gen-char-widths.mjs, char-widths.ts); docs/screen-fidelity.md says where it
 * agrees with which terminals.
 *
 * Joining follows tmux: a zero-width character (combining mark, variation selector) joins the previous cell,
 * and so does the character after a zero-width joiner (U+200D), keeping the width of the sequence's first
 * character. Regional-indicator pairs (flags) and skin-tone modifiers are not joined, as in glibc and tmux.
 */
import type { IUnicodeVersionProvider } from '@xterm/headless';
import { FIRST_NOT_NARROW, WIDE, ZERO_WIDTH } from './char-widths.ts';

/** The version name the model activates (`term.unicode.activeVersion`). */
const CHAR_WIDTHS_VERSION = 'jackin-glibc';

const ZWJ = 0x200d;
/** charKind of a zero-width joiner in xterm's packed property value (kind << 3 | width << 1 | join). */
const KIND_AFTER_ZWJ = 1;

const bmp = new Uint8Array(0x10000).fill(1);
/** Astral ranges as [start, end, width] triples, sorted. */
const astral: number[] = [];

for (const [list, width] of [
  [ZERO_WIDTH, 0],
  [WIDE, 2],
] as const) {
  for (const range of list.split(' ')) {
    const [a, b] = range.split('-');
    const start = parseInt(a!, 16);
    const end = b === undefined ? start : parseInt(b, 16);
    for (let c = start; c <= Math.min(end, 0xffff); c++) bmp[c] = width;
    if (end > 0xffff) astral.push(Math.max(start, 0x10000), end, width);
  }
}
{
  const triples: Array<[number, number, number]> = [];
  for (let i = 0; i < astral.length; i += 3) triples.push([astral[i]!, astral[i + 1]!, astral[i + 2]!]);
  triples.sort((x, y) => x[0] - y[0]);
  astral.length = 0;
  for (const t of triples) astral.push(...t);
}

/** Columns a code point takes (control characters never reach this: the parser handles them). */
export function charWidth(cp: number): 0 | 1 | 2 {
  if (cp < FIRST_NOT_NARROW) return 1;
  if (cp <= 0xffff) return bmp[cp] as 0 | 1 | 2;
  let lo = 0;
  let hi = astral.length / 3 - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const at = mid * 3;
    if (cp < astral[at]!) hi = mid - 1;
    else if (cp > astral[at + 1]!) lo = mid + 1;
    else return astral[at + 2] as 0 | 2;
  }
  return 1;
}

export const charWidthProvider: IUnicodeVersionProvider = {
  version: CHAR_WIDTHS_VERSION,
  wcwidth: charWidth,
  charProperties(cp: number, preceding: number): number {
    let width: number = charWidth(cp);
    let join = false;
    if (preceding !== 0) {
      const before = (preceding >> 1) & 3;
      if (before !== 0 && (width === 0 || preceding >> 3 === KIND_AFTER_ZWJ)) {
        join = true;
        width = before;
      }
    }
    return ((cp === ZWJ && join ? KIND_AFTER_ZWJ : 0) << 3) | (width << 1) | (join ? 1 : 0);
  },
};
