/**
 * Control sequences (CSI) and escape sequences (ESC Fe/Fp/Fs with intermediates) in the program's output,
 * decided by the one table in docs/terminal-policy.md. Anything not listed is dropped.
 */
import { DROP, PASS, type Decision, type FilterContext } from './context.ts';
import { MAX_KITTY_DEPTH, type MouseTracking } from './modes.ts';

/**
 * CSI sequences without a private marker or intermediate that pass as they are: cursor movement, erase,
 * insert/delete, scroll, SGR, scroll region, cursor save/restore, tabs forward/back, repeat. Erase in
 * display (`J`) is checked on its own (eraseDisplay).
 */
export const PLAIN_PASS_FINALS = '@ABCDEFGHIKLMPSXZ`abdefmrsu';
const PLAIN_PASS = new Set(PLAIN_PASS_FINALS.split(''));

type DecClass = 'pass' | 'alt' | 'mouse' | 'sgr-mouse' | 'paste' | 'focus';
/** DECSET/DECRST allowlist: every other private mode is dropped. */
const DEC_MODES: ReadonlyMap<number, DecClass> = new Map<number, DecClass>([
  [1, 'pass'], // application cursor keys (restored)
  [5, 'pass'], // reverse video (restored)
  [6, 'pass'], // origin mode (restored)
  [7, 'pass'], // autowrap (restored)
  [12, 'pass'], // cursor blink
  [25, 'pass'], // cursor visible (restored)
  [45, 'pass'], // reverse wraparound (restored)
  [66, 'pass'], // application keypad (restored)
  [69, 'pass'], // left/right margins (restored)
  [1048, 'pass'], // save/restore cursor
  [2026, 'pass'], // synchronized output (restored)
  [47, 'alt'],
  [1047, 'alt'],
  [1049, 'alt'],
  [9, 'mouse'],
  [1000, 'mouse'],
  [1002, 'mouse'],
  [1003, 'mouse'],
  [1006, 'sgr-mouse'],
  [2004, 'paste'],
  [1004, 'focus'],
]);

/** Parameter bytes a passed sequence may carry: digits, `;` and `:` (sub-parameters, as in SGR colours). */
function plainParams(p: string, from: number): boolean {
  for (let i = from; i < p.length; i++) {
    const c = p.charCodeAt(i);
    if (c > 0x3b) return false; // < = > ? inside the parameters
  }
  return p.length - from <= 128;
}

const ZERO_OR_EMPTY = /^0?$/;

/** `params` starts with the private marker if any (`?1049`); `inter` holds the intermediate bytes. */
export function csiDecision(ctx: FilterContext, params: string, inter: string, final: string): Decision {
  const marker = params.length > 0 && params.charCodeAt(0) >= 0x3c ? params[0]! : '';
  if (!plainParams(params, marker === '' ? 0 : 1)) return ctx.dropped('CSI with odd parameters');
  const p = marker === '' ? params : params.slice(1);
  if (inter === '') {
    if (marker === '') {
      if (final === 's' && ctx.tracked.leftRightMode) ctx.tracked.leftRightMargins = p; // DECSLRM, put back after jackin draws
      if (PLAIN_PASS.has(final)) return PASS;
      switch (final) {
        case 'J':
          return eraseDisplay(p, '');
        case 'T': // scroll down; with five parameters it is xterm's mouse highlight tracking
          return p.includes(';') ? ctx.dropped('CSI T (highlight tracking)') : PASS;
        case 'h':
        case 'l':
          return ansiModes(ctx, p, final);
        case 'n':
          // Leading zeros are the same number to a terminal, and to the capsule's model, which answers these
          // while the palette holds the output (docs/terminal-policy.md, "Replies").
          if (/^0*5$/.test(p)) ctx.expectations.expect('status');
          else if (/^0*6$/.test(p)) ctx.expectations.expect('cpr');
          else return ctx.dropped('CSI n (report)');
          return PASS;
        case 'c':
          if (!ZERO_OR_EMPTY.test(p)) return ctx.dropped('CSI c');
          ctx.expectations.expect('da1');
          return PASS;
        case 't':
          return ctx.dropped('CSI t (window operation)');
        default:
          return ctx.dropped(`CSI ${final}`);
      }
    }
    const key = marker + final;
    switch (key) {
      case '?h':
      case '?l':
        return decModes(ctx, p, final === 'h');
      case '?J':
        return eraseDisplay(p, '?');
      case '?K':
        return PASS;
      case '?n':
        if (p !== '6') return ctx.dropped('CSI ? n (report)');
        ctx.expectations.expect('cpr');
        return PASS;
      case '>c':
        if (!ZERO_OR_EMPTY.test(p)) return ctx.dropped('CSI > c');
        ctx.expectations.expect('da2');
        return PASS;
      case '>q':
        if (!ZERO_OR_EMPTY.test(p)) return ctx.dropped('CSI > q');
        ctx.expectations.expect('xtversion');
        return PASS;
      case '>m': // modifyOtherKeys (restored); other key modifier resources are dropped
        return p === '4' || /^4;[0-3]$/.test(p) ? PASS : ctx.dropped('CSI > m');
      case '>u':
        if (!/^\d{0,5}$/.test(p)) return ctx.dropped('CSI > u');
        if (ctx.tracked.alt !== 0) ctx.tracked.kittyAltDepth = Math.min(MAX_KITTY_DEPTH, ctx.tracked.kittyAltDepth + 1);
        else ctx.tracked.kittyDepth = Math.min(MAX_KITTY_DEPTH, ctx.tracked.kittyDepth + 1);
        return PASS;
      case '<u':
        return kittyPop(ctx, p);
      case '=u':
        if (!/^\d{1,5}(;[123])?$/.test(p)) return ctx.dropped('CSI = u');
        if (ctx.tracked.alt === 0 && ctx.tracked.kittyDepth === 0) ctx.tracked.kittySetAtBase = true;
        return PASS;
      case '?u':
        if (p !== '') return ctx.dropped('CSI ? u');
        ctx.expectations.expect('kitty-flags');
        return PASS;
      default:
        return ctx.dropped(`CSI ${marker} ${final}`);
    }
  }
  switch (inter + final) {
    case ' q': // cursor style (restored)
      return /^\d?$/.test(p) && marker === '' ? PASS : ctx.dropped('CSI SP q');
    case '!p': // soft reset; the composed modes it turns off are set again
      return p === '' && marker === '' ? `\x1b[!p${ctx.softReset()}` : ctx.dropped('CSI ! p');
    case '$p': // DECRQM
      if (!/^\d{1,5}$/.test(p) || (marker !== '' && marker !== '?')) return ctx.dropped('CSI $ p');
      ctx.expectations.expect('decrqm');
      return PASS;
    default:
      return ctx.dropped(`CSI ${marker}${inter}${final}`);
  }
}

/**
 * ED / DECSED: 3 erases the saved lines, the operator's scrollback (their history from before jackin too),
 * which is no more the program's to wipe than a full reset (RIS) is: the screen is erased instead.
 */
function eraseDisplay(p: string, marker: string): Decision {
  const first = p.split(';')[0]!.split(':')[0]!;
  return first !== '' && Number(first) === 3 ? `\x1b[${marker}2J` : PASS;
}

/** SM/RM: only insert mode (IRM, 4) passes; keyboard lock, newline mode and the rest are dropped. */
function ansiModes(ctx: FilterContext, p: string, final: string): Decision {
  const kept = p.split(';').filter((m) => m === '4');
  if (kept.length === p.split(';').length) return PASS;
  ctx.dropped(`CSI ${final} (mode)`);
  return kept.length === 0 ? DROP : `\x1b[4${final}`;
}

function decModes(ctx: FilterContext, p: string, set: boolean): Decision {
  const passed: string[] = [];
  let composed = false;
  let dropped = false;
  let emulated = false;
  let clear = false;
  for (const s of p.split(';')) {
    const n = /^\d{1,5}$/.test(s) ? Number(s) : -1;
    const cls = DEC_MODES.get(n);
    switch (cls) {
      case 'pass':
        passed.push(s);
        if (n === 6) ctx.tracked.origin = set;
        if (n === 69) {
          ctx.tracked.leftRightMode = set;
          ctx.tracked.leftRightMargins = ''; // either way the margins are the full width again
        }
        break;
      case 'alt': {
        const was = ctx.tracked.alt;
        ctx.tracked.alt = set ? (n as 47 | 1047 | 1049) : 0;
        ctx.program.alt = ctx.tracked.alt;
        composed = true;
        if (ctx.holdsAltScreen) {
          // The terminal is on jackin's alternate screen already; leaving it would show the operator's own
          // screen mid-session. Entering or leaving the program's is a clear here, and leaving it asks for
          // a repaint of the program's normal screen, which the terminal no longer holds.
          // A switch to the screen it is already on changes nothing, as on a terminal.
          emulated = true;
          if ((was === 0) === set) clear = true;
          if (!set && was !== 0) ctx.altLeft();
        } else passed.push(s);
        break;
      }
      case 'focus':
        // Composed: the host may want focus reports for itself (JACKIN_NOTIFY_BELL) while the program does not.
        ctx.program.focus = set;
        composed = true;
        break;
      case 'mouse':
        // Setting a tracking mode selects it; resetting any of them turns tracking off (as xterm does).
        ctx.program.mouse = set ? (n as MouseTracking) : 0;
        composed = true;
        break;
      case 'sgr-mouse':
        ctx.program.sgrMouse = set;
        composed = true;
        break;
      case 'paste':
        ctx.program.bracketedPaste = set;
        composed = true;
        break;
      default:
        dropped = true;
    }
  }
  if (dropped) ctx.dropped('CSI ? h/l (mode not allowed)');
  const tail = composed ? ctx.programModesChanged() : '';
  if (!dropped && !emulated && tail === '' && passed.length === p.split(';').length) return PASS;
  const head = (passed.length > 0 ? `\x1b[?${passed.join(';')}${set ? 'h' : 'l'}` : '') + (clear ? '\x1b[2J' : '');
  return head + tail === '' ? DROP : head + tail;
}

/**
 * Pops at most the levels the program pushed on the screen it is on: the operator's own levels are not the
 * program's to pop.
 */
function kittyPop(ctx: FilterContext, p: string): Decision {
  if (!/^\d{0,5}$/.test(p)) return ctx.dropped('CSI < u');
  const want = p === '' ? 1 : Number(p);
  const key = ctx.tracked.alt !== 0 ? 'kittyAltDepth' : 'kittyDepth';
  const n = Math.min(want, ctx.tracked[key]);
  ctx.tracked[key] -= n;
  if (n === 0) return ctx.dropped('CSI < u (nothing pushed)');
  return n === want ? PASS : `\x1b[<${n}u`;
}

/**
 * ESC with intermediates and a final byte (charset designation, DECALN, double-size lines), or a final
 * byte alone. `final` is the byte after ESC (or the C1 control's 7-bit equivalent).
 */
export function escDecision(ctx: FilterContext, inter: string, final: number): Decision {
  if (inter === '') {
    switch (final) {
      case 0x37: // DECSC
      case 0x38: // DECRC
      case 0x3d: // DECKPAM (restored)
      case 0x3e: // DECKPNM
      case 0x44: // IND
      case 0x45: // NEL
      case 0x4d: // RI
      case 0x4e: // SS2
      case 0x4f: // SS3
      case 0x6e: // LS2
      case 0x6f: // LS3 (GL shifts, reset by SI at exit)
        return PASS;
      case 0x63: // RIS would clear the operator's scrollback and reset their terminal: soft reset and clear
        return `\x1b[!p\x1b[H\x1b[2J${ctx.softReset()}`;
      default:
        return ctx.dropped(final >= 0x20 && final < 0x7f ? `ESC ${String.fromCharCode(final)}` : 'ESC');
    }
  }
  if (inter.length === 1) {
    const i = inter.charCodeAt(0);
    // Charset designation to G0-G3 (restored at exit); `%` (coding system) and SP (7/8-bit controls) are not.
    if ((i >= 0x28 && i <= 0x2b) || (i >= 0x2d && i <= 0x2f)) return PASS;
    if (i === 0x23 && final >= 0x33 && final <= 0x38) return PASS; // DECDHL, DECSWL, DECDWL, DECALN
  }
  return ctx.dropped('ESC with intermediates');
}
