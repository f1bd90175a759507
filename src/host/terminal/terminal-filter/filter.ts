/**
 * The terminal firewall: every byte of the program's output passes through here before the operator's
 * terminal (docs/terminal-policy.md). A streaming ECMA-48 / xterm parser (7-bit ESC forms, 8-bit C1 bytes
 * and C1 encoded in UTF-8, all treated alike) that keeps its state across chunks, so where the stream is
 * split never changes what comes out. Each complete sequence is passed, rewritten or dropped by the one
 * policy (csi-policy.ts, osc-policy.ts); text passes untouched. Pure: no I/O, no timers.
 *
 * Speed: output is mostly text. A chunk without ESC, ENQ or 0xC2 that is valid UTF-8 is returned as it is
 * (native scans only); otherwise one pass over the bytes, emitting slices of the input between the
 * sequences it removes or rewrites. Passed sequences stay inside those slices, so no bytes are copied
 * for them unless they were split across chunks or introduced by a C1 control (written back in 7-bit form).
 *
 * Over 350 lines on purpose: one state machine whose states share the run bookkeeping reads best whole.
 */
import { isAscii, isUtf8 } from 'node:buffer';
import { envSwitch, isOffWord } from '../../../policy/env-switch.ts';
import { createRateLimiter, type RateLimiter } from '../../platform/rate-limiter.ts';
import { DROP, PASS, type Decision, type FilterContext, type FilterEvent, type TerminalFilterOptions } from './context.ts';
import { csiDecision, escDecision, PLAIN_PASS_FINALS } from './csi-policy.ts';
import {
  composeModes,
  composedAfterReset,
  composedDiff,
  hostColoursBegin,
  hostColoursEnd,
  layoutRestore,
  initialProgramColours,
  initialProgramModes,
  initialTrackedState,
  NO_HOST_NEEDS,
  restoreSequence,
  type ComposedModes,
  type HostNeeds,
  type ProgramColours,
  type ProgramModes,
  type TrackedState,
} from './modes.ts';
import { KittyNotifications } from './kitty-notifications.ts';
import { MAX_OSC52_BYTES, MAX_OSC_BYTES, oscDecision } from './osc-policy.ts';
import { ReplyExpectations } from './replies.ts';

/** Notifications let through: at most this many in any window. */
export const NOTIFY_RATE = { max: 3, windowMs: 10_000 } as const;
/** Longest CSI, DCS header or ESC sequence kept; longer ones are dropped whole. */
const SEQ_CAP = 256;

const ESC = 0x1b;
/** Final bytes of the CSI sequences that pass with plain parameters (the ground loop skips them inline). */
const FAST_FINAL = new Uint8Array(128);
for (const ch of PLAIN_PASS_FINALS) FAST_FINAL[ch.charCodeAt(0)] = 1;
FAST_FINAL[0x73] = 0; // `CSI s`: with left/right margin mode on it sets margins, which the policy tracks
/** Longest CSI the inline path takes; longer ones go through the state machine. */
const FAST_CSI_MAX = 64;
const C2_BYTE = Buffer.from([0xc2]);
const ST_BYTES = Buffer.from('\x1b\\', 'latin1');

/** The filter's states (the numbers the `const enum` this was gave them). */
const St = {
  Ground: 0,
  Esc: 1,
  EscInt: 2,
  Csi: 3,
  CsiIgnore: 4,
  DcsHeader: 5,
  ApcFirst: 6,
  Osc: 7,
  StrDiscard: 8,
  StrPass: 9,
} as const;
type St = (typeof St)[keyof typeof St];

export class TerminalFilter implements FilterContext {
  readonly notify: boolean;
  /** Set by the notify affordance: false when notifications go to the desktop only (JACKIN_NOTIFY=desktop). */
  notifyTerminal = true;
  /** Set by the notify affordance: a BEL in the text becomes a notification event too (rate limited). */
  bellEvents = false;
  programTitle: string | null = null;
  readonly graphics: boolean;
  readonly extraSchemes: readonly string[];
  readonly expectations: ReplyExpectations;
  readonly tracked: TrackedState = initialTrackedState();
  readonly program: ProgramModes = initialProgramModes();
  readonly colours: ProgramColours = initialProgramColours();
  #hostColours = 0;
  holdsAltScreen = false;
  /** The program left its alternate screen in this push (alt-left fires at its end unless a soft reset followed). */
  #altLeftPending = false;
  readonly notifications: RateLimiter;
  readonly kittyNotifications: KittyNotifications;
  readonly #onEvent: ((ev: FilterEvent) => void) | undefined;
  #hostNeeds: HostNeeds;
  #applied: ComposedModes;

  #state: St = St.Ground;
  // UTF-8 decoding state (ground and strings): continuation bytes still due, the range of the next one,
  // and whether the lead byte was 0xC2 (so a next byte 0x80-0x9F makes a C1 control).
  #need = 0;
  #lo = 0x80;
  #hi = 0xbf;
  #c2 = false;
  #heldC2 = false;
  // The sequence being parsed: its bytes in 7-bit form, where it started in the current chunk (-1: in an
  // earlier chunk), and whether a C1 control introduced it (then it cannot pass as the input's bytes).
  readonly #seq = Buffer.alloc(SEQ_CAP + 4);
  #seqLen = 0;
  #seqStart = -1;
  #seqC1 = false;
  #csiInter = false;
  #strEsc = false;
  #osc = Buffer.alloc(0);
  #oscLen = 0;
  #oscOverflow = false;
  // Output of the current push: slices of `#chunk` from `#runStart`, and replacement bytes.
  #parts: Buffer[] = [];
  #chunk: Buffer = Buffer.alloc(0);
  /** `#chunk` is all ASCII with no ENQ: in ground only an ESC can start anything, found with memchr. */
  #asciiChunk = false;
  #runStart = 0;

  constructor(options: TerminalFilterOptions = {}) {
    this.notify = options.notify ?? true;
    this.graphics = options.graphics ?? false;
    this.extraSchemes = options.extraSchemes ?? [];
    this.expectations = options.expectations ?? new ReplyExpectations();
    this.#onEvent = options.onEvent;
    this.#hostNeeds = options.hostNeeds ?? NO_HOST_NEEDS;
    this.#applied = composeModes(this.program, NO_HOST_NEEDS);
    this.notifications = createRateLimiter({ ...NOTIFY_RATE, ...(options.now === undefined ? {} : { now: options.now }) });
    this.kittyNotifications = new KittyNotifications(options.now);
  }

  /** Bytes the filter holds for unfinished sequences (capacity); bounded by the OSC 52 cap. */
  get heldBytes(): number {
    return this.#osc.length + this.#seq.length;
  }

  /** The modes the operator's terminal is in for the composed modes (mouse, SGR mouse, bracketed paste). */
  get composed(): Readonly<ComposedModes> {
    return this.#applied;
  }

  /** Changes what the host needs; returns the sequences to write now (empty when nothing changes). */
  setHostNeeds(needs: HostNeeds): Buffer {
    this.#hostNeeds = { ...needs };
    return Buffer.from(this.#sync(), 'latin1');
  }

  get hostColoursHeld(): boolean {
    return this.#hostColours > 0;
  }

  /**
   * Host UI goes up (palette, prompt, notice; calls nest): the first call returns what resets the colours
   * the program changed to the operator's, and from then on the program's colour changes are recorded, not
   * written, until the last `hostColoursEnd`.
   */
  hostColoursBegin(): string {
    return this.#hostColours++ === 0 ? hostColoursBegin(this.colours) : '';
  }

  /** Host UI is down: the last call returns what sets the program's colours again, as it last set them. */
  hostColoursEnd(): string {
    if (this.#hostColours === 0) return '';
    return --this.#hostColours === 0 ? hostColoursEnd(this.colours) : '';
  }

  /** What gives the program back the left/right margins jackin's drawing switched off (modes.ts). */
  layoutRestore(): string {
    return layoutRestore(this.tracked);
  }

  /** The sequence that undoes what the program left on (write it on every exit path). */
  restoreSequence(): string {
    return restoreSequence(this.tracked, this.holdsAltScreen);
  }

  /**
   * From now on jackin holds the terminal's alternate screen (the caller switched to it): the program's
   * switches are emulated (csi-policy.ts) and the restore leaves it, giving back the operator's screen.
   */
  holdAltScreen(): void {
    this.holdsAltScreen = true;
  }

  altLeft(): void {
    this.#altLeftPending = true;
  }

  event(ev: FilterEvent): void {
    this.#onEvent?.(ev);
  }

  dropped(what: string): typeof DROP {
    this.#onEvent?.({ type: 'dropped', what });
    return DROP;
  }

  programModesChanged(): string {
    this.#onEvent?.({ type: 'modes', modes: { ...this.program } });
    return this.#sync();
  }

  softReset(): string {
    // The capsule's repaint starts with a leave of the alternate screen and a soft reset: not the program leaving it.
    this.#altLeftPending = false;
    Object.assign(this.program, { mouse: 0, sgrMouse: false, bracketedPaste: false, focus: false });
    this.tracked.origin = false;
    this.#onEvent?.({ type: 'modes', modes: { ...this.program } });
    const next = composeModes(this.program, this.#hostNeeds);
    const s = composedAfterReset(this.#applied, next);
    this.#applied = next;
    return s;
  }

  #sync(): string {
    const next = composeModes(this.program, this.#hostNeeds);
    const diff = composedDiff(this.#applied, next);
    this.#applied = next;
    return diff;
  }

  /** Filters one chunk of output; the result may be the chunk itself. */
  push(chunk: Buffer): Buffer {
    const n = chunk.length;
    if (n === 0) return chunk;
    if (
      this.#state === St.Ground &&
      this.#need === 0 &&
      !this.#heldC2 &&
      chunk.indexOf(ESC) < 0 &&
      chunk.indexOf(0x05) < 0 &&
      chunk.indexOf(0xc2) < 0 &&
      !(this.bellEvents && chunk.indexOf(0x07) >= 0) &&
      isUtf8(chunk)
    ) {
      return chunk;
    }
    this.#chunk = chunk;
    this.#asciiChunk = isAscii(chunk) && chunk.indexOf(0x05) < 0 && !(this.bellEvents && chunk.indexOf(0x07) >= 0);
    this.#parts = [];
    this.#runStart = 0;
    if (this.#heldC2) {
      this.#heldC2 = false;
      const b0 = chunk[0]!;
      if (b0 < 0x80 || b0 > 0x9f) this.#parts.push(C2_BYTE);
    }
    let i = 0;
    while (i < n) i = this.#step(chunk, i);
    // Close the chunk: emit the run, holding back what belongs to an unfinished sequence.
    if (this.#state === St.Ground) {
      if (this.#need === 1 && this.#c2) {
        this.#cut(n - 1);
        this.#heldC2 = true;
      } else {
        this.#cut(n);
      }
    } else if (this.#state === St.StrPass) {
      this.#cut(this.#strEsc ? n - 1 : n);
    } else if (this.#seqStart >= 0) {
      this.#cut(this.#seqStart);
    }
    this.#seqStart = -1;
    if (this.#altLeftPending) {
      this.#altLeftPending = false;
      if (this.tracked.alt === 0) this.event({ type: 'alt-left' });
    }
    const parts = this.#parts;
    this.#parts = [];
    this.#chunk = Buffer.alloc(0);
    this.#asciiChunk = false;
    if (parts.length === 1) return parts[0]!;
    return parts.length === 0 ? Buffer.alloc(0) : Buffer.concat(parts);
  }

  /** Ends the stream: a held byte is released, an unfinished sequence dropped, a passed string closed. */
  end(): Buffer {
    const out: Buffer[] = [];
    if (this.#heldC2) out.push(C2_BYTE);
    if (this.#state === St.StrPass) out.push(ST_BYTES);
    this.#heldC2 = false;
    this.#state = St.Ground;
    this.#need = 0;
    this.#c2 = false;
    this.#strEsc = false;
    this.#releaseOsc();
    return Buffer.concat(out);
  }

  #cut(to: number): void {
    if (to > this.#runStart) this.#parts.push(this.#chunk.subarray(this.#runStart, to));
  }

  #step(b: Buffer, i: number): number {
    switch (this.#state) {
      case St.Ground:
        return this.#ground(b, i);
      case St.Esc:
        return this.#escByte(b[i]!, i);
      case St.EscInt:
        return this.#escIntByte(b[i]!, i);
      case St.Csi:
      case St.CsiIgnore:
      case St.DcsHeader:
        return this.#csiByte(b[i]!, i);
      case St.ApcFirst:
        return this.#apcFirst(b[i]!, i);
      default:
        return this.#strByte(b[i]!, i);
    }
  }

  #ground(b: Buffer, i: number): number {
    const n = b.length;
    let need = this.#need;
    let lo = this.#lo;
    let hi = this.#hi;
    let c2 = this.#c2;
    for (; i < n; i++) {
      // Coloured output: a chunk of ASCII text and escape sequences, with no character left unfinished
      // from the last chunk. The bytes up to the next ESC all stay in the run (printable, or C0 controls
      // other than ENQ), so the loop goes straight to that ESC.
      if (this.#asciiChunk && need === 0 && b[i] !== ESC) {
        const e = b.indexOf(ESC, i);
        if (e < 0) {
          i = n;
          break;
        }
        i = e;
      }
      const c = b[i]!;
      if (c < 0x80) {
        need = 0;
        if (c >= 0x20 || c === 0x0a || c === 0x0d) continue;
        if (c === ESC) {
          // Fast path: a complete `CSI digits;: final` that passes as it is stays in the run.
          if (b[i + 1] === 0x5b) {
            let j = i + 2;
            const limit = Math.min(n, i + FAST_CSI_MAX);
            while (j < limit && b[j]! >= 0x30 && b[j]! <= 0x3b) j++;
            if (j < limit && FAST_FINAL[b[j]!] === 1) {
              i = j;
              continue;
            }
          }
          this.#need = 0;
          this.#c2 = false;
          this.#begin(i, false);
          this.#state = St.Esc;
          return i + 1;
        }
        if (c === 0x07) {
          if (this.bellEvents) this.#bell();
          continue;
        }
        if (c === 0x05) {
          // ENQ asks the terminal for its answerback message: a query whose reply nobody needs.
          this.#cut(i);
          this.#runStart = i + 1;
        }
        continue;
      }
      if (need > 0) {
        if (c >= lo && c <= hi) {
          if (c2 && c <= 0x9f) {
            this.#need = 0;
            this.#c2 = false;
            this.#begin(i - 1, true);
            return this.#escByte(c - 0x40, i);
          }
          need--;
          lo = 0x80;
          hi = 0xbf;
          c2 = false;
          continue;
        }
        need = 0;
        c2 = false;
      }
      if (c <= 0x9f) {
        // A C1 control that is not part of a character: the same as ESC and its 7-bit equivalent.
        this.#need = 0;
        this.#c2 = false;
        this.#begin(i, true);
        return this.#escByte(c - 0x40, i);
      }
      if (c >= 0xc2 && c <= 0xf4) {
        c2 = c === 0xc2;
        if (c < 0xe0) {
          need = 1;
          lo = 0x80;
          hi = 0xbf;
        } else if (c < 0xf0) {
          need = 2;
          lo = c === 0xe0 ? 0xa0 : 0x80;
          hi = c === 0xed ? 0x9f : 0xbf;
        } else {
          need = 3;
          lo = c === 0xf0 ? 0x90 : 0x80;
          hi = c === 0xf4 ? 0x8f : 0xbf;
        }
      }
    }
    this.#need = need;
    this.#lo = lo;
    this.#hi = hi;
    this.#c2 = c2;
    return n;
  }

  /** A BEL in the text, when asked for: one notification event within the rate limit (the BEL itself passes). */
  #bell(): void {
    if (this.notify && this.notifications.tryTake()) this.event({ type: 'notification', source: 'bell', title: null, body: 'The program rang the bell' });
  }

  #begin(start: number, c1: boolean): void {
    this.#seqStart = start;
    this.#seqC1 = c1;
    this.#seq[0] = ESC;
    this.#seqLen = 1;
  }

  #add(c: number): boolean {
    if (this.#seqLen >= SEQ_CAP) return false;
    this.#seq[this.#seqLen++] = c;
    return true;
  }

  /** Drops the sequence before `i`; the byte at `i` is read again in the ground state. */
  #abort(i: number): number {
    this.#need = 0;
    this.#c2 = false;
    if (this.#seqStart >= 0) this.#cut(this.#seqStart);
    this.#runStart = i;
    this.#state = St.Ground;
    return i;
  }

  /** Ends the sequence (or string) whose last byte is at `i` with `d`. */
  #complete(d: Decision, i: number, next: St = St.Ground): number {
    this.#need = 0;
    this.#c2 = false;
    if (d === PASS && this.#seqStart >= 0 && !this.#seqC1) {
      // Already inside the run of input bytes being passed.
    } else {
      if (this.#seqStart >= 0) this.#cut(this.#seqStart);
      if (d === PASS) this.#parts.push(Buffer.from(this.#seq.subarray(0, this.#seqLen)));
      else if (d !== DROP) this.#parts.push(Buffer.from(d, 'utf8'));
      this.#runStart = i + 1;
    }
    this.#state = next;
    return i + 1;
  }

  /** Cancel (CAN, SUB): the sequence and the byte at `i` are dropped. */
  #cancel(i: number): number {
    return this.#complete(DROP, i);
  }

  #escByte(c: number, i: number): number {
    if (c >= 0x80) return this.#abort(i);
    switch (c) {
      case 0x5b: // [
        this.#add(c);
        this.#csiInter = false;
        this.#state = St.Csi;
        return i + 1;
      case 0x5d: // ]
        this.#state = St.Osc;
        this.#strEsc = false;
        this.#oscLen = 0;
        this.#oscOverflow = false;
        return i + 1;
      case 0x50: // P
        this.#add(c);
        this.#csiInter = false;
        this.#state = St.DcsHeader;
        return i + 1;
      case 0x5f: // _
        this.#state = St.ApcFirst;
        return i + 1;
      case 0x58: // X (SOS)
      case 0x5e: // ^ (PM)
      case 0x6b: // k (screen and tmux window title)
        this.dropped(c === 0x58 ? 'SOS' : c === 0x5e ? 'PM' : 'ESC k');
        return this.#string(St.StrDiscard, i);
      case ESC:
        this.#abort(i);
        this.#begin(i, false);
        this.#state = St.Esc;
        return i + 1;
      case 0x18:
      case 0x1a:
        return this.#cancel(i);
      default:
        break;
    }
    if (c >= 0x20 && c <= 0x2f) {
      this.#add(c);
      this.#state = St.EscInt;
      return i + 1;
    }
    if (c >= 0x30 && c <= 0x7e) {
      this.#add(c);
      return this.#complete(escDecision(this, '', c), i);
    }
    return this.#abort(i); // another C0 control or DEL: the sequence is abandoned, the byte read afresh
  }

  #escIntByte(c: number, i: number): number {
    if (c >= 0x20 && c <= 0x2f) {
      if (!this.#add(c) || this.#seqLen > 5) this.#state = St.CsiIgnore;
      return i + 1;
    }
    if (c >= 0x30 && c <= 0x7e) {
      this.#add(c);
      const inter = this.#seq.toString('latin1', 1, this.#seqLen - 1);
      return this.#complete(escDecision(this, inter, c), i);
    }
    return this.#interrupt(c, i);
  }

  /** A byte that cannot continue a CSI, ESC or DCS header: ESC starts anew, CAN/SUB cancel, others abort. */
  #interrupt(c: number, i: number): number {
    if (c === ESC) return this.#escByte(c, i);
    if (c === 0x18 || c === 0x1a) return this.#cancel(i);
    return this.#abort(i);
  }

  #csiByte(c: number, i: number): number {
    if (c >= 0x20 && c <= 0x3f) {
      if (this.#state === St.CsiIgnore) return i + 1;
      if (c >= 0x30 ? this.#csiInter : false) this.#state = this.#state === St.DcsHeader ? St.StrDiscard : St.CsiIgnore;
      else if (!this.#add(c)) this.#state = this.#state === St.DcsHeader ? St.StrDiscard : St.CsiIgnore;
      if (c < 0x30) this.#csiInter = true;
      if (this.#state === St.StrDiscard) this.dropped('DCS');
      return i + 1;
    }
    if (c >= 0x40 && c <= 0x7e) {
      if (this.#state === St.CsiIgnore) return this.#complete(this.dropped('CSI over the length limit'), i);
      this.#seq[this.#seqLen++] = c; // the final byte always fits (the buffer has room past SEQ_CAP)
      if (this.#state === St.DcsHeader) return this.#dcsHeader(c, i);
      let pEnd = 2;
      while (pEnd < this.#seqLen - 1 && this.#seq[pEnd]! >= 0x30) pEnd++;
      const params = this.#seq.toString('latin1', 2, pEnd);
      const inter = pEnd < this.#seqLen - 1 ? this.#seq.toString('latin1', pEnd, this.#seqLen - 1) : '';
      return this.#complete(csiDecision(this, params, inter, String.fromCharCode(c)), i);
    }
    return this.#interrupt(c, i);
  }

  /** DCS: sixel (`DCS Pa;Pb;Ph q`) passes when graphics are allowed; everything else is dropped. */
  #dcsHeader(final: number, i: number): number {
    if (this.graphics && final === 0x71 && !this.#csiInter) return this.#complete(PASS, i, St.StrPass);
    this.dropped('DCS');
    this.#state = St.StrDiscard;
    this.#strEsc = false;
    return i + 1;
  }

  /** APC: kitty graphics (`APC G ...`) passes when graphics are allowed; everything else is dropped. */
  #apcFirst(c: number, i: number): number {
    if (this.graphics && c === 0x47) {
      this.#add(0x5f);
      this.#add(c);
      this.#strEsc = false;
      return this.#complete(PASS, i, St.StrPass);
    }
    this.dropped('APC');
    this.#state = St.StrDiscard;
    this.#strEsc = false;
    return i;
  }

  #string(state: St, i: number): number {
    this.#state = state;
    this.#strEsc = false;
    return i + 1;
  }

  /** A byte inside OSC (kept), SOS/PM/APC/DCS (dropped) or a passed graphics string. */
  #strByte(c: number, i: number): number {
    const state = this.#state;
    if (this.#strEsc) {
      this.#strEsc = false;
      if (c === 0x5c) return this.#endString(i);
      // ESC and something else: the string is abandoned; that ESC starts the next sequence.
      if (state === St.StrPass) {
        this.#cut(i - 1);
        this.#parts.push(ST_BYTES);
        this.#runStart = Math.max(0, i - 1);
        this.#state = St.Ground;
      } else {
        this.#abort(Math.max(0, i - 1));
      }
      this.#begin(i - 1, false);
      return this.#escByte(c, i);
    }
    if (c < 0x20) {
      this.#need = 0; // a control byte ends any character in progress
      this.#c2 = false;
      if (c === ESC) {
        this.#strEsc = true;
        return i + 1;
      }
      if (c === 0x07 && state === St.Osc) return this.#endString(i);
      if (c === 0x18 || c === 0x1a) {
        if (state === St.StrPass) return this.#endPass(i, true);
        return this.#cancel(i);
      }
      if (state === St.StrPass) {
        this.#cut(i);
        this.#runStart = i + 1;
      }
      return i + 1; // other C0 controls inside a string are ignored, as terminals do
    }
    if (c >= 0x80) {
      if (state === St.StrPass) return this.#endPass(i, false); // graphics payloads are ASCII
      return this.#strHigh(c, i);
    }
    this.#need = 0;
    this.#c2 = false;
    if (state === St.Osc) this.#store(c);
    return i + 1;
  }

  /** Bytes 0x80-0xFF in a string: characters, the string terminator (ST) or another C1 control. */
  #strHigh(c: number, i: number): number {
    if (this.#need > 0 && c >= this.#lo && c <= this.#hi) {
      if (this.#c2 && c <= 0x9f) {
        this.#need = 0;
        this.#c2 = false;
        if (this.#state === St.Osc && this.#oscLen > 0 && this.#osc[this.#oscLen - 1] === 0xc2) this.#oscLen--;
        return this.#c1InString(c, i);
      }
      this.#need--;
      this.#lo = 0x80;
      this.#hi = 0xbf;
      this.#c2 = false;
    } else if (c <= 0x9f) {
      this.#need = 0;
      this.#c2 = false;
      return this.#c1InString(c, i);
    } else {
      this.#need = c >= 0xc2 && c <= 0xf4 ? (c < 0xe0 ? 1 : c < 0xf0 ? 2 : 3) : 0;
      this.#lo = c === 0xe0 ? 0xa0 : c === 0xf0 ? 0x90 : 0x80;
      this.#hi = c === 0xed ? 0x9f : c === 0xf4 ? 0x8f : 0xbf;
      this.#c2 = c === 0xc2;
    }
    if (this.#state === St.Osc) this.#store(c);
    return i + 1;
  }

  /** ST ends the string; any other C1 control abandons it and starts its own sequence. */
  #c1InString(c: number, i: number): number {
    if (c === 0x9c) return this.#endString(i);
    const start = this.#chunk[i - 1] === 0xc2 && i > 0 ? i - 1 : i;
    this.#abort(start);
    this.#begin(start, true);
    return this.#escByte(c - 0x40, i);
  }

  #endString(i: number): number {
    switch (this.#state) {
      case St.Osc: {
        const d = oscDecision(this, this.#osc.subarray(0, this.#oscLen), this.#oscOverflow);
        this.#releaseOsc();
        return this.#complete(d, i);
      }
      case St.StrPass:
        if (this.#chunk[i] === 0x5c && i > 0 && this.#chunk[i - 1] === ESC) {
          this.#state = St.Ground;
          return i + 1;
        }
        return this.#endPass(i, true);
      default:
        return this.#complete(DROP, i);
    }
  }

  /** Closes a passed graphics string with ST; the byte at `i` is consumed or read again. */
  #endPass(i: number, consume: boolean): number {
    this.#cut(this.#chunk[i - 1] === ESC && i > 0 ? i - 1 : i);
    this.#parts.push(ST_BYTES);
    this.#runStart = consume ? i + 1 : i;
    this.#state = St.Ground;
    return consume ? i + 1 : i;
  }

  #store(c: number): void {
    if (this.#oscOverflow) return;
    const len = this.#oscLen;
    const limit = len >= MAX_OSC_BYTES && this.#osc[0] === 0x35 && this.#osc[1] === 0x32 && this.#osc[2] === 0x3b ? MAX_OSC52_BYTES : MAX_OSC_BYTES;
    if (len >= limit) {
      this.#oscOverflow = true;
      return;
    }
    if (len === this.#osc.length) {
      const grown = Buffer.allocUnsafe(Math.min(MAX_OSC52_BYTES, Math.max(1024, len * 2)));
      this.#osc.copy(grown, 0, 0, len);
      this.#osc = grown;
    }
    this.#osc[this.#oscLen++] = c;
  }

  #releaseOsc(): void {
    this.#oscLen = 0;
    this.#oscOverflow = false;
    if (this.#osc.length > 64 * 1024) this.#osc = Buffer.alloc(0);
  }
}

/** Filter options from the environment: JACKIN_NOTIFY (an off-word drops notifications), JACKIN_GRAPHICS (sixel, kitty). */
export function filterOptionsFromEnv(env: Readonly<Record<string, string | undefined>>): Pick<TerminalFilterOptions, 'notify' | 'graphics'> {
  return {
    notify: !isOffWord(env['JACKIN_NOTIFY']),
    graphics: envSwitch(env, 'JACKIN_GRAPHICS'),
  };
}
