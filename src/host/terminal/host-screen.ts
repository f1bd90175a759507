/**
 * The host's own view of the operator's screen, for checking what the capsule says is on it (link hints):
 * a text-only model fed with exactly the program output the host wrote to the operator's terminal (after
 * the terminal filter), from the moment it is created. It answers one question: is this text at these
 * cells, for certain? Every cell starts unknown; a cell becomes known only when bytes the host wrote put
 * something there that every terminal draws the same way. So it fails closed:
 * - the cursor, the modes and the active screen are unknown until the bytes set them (a repaint starts by
 *   choosing the normal screen, a soft reset, a home and a clear, which makes everything known);
 * - a character whose width terminals disagree on (emoji, newer characters than a terminal's table, flags,
 *   variation selectors, joiners, unassigned code points...) is unknown, and so is every cell written after
 *   it until an absolute move: the operator's terminal may have put them elsewhere (13 × U+1FAE8 take 26
 *   columns in a newer table and none in tmux on glibc 2.36). When such a drift could reach the end of
 *   the row, the row itself is unknown too until an absolute move, and anything that could then move or
 *   erase rows makes the whole screen unknown;
 * - a sequence it does not model (rectangle operations, graphics, double-width lines, left and right
 *   margins) makes the whole screen unknown.
 * Attributes are not kept: only text, and the OSC 8 target each cell was written under. Pure: no I/O.
 */

/** A cell: its text (a wide character's second cell is ''), or null when not known for certain. */
type CellText = string | null;

interface Buffer2 {
  text: CellText[];
  link: (string | null)[];
  saved: Saved | null;
}

interface Saved {
  x: number;
  y: number;
  slack: number;
  rowLost: boolean;
  origin: boolean;
  g0: boolean;
  g1: boolean;
}

/** Longest OSC kept (an OSC 8 target); a longer one is skipped and its link unknown. */
const MAX_OSC = 16 * 1024;
/** Longest CSI parameter string kept. */
const MAX_CSI = 256;

// Widths every terminal agrees on: printable ASCII, Latin, Greek, Cyrillic, common punctuation and symbols
// (narrow); Hangul, CJK and fullwidth forms (wide). Anything else is uncertain. Box drawing and other East
// Asian Ambiguous characters count as narrow, as in every terminal not set to draw them wide.
const NARROW: ReadonlyArray<readonly [number, number]> = [
  [0x20, 0x7e],
  [0xa0, 0xac],
  [0xae, 0x2ff],
  [0x370, 0x377],
  [0x37a, 0x37f],
  [0x384, 0x38a],
  [0x38c, 0x38c],
  [0x38e, 0x3a1],
  [0x3a3, 0x482],
  [0x48a, 0x52f],
  [0x1e00, 0x1fff],
  [0x2010, 0x2027],
  [0x2030, 0x205e],
  [0x2070, 0x20c0],
  [0x2100, 0x2bff],
];
const WIDE: ReadonlyArray<readonly [number, number]> = [
  [0x1100, 0x115f],
  [0x2e80, 0x3029],
  [0x3030, 0x303e],
  [0x3041, 0x3096],
  [0x309b, 0x33ff],
  [0x3400, 0x4dbf],
  [0x4e00, 0x9fff],
  [0xa000, 0xa4cf],
  [0xac00, 0xd7a3],
  [0xf900, 0xfaff],
  [0xfe30, 0xfe4f],
  [0xff01, 0xff60],
  [0xffe0, 0xffe6],
  [0x20000, 0x2fffd],
  [0x30000, 0x3fffd],
];
// Emoji drawn as emoji by default (two columns in newer tables, one in older ones), flags, skin tones,
// marks and joiners (which terminals join differently), and code points unassigned in Node's Unicode
// (newer than it, so newer than some terminal's table too). Pictographs drawn as text by default (✔ ⏺ ❤)
// are one column everywhere, unless a variation selector follows (a mark: uncertain itself).
// Compiled at first use: a session that never lists links does not carry it.
let unsure: RegExp | undefined;
const UNSURE_SOURCE = '[\\p{Emoji_Presentation}\\p{Regional_Indicator}\\p{Emoji_Modifier}\\p{Cn}\\p{Co}\\p{Cf}\\p{Mn}\\p{Me}\\p{Cs}]';

function inRanges(cp: number, ranges: ReadonlyArray<readonly [number, number]>): boolean {
  for (const [a, b] of ranges) if (cp >= a && cp <= b) return true;
  return false;
}

/** Columns a character takes, when every terminal agrees; null when they may not. Pure. */
export function certainWidth(cp: number): 1 | 2 | null {
  if (cp >= 0x20 && cp <= 0x7e) return 1;
  unsure ??= new RegExp(UNSURE_SOURCE, 'u');
  if (unsure.test(String.fromCodePoint(cp))) return null;
  if (inRanges(cp, NARROW)) return 1;
  if (inRanges(cp, WIDE)) return 2;
  return null;
}

export class HostScreen {
  readonly #size: number;
  readonly #main: Buffer2;
  readonly #alt: Buffer2;
  /** Which screen is active: unknown until the bytes choose one. */
  #screen: Buffer2 | null = null;
  #x = 0;
  #y = 0;
  /** How far left of `x` the operator's terminal's column may be (characters of uncertain width since an absolute move). */
  #slack: number;
  /** The operator's terminal's row may differ from `y`. */
  #rowLost = true;
  #pendingWrap = false;
  /** Modes, unknown (null) until a reset sets them. */
  #autowrap: boolean | null = null;
  #origin: boolean | null = null;
  #insert: boolean | null = null;
  #lnm = false;
  #marginsLR = false;
  /** G0 and G1 are ASCII (false: another set, whose glyphs are not the bytes); `shifted`: G1 is in use. */
  #g0 = true;
  #g1 = true;
  #shifted = false;
  #top = 0;
  #bottom: number;
  /**
   * The scroll region is not known: terminals keep it across a switch of screens or give each screen its own
   * (xterm). Whatever scrolls or stops at a margin then loses the screen, until the next DECSTBM.
   */
  #regionLost = false;
  #tabs: Set<number> | null;
  #link: string | null = null;
  /** The last character written, for REP; null when unknown. */
  #last: { ch: string; w: 1 | 2 } | null = null;
  // The parser's state.
  #st: 'ground' | 'esc' | 'escInt' | 'csi' | 'osc' | 'str' | 'strEsc' | 'oscEsc' = 'ground';
  #seq = '';
  #dcs = false;
  readonly #decoder = new TextDecoder('utf-8');

  constructor(
    readonly rows: number,
    readonly cols: number,
  ) {
    this.#size = rows * cols;
    this.#main = this.#newBuffer();
    this.#alt = this.#newBuffer();
    this.#slack = cols;
    this.#bottom = rows - 1;
    this.#tabs = this.#defaultTabs();
  }

  /** Bytes the host wrote to the operator's terminal as program output. */
  write(bytes: Uint8Array): void {
    const s = this.#decoder.decode(bytes, { stream: true });
    for (const ch of s) this.#feed(ch);
  }

  /**
   * The text at `count` cells from (row, col) in reading order (continuing on the next rows), wide
   * characters once; null when any of those cells is not known for certain.
   */
  text(row: number, col: number, count: number): string | null {
    const b = this.#screen;
    if (b === null || !this.#inside(row, col) || count < 1) return null;
    let out = '';
    const start = row * this.cols + col;
    if (b.text[start] === '') return null; // the second half of a wide character
    for (let i = start; i < start + count; i++) {
      if (i >= this.#size) return null;
      const t = b.text[i];
      if (t === null || t === undefined) return null;
      out += t;
    }
    return out;
  }

  /** The OSC 8 target the cell was written under (null: none, or not known). */
  hyperlink(row: number, col: number): string | null {
    const b = this.#screen;
    if (b === null || !this.#inside(row, col)) return null;
    return b.link[row * this.cols + col] ?? null;
  }

  #inside(row: number, col: number): boolean {
    return Number.isInteger(row) && Number.isInteger(col) && row >= 0 && col >= 0 && row < this.rows && col < this.cols;
  }

  #newBuffer(): Buffer2 {
    return { text: new Array<CellText>(this.#size).fill(null), link: new Array<string | null>(this.#size).fill(null), saved: null };
  }

  #defaultTabs(): Set<number> {
    const t = new Set<number>();
    for (let c = 8; c < this.cols; c += 8) t.add(c);
    return t;
  }

  /** Everything on the active screen (or both, when which one is active is not known) becomes unknown. */
  #lose(): void {
    for (const b of this.#screen === null ? [this.#main, this.#alt] : [this.#screen]) {
      b.text.fill(null);
      b.link.fill(null);
    }
  }

  #loseRow(y: number): void {
    const b = this.#screen;
    if (b === null) return;
    b.text.fill(null, y * this.cols, (y + 1) * this.cols);
  }

  /** The cursor's column is not known: every cell written from here until an absolute move is unknown. */
  get #columnKnown(): boolean {
    return this.#slack === 0 && !this.#rowLost && this.#screen !== null && this.#autowrap !== null;
  }

  #feed(ch: string): void {
    const cp = ch.codePointAt(0)!;
    switch (this.#st) {
      case 'ground':
        if (cp === 0x1b) {
          this.#st = 'esc';
          this.#seq = '';
        } else if (cp < 0x20 || cp === 0x7f) this.#control(cp);
        else if (cp >= 0x80 && cp <= 0x9f)
          this.#lose(); // the filter writes C1 in 7-bit form: never here
        else this.#print(ch, cp);
        return;
      case 'esc':
        if (cp === 0x5b) {
          this.#st = 'csi';
          this.#seq = '';
        } else if (cp === 0x5d) {
          this.#st = 'osc';
          this.#seq = '';
        } else if (cp === 0x50 || cp === 0x58 || cp === 0x5e || cp === 0x5f) {
          // DCS, SOS, PM, APC: graphics (sixel, kitty) may cover cells; other strings change nothing drawn.
          this.#dcs = cp === 0x50 || cp === 0x5f;
          this.#st = 'str';
        } else if (cp >= 0x20 && cp <= 0x2f) {
          this.#seq = ch;
          this.#st = 'escInt';
        } else {
          this.#st = 'ground';
          this.#esc(ch);
        }
        return;
      case 'escInt':
        if (cp >= 0x20 && cp <= 0x2f) {
          this.#seq += ch;
          return;
        }
        this.#st = 'ground';
        this.#escIntermediate(this.#seq, ch);
        return;
      case 'csi':
        if (cp >= 0x40 && cp <= 0x7e) {
          this.#st = 'ground';
          this.#csi(this.#seq, ch);
        } else if (cp === 0x1b || cp < 0x20) {
          // A control inside a CSI: terminals differ; nothing is certain after it.
          this.#st = cp === 0x1b ? 'esc' : 'ground';
          this.#lose();
        } else if (this.#seq.length < MAX_CSI) this.#seq += ch;
        else {
          this.#st = 'ground';
          this.#lose();
        }
        return;
      case 'osc':
        if (cp === 0x07) {
          this.#st = 'ground';
          this.#osc(this.#seq);
        } else if (cp === 0x1b) this.#st = 'oscEsc';
        else if (this.#seq.length < MAX_OSC) this.#seq += ch;
        else this.#seq = '\0'; // too long: not a target the host knows
        return;
      case 'oscEsc':
        this.#st = 'ground';
        if (ch === '\\') this.#osc(this.#seq);
        else {
          this.#lose();
          this.#feed(ch);
        }
        return;
      case 'str':
        if (cp === 0x1b) this.#st = 'strEsc';
        else if (cp === 0x07 && !this.#dcs) this.#st = 'ground';
        return;
      case 'strEsc':
        if (ch === '\\') {
          this.#st = 'ground';
          if (this.#dcs) this.#lose();
        } else this.#st = 'str';
        return;
    }
  }

  /**
   * A cursor operation while a wrap is pending (the last column written): terminals differ on where the
   * cursor then is (the last column or past it) and whether the next character still wraps.
   */
  #unsettleWrap(): void {
    if (!this.#pendingWrap) return;
    this.#pendingWrap = false;
    this.#slack = this.cols;
    this.#rowLost = true;
  }

  #control(cp: number): void {
    if (cp === 0x08 || cp === 0x09) this.#unsettleWrap();
    else if (cp >= 0x0a && cp <= 0x0c && this.#pendingWrap) this.#slack = this.cols; // down a row, the column not known
    switch (cp) {
      case 0x08: // BS
        if (this.#x > 0) this.#x -= 1;
        this.#pendingWrap = false;
        return;
      case 0x09: // HT
        this.#tab(1);
        return;
      case 0x0a:
      case 0x0b:
      case 0x0c:
        this.#lineFeed();
        if (this.#lnm) this.#carriageReturn();
        return;
      case 0x0d:
        this.#carriageReturn();
        return;
      case 0x0e:
        this.#shifted = true;
        return;
      case 0x0f:
        this.#shifted = false;
        return;
      default:
        return; // BEL and the rest draw nothing
    }
  }

  #carriageReturn(): void {
    this.#x = 0;
    this.#pendingWrap = false;
    this.#slack = 0;
  }

  #tab(n: number): void {
    if (this.#tabs === null) this.#slack = this.cols;
    else if (this.#slack > 0) this.#slack += 8 * n; // from a column up to `slack` left, the next stop may be nearer
    for (let i = 0; i < n; i++) {
      let c = this.#x + 1;
      while (c < this.cols - 1 && !(this.#tabs?.has(c) ?? false)) c++;
      this.#x = Math.min(c, this.cols - 1);
    }
    this.#pendingWrap = false;
  }

  /** A move that depends on the scroll region while it is not known: the cursor's row and the cells are not either. */
  #regionUnknown(): boolean {
    if (!this.#regionLost) return false;
    this.#lose();
    this.#slack = this.cols;
    this.#rowLost = true;
    return true;
  }

  /** Down one row, scrolling the region at its bottom. */
  #lineFeed(): void {
    this.#pendingWrap = false;
    if (this.#regionUnknown()) return;
    if (this.#rowLost) {
      // The terminal's row is not ours: whether and where it scrolled is not known.
      this.#lose();
      this.#y = Math.min(this.#y + 1, this.rows - 1);
      return;
    }
    if (this.#y === this.#bottom) this.#scrollUp(this.#top, this.#bottom, 1);
    else if (this.#y < this.rows - 1) this.#y += 1;
  }

  #reverseIndex(): void {
    this.#pendingWrap = false;
    if (this.#regionUnknown()) return;
    if (this.#rowLost) {
      this.#lose();
      return;
    }
    if (this.#y === this.#top) this.#scrollDown(this.#top, this.#bottom, 1);
    else if (this.#y > 0) this.#y -= 1;
  }

  #scrollUp(top: number, bottom: number, n: number): void {
    const b = this.#screen;
    if (b === null) return this.#lose();
    n = Math.min(n, bottom - top + 1);
    const c = this.cols;
    b.text.copyWithin(top * c, (top + n) * c, (bottom + 1) * c);
    b.link.copyWithin(top * c, (top + n) * c, (bottom + 1) * c);
    b.text.fill(' ', (bottom + 1 - n) * c, (bottom + 1) * c);
    b.link.fill(null, (bottom + 1 - n) * c, (bottom + 1) * c);
  }

  #scrollDown(top: number, bottom: number, n: number): void {
    const b = this.#screen;
    if (b === null) return this.#lose();
    n = Math.min(n, bottom - top + 1);
    const c = this.cols;
    b.text.copyWithin((top + n) * c, top * c, (bottom + 1 - n) * c);
    b.link.copyWithin((top + n) * c, top * c, (bottom + 1 - n) * c);
    b.text.fill(' ', top * c, (top + n) * c);
    b.link.fill(null, top * c, (top + n) * c);
  }

  #print(ch: string, cp: number): void {
    const b = this.#screen;
    const sure = certainWidth(cp);
    const ascii = this.#shifted ? this.#g1 : this.#g0;
    // A character another set draws (line drawing for `q`) is not the byte: unknown, one column.
    const glyphKnown = ascii || cp < 0x5f || cp > 0x7e;
    // An uncertain character counts two columns, the most any terminal gives it: the terminal's column is
    // then never right of ours, so it cannot wrap where the model does not (the model's wrap loses the row).
    const w: 1 | 2 = sure ?? 2;
    if (this.#pendingWrap) {
      if (this.#autowrap === true) this.#wrap();
      else if (this.#autowrap === null) {
        this.#slack = this.cols;
        this.#rowLost = true;
      }
      this.#pendingWrap = false;
    }
    if (this.#x + w > this.cols) {
      if (this.#autowrap === true) this.#wrap();
      else this.#x = Math.max(0, this.cols - w);
    }
    const known = this.#columnKnown && sure !== null && glyphKnown;
    // Written where the terminal's cursor may be: on any row (the whole screen), or up to `slack` columns
    // left of ours on this row.
    if (this.#rowLost) this.#lose();
    else if (this.#slack > 0 && b !== null) b.text.fill(null, this.#y * this.cols + Math.max(0, this.#x - this.#slack), this.#y * this.cols + this.#x);
    if (b !== null) {
      const at = this.#y * this.cols + this.#x;
      if (this.#insert === true) this.#shiftRight(this.#x, w);
      else if (this.#insert === null) this.#loseRow(this.#y);
      // Over half of a wide character: the terminal blanks its other half.
      if (b.text[at] === '' && this.#x > 0 && b.text[at - 1] !== null) b.text[at - 1] = ' ';
      const end = at + w;
      if (this.#x + w < this.cols && b.text[end] === '' && b.text[end - 1] !== null) b.text[end] = ' ';
      b.text[at] = known ? ch : null;
      b.link[at] = this.#link;
      if (w === 2) {
        b.text[at + 1] = known ? '' : null;
        b.link[at + 1] = this.#link;
      }
    }
    this.#last = known ? { ch, w } : null;
    if (sure === null) this.#slack += 2;
    this.#x += w;
    if (this.#x >= this.cols) {
      this.#x = this.cols - 1;
      this.#pendingWrap = true;
    }
  }

  #wrap(): void {
    if (this.#slack > 0) this.#rowLost = true;
    this.#x = 0;
    this.#lineFeed();
    // The column after a wrap is known only if the terminal wrapped here too.
  }

  #shiftRight(x: number, n: number): void {
    const b = this.#screen;
    if (b === null) return;
    if (!this.#columnKnown) return this.#loseRow(this.#y);
    const rowStart = this.#y * this.cols;
    const rowEnd = rowStart + this.cols;
    b.text.copyWithin(rowStart + x + n, rowStart + x, rowEnd - n);
    b.link.copyWithin(rowStart + x + n, rowStart + x, rowEnd - n);
  }

  /** Erases cells [from, to) of the active screen (absolute cell indexes) to blanks. */
  #erase(from: number, to: number): void {
    const b = this.#screen;
    if (b === null) return this.#lose();
    b.text.fill(' ', from, to);
    b.link.fill(null, from, to);
    this.#mendRow(b, Math.floor(from / this.cols));
    if (to > from) this.#mendRow(b, Math.floor((to - 1) / this.cols));
  }

  /** A wide character one of whose halves was erased, shifted or pushed off its row is gone whole, as in terminals. */
  #mendRow(b: Buffer2, y: number): void {
    const start = y * this.cols;
    const end = start + this.cols;
    const wideHead = (t: CellText | undefined): boolean => t !== null && t !== undefined && t !== '' && certainWidth(t.codePointAt(0)!) === 2;
    for (let i = start; i < end; i++) {
      const t = b.text[i];
      if (t === '' && !(i > start && wideHead(b.text[i - 1]))) b.text[i] = ' ';
      else if (wideHead(t) && (i + 1 >= end || b.text[i + 1] !== '')) b.text[i] = ' ';
    }
  }

  /** An operation at the cursor's column: when the column or row is not known, what it touched is not either. */
  #atCursor(rowOnly: boolean, op: () => void): void {
    if (this.#rowLost || this.#screen === null) return this.#lose();
    if (!rowOnly && this.#slack > 0) {
      op();
      this.#loseRow(this.#y);
      return;
    }
    op();
  }

  #params(p: string): number[] {
    return p.split(';').map((v) => (v === '' ? 0 : Number.parseInt(v.split(':')[0]!, 10) || 0));
  }

  #moveTo(row: number | null, col: number | null): void {
    if (row !== null) {
      const base = this.#origin === true ? this.#top : 0;
      const max = this.#origin === true ? this.#bottom : this.rows - 1;
      this.#y = Math.min(Math.max(base + row, base), max);
      this.#rowLost = this.#origin === null || (this.#origin === true && this.#regionLost);
    }
    if (col !== null) {
      this.#x = Math.min(Math.max(col, 0), this.cols - 1);
      this.#slack = 0;
    }
    this.#pendingWrap = false;
  }

  #csi(raw: string, final: string): void {
    // Sequences that draw nothing or set the cursor anew leave a pending wrap to the character after them.
    if (this.#pendingWrap) {
      if ('Hf'.includes(final) && raw.charCodeAt(0) < 0x3c) this.#pendingWrap = false;
      else if ('G`'.includes(final) && raw.charCodeAt(0) < 0x3c) this.#pendingWrap = false;
      else if (!('mnctqhlp'.includes(final) || raw.includes(' ') || raw.startsWith('>') || raw.startsWith('<') || raw.startsWith('='))) this.#unsettleWrap();
    }
    this.#csiDispatch(raw, final);
  }

  #csiDispatch(raw: string, final: string): void {
    const marker = raw !== '' && raw.charCodeAt(0) >= 0x3c && raw.charCodeAt(0) <= 0x3f ? raw[0]! : '';
    let body = marker === '' ? raw : raw.slice(1);
    const interAt = body.search(/[\x20-\x2f]/);
    const inter = interAt < 0 ? '' : body.slice(interAt);
    if (interAt >= 0) body = body.slice(0, interAt);
    const ps = this.#params(body);
    const n = Math.max(1, ps[0] ?? 0);
    if (inter !== '') {
      if (inter === '!' && final === 'p' && marker === '') return this.#softReset();
      if ((inter === ' ' && final === 'q') || (inter === '"' && final === 'q')) return; // cursor style, protection
      return this.#lose();
    }
    if (marker === '?') {
      if (final === 'h' || final === 'l') return this.#decModes(ps, final === 'h');
      if (final === 'J') return this.#eraseDisplay(ps[0] ?? 0);
      if (final === 'K') return this.#eraseLine(ps[0] ?? 0);
      if (final === 'n' || final === 'u' || final === 'c' || final === 'm' || final === 'p') return;
      return this.#lose();
    }
    if (marker !== '') {
      // Keyboard protocol pushes and pops, reports: nothing drawn.
      if ('umcqnp'.includes(final)) return;
      return this.#lose();
    }
    switch (final) {
      case 'm':
      case 'n':
      case 'c':
      case 't':
      case 'q':
        return;
      case 'A':
        if (this.#regionUnknown()) return;
        this.#pendingWrap = false;
        if (this.#rowLost) return;
        this.#y = Math.max(this.#y >= this.#top ? this.#top : 0, this.#y - n);
        return;
      case 'B':
      case 'e':
        if (this.#regionUnknown()) return;
        this.#pendingWrap = false;
        if (this.#rowLost) return;
        this.#y = Math.min(this.#y <= this.#bottom ? this.#bottom : this.rows - 1, this.#y + n);
        return;
      case 'C':
      case 'a':
        this.#x = Math.min(this.cols - 1, this.#x + n);
        this.#pendingWrap = false;
        return;
      case 'D':
        this.#x = Math.max(0, this.#x - n);
        this.#pendingWrap = false;
        return;
      case 'E':
      case 'F':
        if (this.#regionUnknown()) return;
        if (!this.#rowLost)
          this.#y =
            final === 'E'
              ? Math.min(this.#y <= this.#bottom ? this.#bottom : this.rows - 1, this.#y + n)
              : Math.max(this.#y >= this.#top ? this.#top : 0, this.#y - n);
        this.#carriageReturn();
        return;
      case 'G':
      case '`':
        return this.#moveTo(null, n - 1);
      case 'H':
      case 'f':
        return this.#moveTo(Math.max(1, ps[0] ?? 0) - 1, Math.max(1, ps[1] ?? 0) - 1);
      case 'd':
        return this.#moveTo(n - 1, null);
      case 'I':
        return this.#tab(n);
      case 'Z':
        for (let i = 0; i < n; i++) {
          let c = this.#x - 1;
          while (c > 0 && !(this.#tabs?.has(c) ?? false)) c--;
          this.#x = Math.max(0, c);
        }
        if (this.#tabs === null) this.#slack = this.cols;
        this.#pendingWrap = false;
        return;
      case 'J':
        return this.#eraseDisplay(ps[0] ?? 0);
      case 'K':
        return this.#eraseLine(ps[0] ?? 0);
      case 'X':
        return this.#atCursor(false, () => {
          const at = this.#y * this.cols + this.#x;
          this.#erase(at, Math.min(at + n, (this.#y + 1) * this.cols));
        });
      case '@':
      case 'P':
        return this.#atCursor(false, () => {
          const b = this.#screen!;
          const rowStart = this.#y * this.cols;
          const rowEnd = rowStart + this.cols;
          const at = rowStart + this.#x;
          const k = Math.min(n, rowEnd - at);
          if (final === '@') {
            b.text.copyWithin(at + k, at, rowEnd - k);
            b.link.copyWithin(at + k, at, rowEnd - k);
            this.#erase(at, at + k);
          } else {
            b.text.copyWithin(at, at + k, rowEnd);
            b.link.copyWithin(at, at + k, rowEnd);
            this.#erase(rowEnd - k, rowEnd);
          }
          this.#mendRow(b, this.#y);
        });
      case 'L':
      case 'M':
        if (this.#regionUnknown()) return;
        if (this.#rowLost) return this.#lose();
        if (this.#y >= this.#top && this.#y <= this.#bottom) {
          if (final === 'L') this.#scrollDown(this.#y, this.#bottom, n);
          else this.#scrollUp(this.#y, this.#bottom, n);
        }
        // Terminals differ on where the cursor's column goes.
        this.#slack = this.cols;
        return;
      case 'S':
        if (this.#regionUnknown()) return;
        return this.#scrollUp(this.#top, this.#bottom, n);
      case 'T':
        if (this.#regionUnknown()) return;
        return this.#scrollDown(this.#top, this.#bottom, n);
      case 'b':
        if (this.#last === null) {
          this.#slack = this.cols;
          this.#rowLost = true;
          return this.#lose();
        }
        for (let i = 0; i < Math.min(n, this.#size); i++) this.#print(this.#last.ch, this.#last.ch.codePointAt(0)!);
        return;
      case 'g':
        this.#tabs = null; // cleared tab stops: where a tab goes is not followed
        return;
      case 'r': {
        const t = Math.max(1, ps[0] ?? 0) - 1;
        const bt = (ps[1] ?? 0) === 0 ? this.rows - 1 : Math.min(this.rows - 1, (ps[1] ?? 0) - 1);
        if (t < bt) {
          this.#top = t;
          this.#bottom = bt;
          this.#regionLost = false;
        }
        return this.#moveTo(0, 0);
      }
      case 's':
        if (this.#marginsLR) return this.#lose();
        return this.#saveCursor();
      case 'u':
        return this.#restoreCursor();
      case 'h':
      case 'l':
        for (const p of ps) {
          if (p === 4) this.#insert = final === 'h';
          else if (p === 20) this.#lnm = final === 'h';
        }
        return;
      default:
        return this.#lose();
    }
  }

  /**
   * True once the bytes made the whole screen known: a screen chosen, the modes reset, the cursor placed,
   * then a full clear (a repaint starts so). What is written after it is known cell by cell, as above.
   */
  get ready(): boolean {
    return this.#cleared;
  }

  #cleared = false;

  #eraseDisplay(mode: number): void {
    const c = this.cols;
    if (mode === 2) {
      this.#erase(0, this.#size);
      if (this.#screen !== null && this.#autowrap !== null && this.#origin !== null && this.#insert !== null) this.#cleared = true;
      return;
    }
    if (mode === 3) return;
    this.#atCursor(false, () => {
      const at = this.#y * c + this.#x;
      if (mode === 0) this.#erase(at, this.#size);
      else if (mode === 1) this.#erase(0, Math.min(at + 1, this.#size));
    });
  }

  #eraseLine(mode: number): void {
    const c = this.cols;
    const rowStart = this.#y * c;
    this.#atCursor(mode === 2, () => {
      const at = rowStart + this.#x;
      if (mode === 0) this.#erase(at, rowStart + c);
      else if (mode === 1) this.#erase(rowStart, at + 1);
      else if (mode === 2) this.#erase(rowStart, rowStart + c);
    });
  }

  #decModes(ps: number[], set: boolean): void {
    for (const p of ps) {
      switch (p) {
        case 6:
          this.#origin = set;
          this.#moveTo(0, 0);
          break;
        case 7:
          this.#autowrap = set;
          break;
        case 69:
          this.#marginsLR = set;
          if (set) this.#lose();
          break;
        case 47:
        case 1047:
        case 1049: {
          // Already there (or not known): terminals differ on whether 1049 then saves, restores or clears
          // anything, so the cursor, and the alternate screen's cells on a second 1049h, are not known.
          if (this.#screen === (set ? this.#alt : this.#main) || (this.#screen === null && p === 1049)) {
            if (p === 1049) {
              if (set) this.#lose();
              this.#screen ??= set ? this.#alt : this.#main;
              this.#slack = this.cols;
              this.#rowLost = true;
            } else this.#screen ??= set ? this.#alt : this.#main;
            break;
          }
          if (p === 1049 && set) this.#saveCursor();
          if (this.#top !== 0 || this.#bottom !== this.rows - 1) this.#regionLost = true;
          this.#screen = set ? this.#alt : this.#main;
          if (set && p === 1049) this.#erase(0, this.#size);
          if (!set && p === 1049) this.#restoreCursor();
          if (p === 1047 && !set) {
            this.#alt.text.fill(' ');
            this.#alt.link.fill(null);
          }
          break;
        }
        case 3:
          this.#lose(); // 132/80 columns
          break;
        default:
          break;
      }
    }
  }

  #softReset(): void {
    this.#autowrap = true;
    this.#origin = false;
    this.#insert = false;
    this.#g0 = true;
    this.#g1 = true;
    this.#shifted = false;
    this.#top = 0;
    this.#bottom = this.rows - 1;
    this.#regionLost = false;
    this.#pendingWrap = false;
    if (this.#screen !== null) this.#screen.saved = { x: 0, y: 0, slack: 0, rowLost: false, origin: false, g0: true, g1: true };
  }

  #saveCursor(): void {
    if (this.#screen === null) return;
    this.#screen.saved = { x: this.#x, y: this.#y, slack: this.#slack, rowLost: this.#rowLost, origin: this.#origin === true, g0: this.#g0, g1: this.#g1 };
  }

  #restoreCursor(): void {
    const s = this.#screen?.saved ?? null;
    if (s === null) {
      // Nothing saved that the host saw: where the terminal puts the cursor is not known.
      this.#slack = this.cols;
      this.#rowLost = true;
      return;
    }
    this.#x = s.x;
    this.#y = s.y;
    this.#slack = s.slack;
    this.#rowLost = s.rowLost;
    this.#g0 = s.g0;
    this.#g1 = s.g1;
    this.#pendingWrap = false;
  }

  #esc(ch: string): void {
    if (ch !== 'c' && ch !== '=' && ch !== '>' && ch !== '\\') this.#unsettleWrap();
    switch (ch) {
      case '7':
        return this.#saveCursor();
      case '8':
        return this.#restoreCursor();
      case 'D':
        return this.#lineFeed();
      case 'E':
        this.#lineFeed();
        return this.#carriageReturn();
      case 'M':
        return this.#reverseIndex();
      case 'H':
        if (this.#slack > 0) this.#tabs = null;
        else this.#tabs?.add(this.#x);
        return;
      case 'c':
        return this.#fullReset();
      case '=':
      case '>':
      case '\\':
        return;
      default:
        return this.#lose();
    }
  }

  #escIntermediate(inter: string, final: string): void {
    if (inter === '(' || inter === ')') {
      const ascii = final === 'B';
      if (inter === '(') this.#g0 = ascii;
      else this.#g1 = ascii;
      return;
    }
    if (inter === '#' && final === '8') {
      // DECALN: the screen filled with E.
      if (this.#screen === null) return this.#lose();
      this.#screen.text.fill('E');
      this.#screen.link.fill(null);
      return;
    }
    if (inter === '#' && final === '5') return;
    if (inter === '*' || inter === '+') return; // G2, G3: only single shifts reach them, and those lose the screen
    this.#lose();
  }

  #fullReset(): void {
    this.#main.text.fill(' ');
    this.#main.link.fill(null);
    this.#main.saved = null;
    this.#alt.text.fill(' ');
    this.#alt.link.fill(null);
    this.#alt.saved = null;
    this.#screen = this.#main;
    this.#softReset();
    this.#lnm = false;
    this.#marginsLR = false;
    this.#tabs = this.#defaultTabs();
    this.#link = null;
    this.#moveTo(0, 0);
    this.#rowLost = false;
    this.#cleared = true;
  }

  #osc(body: string): void {
    if (body === '\0') {
      this.#link = null; // too long to keep (the filter drops such a hyperlink)
      return;
    }
    if (!body.startsWith('8;')) return;
    const rest = body.slice(2);
    const semi = rest.indexOf(';');
    if (semi < 0) {
      this.#link = null;
      return;
    }
    const uri = rest.slice(semi + 1);
    this.#link = uri === '' ? null : uri;
  }
}
