/**
 * The operator's terminal modes as the host sees them (docs/terminal-policy.md, "Modes"): what the program
 * asked for (read from the filtered output), what the host needs (click capture, paste detection), the
 * composition of the two that the terminal actually gets, and the sequence that undoes everything the
 * program may have left on. Pure: no I/O; the filter feeds it parsed sequences, so a sequence split across
 * frames at any byte is tracked the same as a whole one.
 */

/** Mouse tracking modes a program may ask for (X10, normal, button-event, any-event). */
export type MouseTracking = 0 | 9 | 1000 | 1002 | 1003;
type AltScreenMode = 0 | 47 | 1047 | 1049;

/** The composed modes, as the program asked for them. */
export interface ProgramModes {
  mouse: MouseTracking;
  sgrMouse: boolean;
  bracketedPaste: boolean;
  focus: boolean;
  /** The alternate-screen mode that is on (0: the normal screen). */
  alt: AltScreenMode;
}

/** What the host itself needs from the operator's terminal. */
export interface HostNeeds {
  /** Report clicks (normal tracking, SGR encoding) so modifier-clicks open links. */
  mouseCapture: boolean;
  /** Bracket pastes, so the host can tell a paste from typing (path detection, palette keys in a paste). */
  bracketedPaste: boolean;
  /** Report focus in and out (`?1004`), so the host knows whether the operator looks (JACKIN_NOTIFY_BELL). */
  focusReports: boolean;
  /**
   * Paste events (kitty clipboard protocol, `?5522`): the terminal tells of a paste with its clipboard's types
   * instead of pasting, so an image pasted with the terminal's own paste key can be read (a session over SSH).
   */
  pasteEvents?: boolean;
}

/** The modes the host composes (the others pass as the program sends them, or are the host's alone). */
export interface ComposedModes {
  mouse: MouseTracking;
  sgrMouse: boolean;
  bracketedPaste: boolean;
  /** Focus reporting: on when the program or the host wants it; reports reach the program only when it asked. */
  focus: boolean;
  /** Paste events (`?5522`): the host's alone. */
  pasteEvents?: boolean;
}

export const NO_HOST_NEEDS: HostNeeds = { mouseCapture: false, bracketedPaste: false, focusReports: false };

export function initialProgramModes(): ProgramModes {
  return { mouse: 0, sgrMouse: false, bracketedPaste: false, focus: false, alt: 0 };
}

/**
 * The terminal's modes: the program's mouse tracking when it tracks the mouse (its reports are its own,
 * always in SGR encoding), else the host's click capture; bracketed paste on when either wants it. A program's `?1000l` or
 * `?2004l` therefore never switches off what the host needs.
 */
export function composeModes(p: ProgramModes, host: HostNeeds): ComposedModes {
  // SGR whenever a mouse mode is on: the input side parses SGR reports and hands the program its own
  // encoding (mouse-report.ts); legacy reports carry raw bytes that would read as keys in the palette.
  const focus = p.focus || host.focusReports;
  const events = host.pasteEvents === true ? { pasteEvents: true } : {};
  if (p.mouse !== 0) return { mouse: p.mouse, sgrMouse: true, bracketedPaste: p.bracketedPaste || host.bracketedPaste, focus, ...events };
  return {
    mouse: host.mouseCapture ? 1000 : 0,
    sgrMouse: host.mouseCapture,
    bracketedPaste: p.bracketedPaste || host.bracketedPaste,
    focus,
    ...events,
  };
}

/** The sequences that take the terminal from `from` to `to` (empty when equal). */
export function composedDiff(from: ComposedModes, to: ComposedModes): string {
  let s = '';
  if (from.mouse !== to.mouse) {
    if (from.mouse !== 0) s += `\x1b[?${from.mouse}l`;
    if (to.mouse !== 0) s += `\x1b[?${to.mouse}h`;
  }
  if (from.sgrMouse !== to.sgrMouse) s += `\x1b[?1006${to.sgrMouse ? 'h' : 'l'}`;
  if (from.bracketedPaste !== to.bracketedPaste) s += `\x1b[?2004${to.bracketedPaste ? 'h' : 'l'}`;
  if (from.focus !== to.focus) s += `\x1b[?1004${to.focus ? 'h' : 'l'}`;
  if ((from.pasteEvents === true) !== (to.pasteEvents === true)) s += `\x1b[?5522${to.pasteEvents === true ? 'h' : 'l'}`;
  return s;
}

/**
 * The composed modes stated in full, after a soft reset (DECSTR, or RIS as the filter rewrites it) left the
 * terminal's own state unknown: terminals turn bracketed paste and focus reporting off (xterm also mouse
 * tracking), so a diff against what was applied before would leave the host's needs switched off.
 */
export function composedAfterReset(from: ComposedModes, to: ComposedModes): string {
  let s = '';
  if (to.mouse !== 0) s += `\x1b[?${to.mouse}h`;
  else if (from.mouse !== 0) s += `\x1b[?${from.mouse}l`;
  const events = to.pasteEvents === true ? '\x1b[?5522h' : '';
  return `${s}\x1b[?1006${to.sgrMouse ? 'h' : 'l'}\x1b[?2004${to.bracketedPaste ? 'h' : 'l'}\x1b[?1004${to.focus ? 'h' : 'l'}${events}`;
}

/** What the program changed that a fixed reset cannot undo blindly (see restoreSequence). */
export interface TrackedState {
  /** The alternate-screen mode that is on, 0 for none. */
  alt: AltScreenMode;
  /** Kitty keyboard levels the program pushed and has not popped. */
  kittyDepth: number;
  /**
   * The same on the alternate screen, which has a stack of its own (kitty keyboard protocol): what the program
   * pushed there never licenses a pop on the main screen, where the operator's levels are.
   */
  kittyAltDepth: number;
  /** The program set kitty keyboard flags on the main screen without pushing a level (the operator's own level changed). */
  kittySetAtBase: boolean;
  /** Palette (OSC 4) and dynamic colours (OSC 10/11/12) the program changed. */
  palette: boolean;
  foreground: boolean;
  background: boolean;
  cursorColor: boolean;
  /** The host pushed the operator's title before the program's first title. */
  titlePushed: boolean;
  /** Origin mode (DECOM) is on. */
  origin: boolean;
  /** A hyperlink (OSC 8) is open: the text written after it, jackin's and the shell's included, would be the link. */
  hyperlink: boolean;
  /** Left/right margin mode (DECLRMM, `?69h`) is on, and the margins the program last set in it (DECSLRM params). */
  leftRightMode: boolean;
  leftRightMargins: string;
}

export function initialTrackedState(): TrackedState {
  return {
    alt: 0,
    kittyDepth: 0,
    kittyAltDepth: 0,
    kittySetAtBase: false,
    palette: false,
    foreground: false,
    background: false,
    cursorColor: false,
    titlePushed: false,
    origin: false,
    hyperlink: false,
    leftRightMode: false,
    leftRightMargins: '',
  };
}

/**
 * The colours the program set, as it last set them: palette entries (OSC 4) and the default foreground and
 * background (OSC 10/11). While host UI is up the terminal's are reset to the operator's (OSC 104/110/111:
 * the program could otherwise make jackin's prompt, palette or notices blank by setting the colours they use
 * to the background), the program's sets and resets are recorded here instead of written, and afterwards
 * its colours are set again from here (hostColoursBegin/End).
 */
export interface ProgramColours {
  readonly palette: Map<number, string>;
  foreground: string | null;
  background: string | null;
}

export function initialProgramColours(): ProgramColours {
  return { palette: new Map(), foreground: null, background: null };
}

const ST = '\x1b\\';

/** What puts the operator's own colours back for host UI: a reset of only what the program changed. */
export function hostColoursBegin(c: ProgramColours): string {
  return `${c.palette.size > 0 ? `\x1b]104${ST}` : ''}${c.foreground !== null ? `\x1b]110${ST}` : ''}${c.background !== null ? `\x1b]111${ST}` : ''}`;
}

/** What sets the program's colours again once host UI is down. */
export function hostColoursEnd(c: ProgramColours): string {
  const entries = [...c.palette].sort((a, b) => a[0] - b[0]);
  let s = '';
  // OSC 4 takes up to 32 index/spec pairs per sequence here (the filter's own limit on what it passes).
  for (let i = 0; i < entries.length; i += 32)
    s += `\x1b]4;${entries
      .slice(i, i + 32)
      .map(([n, spec]) => `${n};${spec}`)
      .join(';')}${ST}`;
  if (c.foreground !== null) s += `\x1b]10;${c.foreground}${ST}`;
  if (c.background !== null) s += `\x1b]11;${c.background}${ST}`;
  return s;
}

/**
 * What gives the program back the left/right margins jackin's drawing switched off (`?69l`, host-draw.ts):
 * the mode and its margins, inside DECSC/DECRC since setting margins homes the cursor. Empty when the mode
 * is off.
 */
export function layoutRestore(t: TrackedState): string {
  return t.leftRightMode ? `\x1b7\x1b[?69h${t.leftRightMargins === '' ? '' : `\x1b[${t.leftRightMargins}s`}\x1b8` : '';
}

/** Kitty keyboard levels tracked at most (terminals keep a bounded stack too). */
export const MAX_KITTY_DEPTH = 64;

/**
 * Undoes what the program may have left on, without RIS (which would clear the operator's screen and
 * scrollback). Modes that cost nothing to reset are reset always; the rest only when tracked as changed:
 * leaving an alternate screen that is not on would restore a stale saved cursor, and resetting colours
 * nobody changed would undo the operator's own. Order matters: origin mode goes before the scroll region,
 * whose reset homes the cursor and is therefore wrapped in DECSC/DECRC. Leaving origin mode homes the
 * cursor too (and DECRC would restore the mode), so it is reset only when it is on, and the cursor then
 * goes to the last row, where what follows cannot overwrite the program's last lines.
 */
export function restoreSequence(t: TrackedState, holdsAltScreen = false): string {
  const parts: string[] = [];
  if (t.alt !== 0) {
    if (t.kittyAltDepth > 0) parts.push(`\x1b[<${t.kittyAltDepth}u`); // the alternate screen's levels, popped there
    if (!holdsAltScreen) parts.push(`\x1b[?${t.alt}l`);
  }
  parts.push('\x1b[?2026l'); // end synchronized output, or the terminal freezes until its timeout
  if (t.origin) parts.push('\x1b[?6l\x1b[9999;1H');
  if (t.hyperlink) parts.push('\x1b]8;;\x1b\\'); // close the program's open link
  parts.push(
    '\x1b7\x1b[r\x1b8', // full-screen scroll region, cursor kept in place
    '\x1b[?69l', // left and right margins
    '\x1b[0m', // default colours and attributes
    '\x1b[?9l\x1b[?1000l\x1b[?1002l\x1b[?1003l\x1b[?1005l\x1b[?1006l\x1b[?1015l\x1b[?1016l', // every mouse mode
    '\x1b[?2004l', // bracketed paste
    '\x1b[?1004l', // focus reporting
    '\x1b[?5522l', // paste events (the host's, when it set them)
    '\x1b[?1l\x1b>\x1b[?66l', // normal cursor keys, numeric keypad
    '\x1b[?5l', // normal (not reverse) video
    '\x1b[?45l', // reverse wraparound
    '\x1b[4l', // replace mode (IRM off)
    '\x1b[>4m', // modifyOtherKeys off
  );
  if (t.kittyDepth > 0) parts.push(`\x1b[<${t.kittyDepth}u`);
  if (t.kittySetAtBase) parts.push('\x1b[=0;1u');
  parts.push('\x1b(B\x1b)B\x1b*B\x1b+B\x0f'); // ASCII in G0-G3, G0 invoked (SI)
  if (t.palette) parts.push('\x1b]104\x1b\\');
  if (t.foreground) parts.push('\x1b]110\x1b\\');
  if (t.background) parts.push('\x1b]111\x1b\\');
  if (t.cursorColor) parts.push('\x1b]112\x1b\\');
  parts.push('\x1b[0 q'); // the terminal's default cursor style
  if (t.titlePushed) parts.push('\x1b[23;0t'); // pop the title pushed before the program's first one
  parts.push('\x1b[?7h', '\x1b[?25h'); // autowrap on, cursor visible
  // Last: leaving jackin's alternate screen gives back the operator's screen and cursor as they were.
  if (holdsAltScreen) parts.push('\x1b[?1049l');
  return parts.join('');
}
