/**
 * Mouse reports between the operator's terminal and the program (docs/terminal-policy.md, "Mouse"). The host
 * always asks the terminal for SGR reports (`?1006h`) while any mouse mode is on, whatever encoding the
 * program asked for: an SGR report is a complete CSI sequence, while the legacy one (`ESC [ M Cb Cx Cy`)
 * carries three raw bytes that, read as keys, were palette shortcuts (wheel-right is `c`, Copy offered
 * text; Ctrl+Shift+wheel-down is `u`, Open offered link). A report the host does not keep is handed to the
 * program in the encoding it asked for: SGR (1006), or the legacy X10/normal encoding. The UTF-8 (1005) and
 * urxvt (1015) encodings are never switched on: the filter drops them, so the program falls back to one of
 * these two. Pure.
 */

/** One report, as the input scanner parses it (the fields of its `mouse` event). */
export interface MouseReport {
  /** Button bits without modifiers and motion: 0 left, 1 middle, 2 right, 3 none, 64.. wheel, 128.. extra. */
  readonly button: number;
  /** 1-based cell column and row. */
  readonly x: number;
  readonly y: number;
  readonly press: boolean;
  readonly motion: boolean;
  readonly shift: boolean;
  readonly alt: boolean;
  readonly ctrl: boolean;
}

/** What the program asked for: its tracking mode (0: none; 9: X10) and whether it asked for SGR. */
export interface ProgramMouse {
  readonly mouse: number;
  readonly sgrMouse: boolean;
}

/** The legacy encoding's largest coordinate: 223 + 32 is the last byte value. */
export const LEGACY_MAX_COORD = 223;

/** The button code of SGR and legacy reports: button bits, shift 4, meta 8, ctrl 16, motion 32. */
export function mouseCode(r: MouseReport): number {
  return r.button | (r.shift ? 4 : 0) | (r.alt ? 8 : 0) | (r.ctrl ? 16 : 0) | (r.motion ? 32 : 0);
}

/** A report from a button code, as both encodings give it (release: `m` in SGR, button 3 in legacy). */
export function reportFromCode(code: number, x: number, y: number, press: boolean): MouseReport {
  return { button: code & ~(4 | 8 | 16 | 32), x, y, press, motion: (code & 32) !== 0, shift: (code & 4) !== 0, alt: (code & 8) !== 0, ctrl: (code & 16) !== 0 };
}

/**
 * The bytes the program gets for a report, in the encoding it asked for; empty when it asked for no mouse
 * reports, or when the legacy encoding cannot carry the report (a coordinate past 223, as xterm sends none).
 * X10 mode (9) reports presses only, without modifiers, as terminals do.
 */
export function encodeForProgram(r: MouseReport, p: ProgramMouse): Buffer {
  if (p.mouse === 0) return Buffer.alloc(0);
  const x10 = p.mouse === 9;
  if (x10 && (!r.press || r.motion)) return Buffer.alloc(0);
  const code = x10 ? r.button : mouseCode(r);
  if (p.sgrMouse) return Buffer.from(`\x1b[<${code};${r.x};${r.y}${r.press ? 'M' : 'm'}`, 'latin1');
  if (r.x < 1 || r.y < 1 || r.x > LEGACY_MAX_COORD || r.y > LEGACY_MAX_COORD) return Buffer.alloc(0);
  // A release in the legacy encoding is button 3 (which button is not said); a wheel has no release.
  if (!r.press && r.button >= 64 && r.button < 128) return Buffer.alloc(0);
  const cb = r.press ? code : (code & ~3 & ~(64 | 128)) | 3;
  if (cb + 32 > 0xff) return Buffer.alloc(0);
  return Buffer.from([0x1b, 0x5b, 0x4d, cb + 32, r.x + 32, r.y + 32]);
}
