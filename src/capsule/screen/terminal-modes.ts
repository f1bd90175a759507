/**
 * The pure part of the screen model's repaint: the program modes a client must mirror, the sequences that
 * reset and restore them, and the fix-up of the serialize addon's output (screen-model.ts).
 */
export type MouseTracking = 'none' | 'x10' | 'vt200' | 'drag' | 'any';
export type MouseEncoding = 'default' | 'utf8' | 'sgr' | 'urxvt' | 'sgr-pixels';

/** The program's terminal modes that a client must mirror (or that later features react to). */
export interface TerminalModes {
  alternateScreen: boolean;
  bracketedPaste: boolean;
  focusReporting: boolean;
  mouseTracking: MouseTracking;
  mouseEncoding: MouseEncoding;
  applicationCursorKeys: boolean;
  applicationKeypad: boolean;
  cursorVisible: boolean;
  /** DECSCUSR parameter (0 = terminal default). */
  cursorStyle: number;
  insertMode: boolean;
  originMode: boolean;
  autoWrap: boolean;
  reverseWraparound: boolean;
  /** DECSTBM region as 1-based inclusive rows, or null for the full screen. */
  scrollRegion: { top: number; bottom: number } | null;
}

export const MOUSE_ENCODINGS: ReadonlyMap<number, MouseEncoding> = new Map([
  [1005, 'utf8'],
  [1006, 'sgr'],
  [1015, 'urxvt'],
  [1016, 'sgr-pixels'],
]);

export const MOUSE_TRACKING_SET: Readonly<Record<MouseTracking, string>> = {
  none: '',
  x10: '\x1b[?9h',
  vt200: '\x1b[?1000h',
  drag: '\x1b[?1002h',
  any: '\x1b[?1003h',
};

export const MOUSE_ENCODING_SET: Readonly<Record<MouseEncoding, string>> = {
  default: '',
  utf8: '\x1b[?1005h',
  sgr: '\x1b[?1006h',
  urxvt: '\x1b[?1015h',
  'sgr-pixels': '\x1b[?1016h',
};

/**
 * Puts the client's terminal back to defaults without RIS (`ESC c`), which would also wipe the operator's
 * scrollback and, in some terminals, the window title: leave the alternate screen, DECSTR soft reset
 * (cursor visible, SGR, DECOM, DECAWM, IRM, DECCKM, scroll region), then turn off every mode DECSTR keeps.
 */
export const RESET_SEQUENCE =
  '\x1b[?1049l' +
  '\x1b[!p' +
  '\x1b[?9l\x1b[?1000l\x1b[?1002l\x1b[?1003l' +
  '\x1b[?1005l\x1b[?1006l\x1b[?1015l\x1b[?1016l' +
  '\x1b[?1004l\x1b[?2004l\x1b[?1l\x1b>\x1b[?25h\x1b[0 q\x1b[r';

const ALT_SCREEN_START = '\x1b[?1049h\x1b[H';

/**
 * The serialize addon ends each buffer's part with the program's current pen (SGR), and starts the
 * alternate screen's part assuming a default pen: so a pen left on by the program (vim leaves `ESC [4m`
 * on after drawing its cursorline) leaked into the alternate screen's first cells up to their first SGR
 * change. Minimal stream: `ESC[?1049h A ESC[4m` repainted an underlined `A`. An SGR reset between the two
 * parts fixes that; the pen restore at the very end (the active buffer's) is kept, so text the program
 * writes after a repaint without setting its colours again looks as it would have.
 * Cells never hold ESC, so the first ALT_SCREEN_START is the boundary.
 */
export function serializeScreens(serialized: string): string {
  const at = serialized.indexOf(ALT_SCREEN_START);
  return at < 0 ? serialized : `${serialized.slice(0, at)}\x1b[0m${serialized.slice(at)}`;
}
