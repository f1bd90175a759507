/**
 * The serialize addon (0.14.0) writes every underline as SGR 4: curly, double, dotted and dashed underlines
 * (`4:2`..`4:5`, `21`) came back straight after a repaint, and the underline colour (SGR 58) was dropped;
 * and it underlines every cell of an OSC 8 link, which xterm reports as underlined (dashed) to draw links.
 * It also writes 256-colour indexes 0-15 (`38;5;1`) as ANSI colours (`31`), which a terminal that shows bold
 * text in bright colours draws differently. `renditionOverlay` redraws just those cells after the serialized
 * screen, with their full rendition, and then sets the program's pen again (the overlay changed it).
 *
 * Underline style and colour, and the pen, are xterm internals (`cell.extended`, `_core._inputHandler
 * ._curAttrData`; xterm is pinned exactly). Without them the overlay is empty: the repaint is what the addon
 * wrote, as before. rendition-overlay.test.ts checks the installed xterm provides them.
 */
import type { IBuffer, IBufferCell } from '@xterm/headless';

/** The public attribute getters, which xterm's cells and its pen (AttributeData) both have. */
type Rendition = Pick<
  IBufferCell,
  | 'isBold'
  | 'isItalic'
  | 'isDim'
  | 'isUnderline'
  | 'isBlink'
  | 'isInverse'
  | 'isInvisible'
  | 'isStrikethrough'
  | 'isOverline'
  | 'isFgRGB'
  | 'isBgRGB'
  | 'isFgPalette'
  | 'isBgPalette'
  | 'getFgColor'
  | 'getBgColor'
  | 'getFgColorMode'
  | 'getBgColorMode'
>;

interface Underline {
  style: number;
  /** xterm's colour value: mode in bits 24-25 (0 = default, 2 = 256 palette, 3 = RGB), the colour below. */
  color: number;
}

const CM_MASK = 0x3000000;
/** Where xterm keeps SGR 4 in a cell's foreground word, and the underline style in its extended word. */
const FG_UNDERLINE = 0x10000000;
const EXT_UNDERLINE_STYLE = 0x1c000000;
const CM_P256 = 0x2000000;
const CM_RGB = 0x3000000;
const DEFAULT_AFTER_59 = 0x3ffffff;

/** The underline style and colour xterm keeps in a cell's (or the pen's) extended attributes. */
export function underlineOf(attrs: object): Underline | null {
  const ext = (attrs as { extended?: { underlineStyle?: unknown; underlineColor?: unknown } }).extended;
  if (typeof ext?.underlineStyle !== 'number' || typeof ext.underlineColor !== 'number') return null;
  // SGR 59 (default underline colour) stores -1, which xterm keeps masked as 0x3ffffff: the same value as
  // RGB white, read here as the default (59 is far more common than a white underline).
  const color = ext.underlineColor < 0 || ext.underlineColor === DEFAULT_AFTER_59 ? 0 : ext.underlineColor;
  return { style: ext.underlineStyle, color };
}

/**
 * xterm's id of the OSC 8 link a cell belongs to (0 for none). Only a cell with extended attributes has one:
 * a reused cell object keeps the `extended` of the last cell loaded into it that had them.
 */
function linkOf(attrs: object): number {
  const a = attrs as { hasExtendedAttrs?: () => number; extended?: { urlId?: unknown } };
  if (typeof a.hasExtendedAttrs !== 'function' || a.hasExtendedAttrs() === 0) return 0;
  const id = a.extended?.urlId;
  return typeof id === 'number' ? id : 0;
}

/**
 * The underline the program wrote, or null for none. xterm reports every cell of an OSC 8 link as underlined
 * dashed (its renderer's way of showing links: `underlineStyle` is 5 while `urlId` is set), whatever the
 * program wrote, so a repaint would underline every link: for a link cell the style is read from the bits
 * beneath (`extended._ext`) and SGR 4 from the foreground word (`fg`).
 */
export function writtenUnderline(a: Rendition & object): Underline | null {
  const ext = (a as { extended?: { _ext?: unknown } }).extended;
  const fg = (a as { fg?: unknown }).fg;
  if (linkOf(a) !== 0 && typeof ext?._ext === 'number' && typeof fg === 'number') {
    const style = (ext._ext & EXT_UNDERLINE_STYLE) >>> 26;
    if (style === 0 && (fg & FG_UNDERLINE) === 0) return null;
    return { style: style === 0 ? 1 : style, color: underlineOf(a)?.color ?? 0 };
  }
  if (!a.isUnderline()) return null;
  return underlineOf(a) ?? { style: 1, color: 0 };
}

/** xterm's current pen (the attributes the next printed character gets), or null if it cannot be read. */
export function penOf(term: object): (Rendition & object) | null {
  const core = (term as { _core?: { _inputHandler?: { _curAttrData?: unknown } } })._core;
  const pen = core?._inputHandler?._curAttrData;
  return typeof pen === 'object' && pen !== null && typeof (pen as Rendition).isBold === 'function' ? (pen as Rendition) : null;
}

/**
 * Where the program last saved the cursor (DECSC `ESC 7`, SCOSC `CSI s`) in the active buffer, and the pen
 * saved with it (xterm saves its colours and flags, `savedCurAttrData`), or null if it cannot be read. xterm
 * keeps these in its private buffer (`_core._inputHandler._activeBuffer.savedX/savedY/savedCurAttrData`).
 */
export function savedCursorOf(term: object): { x: number; y: number; pen: Rendition & object } | null {
  const core = (term as { _core?: { _inputHandler?: { _activeBuffer?: { savedX?: unknown; savedY?: unknown; ybase?: unknown; savedCurAttrData?: unknown } } } })
    ._core;
  const b = core?._inputHandler?._activeBuffer;
  const pen = b?.savedCurAttrData;
  if (typeof b?.savedX !== 'number' || typeof b.savedY !== 'number' || typeof b.ybase !== 'number') return null;
  if (typeof pen !== 'object' || pen === null || typeof (pen as Rendition).isBold !== 'function') return null;
  return { x: b.savedX, y: b.savedY - b.ybase, pen: pen as Rendition };
}

function colour(base: number, isRgb: boolean, isPalette: boolean, mode: number, value: number): string[] {
  if (isRgb) return [`${base + 8};2;${(value >> 16) & 0xff};${(value >> 8) & 0xff};${value & 0xff}`];
  if (!isPalette) return [];
  if (mode === CM_P256) return [`${base + 8};5;${value}`];
  if (value < 8) return [String(base + value)];
  if (value < 16) return [String(base + 60 + value - 8)];
  return [`${base + 8};5;${value}`];
}

/** A complete SGR (starting from a reset) for a cell's or the pen's rendition. */
export function renditionSgr(a: Rendition): string {
  const p = ['0'];
  if (a.isBold()) p.push('1');
  if (a.isDim()) p.push('2');
  if (a.isItalic()) p.push('3');
  const u = writtenUnderline(a);
  if (u !== null) p.push(u.style <= 1 ? '4' : `4:${u.style}`);
  if (a.isBlink()) p.push('5');
  if (a.isInverse()) p.push('7');
  if (a.isInvisible()) p.push('8');
  if (a.isStrikethrough()) p.push('9');
  if (a.isOverline()) p.push('53');
  p.push(...colour(30, a.isFgRGB(), a.isFgPalette(), a.getFgColorMode(), a.getFgColor()));
  p.push(...colour(40, a.isBgRGB(), a.isBgPalette(), a.getBgColorMode(), a.getBgColor()));
  if (u !== null && (u.color & CM_MASK) === CM_P256) p.push(`58:5:${u.color & 0xff}`);
  if (u !== null && (u.color & CM_MASK) === CM_RGB) {
    const c = u.color & 0xffffff;
    p.push(`58:2::${(c >> 16) & 0xff}:${(c >> 8) & 0xff}:${c & 0xff}`);
  }
  return `\x1b[${p.join(';')}m`;
}

/**
 * Bytes that redraw the visible cells of `buffer` whose underline the addon cannot write (a style other
 * than single, or a colour), then restore `pen`. Empty when there are none or the internals are missing.
 */
export function renditionOverlay(buffer: IBuffer, rows: number, cols: number, pen: Rendition | null): string {
  if (pen === null) return '';
  let out = '';
  const cell = buffer.getNullCell();
  for (let y = 0; y < rows; y++) {
    const line = buffer.getLine(buffer.baseY + y);
    if (line === undefined) continue;
    for (let x = 0; x < cols; x++) {
      if (line.getCell(x, cell) === undefined || cell.getWidth() === 0) continue;
      const u = writtenUnderline(cell);
      const specialUnderline = u !== null && (u.style > 1 || (u.color & CM_MASK) !== 0);
      const lowPalette = (cell.getFgColorMode() === CM_P256 && cell.getFgColor() < 16) || (cell.getBgColorMode() === CM_P256 && cell.getBgColor() < 16);
      // A link's cells: the addon underlined them all (xterm's view of a link), the overlay writes what the program did.
      if (!specialUnderline && !lowPalette && linkOf(cell) === 0) continue;
      out += `\x1b[${y + 1};${x + 1}H${renditionSgr(cell)}${cell.getChars() || ' '}`;
    }
  }
  return out === '' ? '' : out + renditionSgr(pen);
}

/**
 * Bytes that write the last cell of visible row `y` again (a wide character from its first column), in its
 * rendition, then set `pen`: what leaves a terminal's cursor in the pending-wrap state the program's is in.
 * Null when the pen cannot be read.
 */
export function lastCellRewrite(buffer: IBuffer, y: number, cols: number, pen: Rendition | null): { col: number; bytes: string } | null {
  const line = buffer.getLine(buffer.baseY + y);
  if (pen === null || line === undefined) return null;
  const cell = buffer.getNullCell();
  let col = cols - 1;
  if (line.getCell(col, cell)?.getWidth() === 0 && col > 0) col--;
  if (line.getCell(col, cell) === undefined) return null;
  return { col, bytes: renditionSgr(cell) + (cell.getChars() || ' ') + renditionSgr(pen) };
}
