/**
 * Where a screen model may start parsing a flood and still end with the same screen.
 *
 * A program that floods its terminal (a build log, a test run, `cat` of a big file) sends mostly lines of
 * text, often coloured. Of those, only the last screenful can still be seen; parsing every byte made the
 * capsule's model the most expensive part of relaying such a flood. A batch of output may be cut when it
 * starts with a run of skippable bytes:
 *  - plain text: every ASCII byte (0x00-0x7F) but ESC, SO and SI. That is the printable characters, DEL
 *    (ignored by the parser), and the C0 controls whose only effect in the model is on the cursor or on
 *    rows the flood pushes out of sight: CR, LF, VT and FF (which act as LF), BS (with reverse wraparound
 *    it may clear the wrap flag of the cursor's row), HT (moves to a tab stop, never sets one), BEL (the
 *    model has no bell listener), NUL, CAN, SUB and the rest, which do nothing. Left out: SO and SI, which
 *    switch the charset in use, and every byte of 0x80 or above (UTF-8, whose decoder carries state, and
 *    C1 controls);
 *  - SGR sequences, `ESC [` parameters (digits, `;`, `:`) `m`: they change only the pen (colours and
 *    attributes). Every other escape sequence (modes, cursor moves, charsets, tab stops, titles, links)
 *    ends the run.
 * Parsing may then start at a CR that is followed, still inside the run, by at least 2 x rows + 1 line
 * feeds (0x0A; VT and FF are not counted), after the run's SGR sequences from its last pen reset on (see
 * FloodCut.pen), and leave the model exactly where parsing all of it would:
 *  - the CR puts the cursor in column 0 either way, so every later line is placed the same;
 *  - the pen at the cut is the same: an SGR whose first parameter is 0 (or empty) starts from the default
 *    pen whatever came before, except the hyperlink (OSC 8, which cannot occur in the run), so the
 *    sequences from the last such reset on set it exactly as all of them did;
 *  - with no scroll region, rows + 1 line feeds scroll every row that was on the screen before the cut out
 *    of sight, and the next `rows` line feeds scroll in fresh rows (blank, in the pen at that point): the
 *    last `rows` rows, the cursor and the wrap state come from the bytes after the cut alone;
 *  - what was skipped could only have reached the scrollback, which the model does not keep (scrollback 0).
 * The caller must check the rest of that argument: everything before the batch is already parsed (so its
 * state is exact), the parser is between sequences where the run starts (a read can end inside one; then
 * the caller parses up to its end first, see sequenceEnd), and no scroll region is set. screen-model.test.ts checks the equivalence on random screens and floods (controls and SGR
 * sequences included) against a model that parses every byte.
 */

import { isAscii } from 'node:buffer';

const ESC = 0x1b;
const SO = 0x0e;
const SI = 0x0f;

// Buffer's indexOf is memchr on any Uint8Array; TypedArray.prototype.includes, what a Uint8Array that is
// not a Buffer would use, loops in C++ about ten times slower.
const bufferIndexOf = Buffer.prototype.indexOf as (this: Uint8Array, value: number, byteOffset?: number) => number;

function has(data: Uint8Array, byte: number): boolean {
  return bufferIndexOf.call(data, byte) !== -1;
}

/** Whether byte `b` is plain text (see above). */
function plain(b: number): boolean {
  return b < 0x80 && b !== ESC && b !== SO && b !== SI;
}

/** Where to start parsing a batch: see the header. */
export interface FloodCut {
  /** Index of the first byte to parse (0: parse it all) in the batch's concatenation (never built). */
  at: number;
  /** SGR sequences to parse before the bytes from `at`, so the pen there is what parsing all would leave. */
  pen: Buffer;
}

const NO_CUT: FloodCut = { at: 0, pen: Buffer.alloc(0) };
/** A cut whose pen would need more than this (SGRs after the last reset) is not taken: everything is parsed. */
export const MAX_PEN_BYTES = 16 * 1024;

/**
 * Where the cut may start parsing the batch made of `chunks` one after the other (see the header). `from`
 * is where xterm's parser is back between sequences (0 unless the batch starts inside one, see
 * sequenceEnd): bytes before it are parsed, and the cut is never before it.
 */
export function floodCut(chunks: readonly Uint8Array[], rows: number, from = 0): FloodCut {
  const run = scanRun(chunks, from);
  const at = lastCut(chunks, run.end, 2 * rows + 1);
  if (at <= from) return NO_CUT;
  // A run with no SGR before the cut (plain text) leaves the pen as it was: nothing to look for.
  if (run.firstEsc < 0 || run.firstEsc >= at) return { at, pen: NO_CUT.pen };
  const pen = penBefore(chunks, run.firstEsc, at);
  return pen === null ? NO_CUT : { at, pen };
}

const bufferLastIndexOf = Buffer.prototype.lastIndexOf as (this: Uint8Array, value: number, byteOffset: number) => number;

/**
 * Index of the first byte of `data` at or after `from` that is neither plain text nor ESC (`data.length`
 * when there is none). A chunk with none, the usual case during a flood, is recognised by native scans
 * (simdutf's ASCII check, then memchr for SO and SI), about four times faster than a JavaScript loop over
 * its words; only a chunk that holds such a byte is walked byte by byte, up to that byte.
 */
export function firstNotPlainOrEsc(data: Uint8Array, from = 0): number {
  const rest = from === 0 ? data : data.subarray(from);
  if (isAscii(rest) && !has(rest, SO) && !has(rest, SI)) return data.length;
  for (let i = from; i < data.length; i++) {
    const b = data[i]!;
    if (b !== ESC && !plain(b)) return i;
  }
  return data.length;
}

// What the forward scan is in: text, just after ESC, or an SGR's parameters (a sequence can span chunks).
const GROUND = 0;
const ESCAPE = 1;
const PARAMS = 2;

/**
 * The end of the skippable run that starts at `from` (an index into the batch): the first byte that is
 * not plain, or the ESC of the first sequence that is not an SGR (or that the batch ends inside); and the
 * first ESC in the run (-1: none). ESCs are found with memchr; only the few bytes of each sequence are
 * looked at one by one.
 */
function scanRun(chunks: readonly Uint8Array[], from: number): { end: number; firstEsc: number } {
  let firstEsc = -1;
  let state = GROUND;
  let seqStart = 0;
  let base = 0;
  for (const c of chunks) {
    const n = c.length;
    let i = from > base ? Math.min(n, from - base) : 0;
    if (i === n) {
      base += n;
      continue;
    }
    const stop = firstNotPlainOrEsc(c, i);
    while (i < n) {
      if (state === GROUND) {
        const e = bufferIndexOf.call(c, ESC, i);
        if (stop < (e < 0 ? n : e)) return { end: base + stop, firstEsc };
        if (e < 0) break;
        seqStart = base + e;
        if (firstEsc < 0) firstEsc = seqStart;
        state = ESCAPE;
        i = e + 1;
        continue;
      }
      const b = c[i]!;
      if (state === ESCAPE) {
        if (b !== 0x5b) return { end: seqStart, firstEsc };
        state = PARAMS;
      } else if (b === 0x6d) {
        state = GROUND;
      } else if (!((b >= 0x30 && b <= 0x39) || b === 0x3b || b === 0x3a)) {
        return { end: seqStart, firstEsc };
      }
      i++;
    }
    base += n;
  }
  // A batch that ends inside a sequence: the run ends before it.
  return { end: state === GROUND ? base : seqStart, firstEsc };
}

/** The last CR before `runEnd` with at least `need` line feeds after it, before `runEnd` (0: none). */
function lastCut(chunks: readonly Uint8Array[], runEnd: number, need: number): number {
  let lineFeeds = 0;
  let chunkStart = 0;
  for (const c of chunks) chunkStart += c.length;
  for (let k = chunks.length - 1; k >= 0; k--) {
    const c = chunks[k]!;
    chunkStart -= c.length;
    if (chunkStart >= runEnd) continue;
    for (let i = Math.min(c.length, runEnd - chunkStart) - 1; i >= 0; i--) {
      const b = c[i];
      if (b === 0x0a) lineFeeds++;
      else if (b === 0x0d && lineFeeds >= need) return chunkStart + i;
    }
  }
  return 0;
}

/**
 * The pen for a cut at `at`: the SGR sequences in [from, at) (`from`: the run's first ESC), from the last
 * reset among them on (all of them when none resets), found backwards from the cut with memchr; null when
 * they exceed MAX_PEN_BYTES.
 * Every ESC in that range starts an SGR (scanRun checked), so each is read up to its `m`.
 */
function penBefore(chunks: readonly Uint8Array[], from: number, at: number): Buffer | null {
  const starts: number[] = [];
  const ends: number[] = [];
  let bytes = 0;
  let chunkStart = 0;
  for (const c of chunks) chunkStart += c.length;
  search: for (let k = chunks.length - 1; k >= 0; k--) {
    const c = chunks[k]!;
    chunkStart -= c.length;
    if (chunkStart >= at) continue;
    let i = Math.min(c.length, at - chunkStart) - 1;
    while (i >= 0) {
      const e = bufferLastIndexOf.call(c, ESC, i);
      if (e < 0 || chunkStart + e < from) {
        if (chunkStart <= from) break search;
        break;
      }
      const start = chunkStart + e;
      const sgr = readSgr(chunks, k, e);
      starts.push(start);
      ends.push(start + sgr.length);
      bytes += sgr.length;
      if (bytes > MAX_PEN_BYTES) return null;
      if (sgr.reset) break search;
      i = e - 1;
    }
  }
  const pen = Buffer.allocUnsafe(bytes);
  let filled = 0;
  for (let j = starts.length - 1; j >= 0; j--) filled += copyRange(chunks, starts[j]!, ends[j]!, pen, filled);
  return pen;
}

/**
 * The SGR sequence whose ESC is byte `i` of chunk `k` (it may go on in the next chunks): its length and
 * whether it resets the pen (its first parameter is 0 or empty, see the header).
 */
function readSgr(chunks: readonly Uint8Array[], k: number, i: number): { length: number; reset: boolean } {
  // p counts the sequence's bytes: 0 is ESC, 1 is `[`, the parameters start at 2.
  let p = 0;
  let inFirstParam = true;
  let firstIsZero = true;
  for (let kk = k, j = i; kk < chunks.length; kk++, j = 0) {
    const c = chunks[kk]!;
    for (; j < c.length; j++, p++) {
      if (p < 2) continue;
      const b = c[j]!;
      if (b === 0x6d) return { length: p + 1, reset: firstIsZero };
      if (b === 0x3b || b === 0x3a) inFirstParam = false;
      else if (inFirstParam && b !== 0x30) firstIsZero = false;
    }
  }
  return { length: p, reset: false }; // not reached: scanRun saw the `m`
}

// xterm's parser states (EscapeSequenceParser's ParserState) that sequenceEnd can follow to their end.
const XTERM_ESCAPE = 1;
const XTERM_ESCAPE_INTERMEDIATE = 2;
const XTERM_CSI_FIRST = 3;
const XTERM_CSI_LAST = 6;

/**
 * Where a batch that starts inside an escape sequence (a PTY read can end in one: a coloured flood does
 * every few reads) has xterm's parser back between sequences, given the parser's state before the batch:
 * after the final byte of an ESC or CSI sequence. -1 when that cannot be told simply (a string such as
 * OSC or DCS, an ESC, CAN or SUB inside the sequence, a byte of 0x80 or above, or no final byte in the
 * batch): then the batch is parsed whole.
 */
export function sequenceEnd(chunks: readonly Uint8Array[], parserState: number): number {
  let inEscape = parserState === XTERM_ESCAPE || parserState === XTERM_ESCAPE_INTERMEDIATE;
  // After an intermediate, `[` is a final byte like any other, not the start of a CSI.
  let intermediate = parserState === XTERM_ESCAPE_INTERMEDIATE;
  if (!inEscape && (parserState < XTERM_CSI_FIRST || parserState > XTERM_CSI_LAST)) return -1;
  let base = 0;
  for (const c of chunks) {
    for (let i = 0; i < c.length; i++) {
      const b = c[i]!;
      if (b === ESC || b === 0x18 || b === 0x1a || b >= 0x80) return -1;
      if (inEscape) {
        if (b >= 0x20 && b <= 0x2f) {
          intermediate = true;
          continue;
        }
        if (b === 0x5b && !intermediate) {
          inEscape = false; // CSI: its parameters follow
          continue;
        }
        // `]`, `P`, `X`, `^`, `_` start strings; a C0 control would be executed inside the sequence.
        if (b < 0x30 || b === 0x5d || b === 0x50 || b === 0x58 || b === 0x5e || b === 0x5f) return -1;
        return base + i + 1;
      }
      if (b >= 0x40 && b <= 0x7e) return base + i + 1;
    }
    base += c.length;
  }
  return -1;
}

/** Copies bytes [from, to) of the chunks' concatenation into `out` at `offset`; returns how many. */
function copyRange(chunks: readonly Uint8Array[], from: number, to: number, out: Buffer, offset: number): number {
  let chunkStart = 0;
  let n = 0;
  for (const c of chunks) {
    const chunkEnd = chunkStart + c.length;
    if (chunkEnd > from && chunkStart < to) {
      const a = Math.max(from, chunkStart) - chunkStart;
      const b = Math.min(to, chunkEnd) - chunkStart;
      out.set(c.subarray(a, b), offset + n);
      n += b - a;
    }
    if (chunkEnd >= to) break;
    chunkStart = chunkEnd;
  }
  return n;
}
