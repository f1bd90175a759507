/**
 * The characters text from the container never carries to the operator as they are, the one definition
 * for every place that shows or stores such text: control characters (C0, DEL, C1), format characters (bidi
 * marks, embeddings, overrides and isolates, zero-width characters, the BOM, tag characters: they reorder
 * or hide text, so `evil\u202egnp.exe` reads as `evilexe.png`), and the line and paragraph separators.
 * inertText shows them as escapes; sanitizeExportName (host/platform/sanitize-name.ts) drops them from file names.
 * Global: use it with replace or matchAll (test() would depend on lastIndex).
 */
export const UNSAFE_CHARS = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/gu;

/**
 * Makes text that came from the container (file names, URLs, reasons) safe to draw on the operator's
 * terminal: every UNSAFE_CHARS character becomes a visible escape (`\x1b`, `\n`, `\u202e`), so no escape
 * sequence, bell, line break or reordering can reach the terminal, and the result is cut to `maxColumns`
 * characters.
 */
export function inertText(s: string, maxColumns = 200): string {
  const escaped = s.replace(UNSAFE_CHARS, (c) => {
    const code = c.codePointAt(0)!;
    if (c === '\n') return '\\n';
    if (c === '\r') return '\\r';
    if (c === '\t') return '\\t';
    if (code <= 0xff) return `\\x${code.toString(16).padStart(2, '0')}`;
    return code <= 0xffff ? `\\u${code.toString(16).padStart(4, '0')}` : `\\u{${code.toString(16)}}`;
  });
  return cutColumns(escaped, maxColumns);
}

/** Nonspacing and enclosing marks: drawn over the character before them, in no column of their own. */
const COMBINING = /^[\p{Mn}\p{Me}]$/u;
/** Emoji drawn as pictures by default: two columns, as glibc's wcwidth and terminals count them (U+2705, U+231A). */
const EMOJI_PRESENTATION = /^\p{Emoji_Presentation}$/u;

/** Display width of one code point: 2 for East Asian wide/fullwidth and emoji ranges, 0 for combining marks. */
export function charWidth(cp: number): number {
  if (cp === 0) return 0;
  if (cp < 0x300) return 1;
  // Every combining mark, not only U+0300-036F: a decomposed (NFD) Japanese name carries U+3099/U+309A,
  // which sit in the wide range below and were counted two columns each.
  if ((cp >= 0x200b && cp <= 0x200f) || (cp >= 0xfe00 && cp <= 0xfe0f) || (cp >= 0x1160 && cp <= 0x11ff) || COMBINING.test(String.fromCodePoint(cp))) return 0;
  if (
    (cp >= 0x1100 && cp <= 0x115f) ||
    (cp >= 0x2e80 && cp <= 0xa4cf && cp !== 0x303f) ||
    (cp >= 0xac00 && cp <= 0xd7a3) ||
    (cp >= 0xf900 && cp <= 0xfaff) ||
    (cp >= 0xfe30 && cp <= 0xfe4f) ||
    (cp >= 0xff00 && cp <= 0xff60) ||
    (cp >= 0xffe0 && cp <= 0xffe6) ||
    (cp >= 0x1f300 && cp <= 0x1faff) ||
    (cp >= 0x20000 && cp <= 0x3fffd) ||
    EMOJI_PRESENTATION.test(String.fromCodePoint(cp))
  ) {
    return 2;
  }
  return 1;
}

export function textWidth(s: string): number {
  let w = 0;
  for (const ch of s) w += charWidth(ch.codePointAt(0)!);
  return w;
}

/** Cuts `s` to at most `max` display columns, ending with `…` when cut. */
export function cutColumns(s: string, max: number): string {
  if (textWidth(s) <= max) return s;
  let out = '';
  let w = 0;
  for (const ch of s) {
    const cw = charWidth(ch.codePointAt(0)!);
    if (w + cw > max - 1) break;
    out += ch;
    w += cw;
  }
  return `${out}…`;
}

/** Pads `s` with spaces to exactly `width` columns (cutting first if needed). */
export function padColumns(s: string, width: number): string {
  const cut = cutColumns(s, width);
  return cut + ' '.repeat(Math.max(0, width - textWidth(cut)));
}

/**
 * One line of JSON for output a terminal may show: the value round-trips exactly through JSON.parse, but no
 * UNSAFE_CHARS character appears raw in the text. JSON.stringify escapes C0 only: DEL, C1 (8-bit CSI, OSC,
 * ST), bidi controls, zero-width and tag characters and the line separators would otherwise reach the
 * terminal as they are, so each is written as its `\\uXXXX` escape (a surrogate pair beyond U+FFFF).
 */
export function inertJson(value: unknown): string {
  return JSON.stringify(value).replace(UNSAFE_CHARS, (c) => {
    let out = '';
    for (let i = 0; i < c.length; i++) out += `\\u${c.charCodeAt(i).toString(16).padStart(4, '0')}`;
    return out;
  });
}
