/**
 * What the host writes around anything it draws over the program's screen (palette, prompts, notices),
 * so the program cannot move, hide or restyle it: a program that set origin mode inside a scroll region
 * (`ESC[39;40r ESC[?6h`) would otherwise have every absolute row of the palette clamped into its two lines
 * and could draw a fake palette where the real one belongs; a program that left DEC line drawing in G0,
 * insert mode or concealed text would garble or hide it, and one that left a hyperlink open would make it a
 * link. Pure.
 */

/**
 * Save the cursor (DECSC also saves SGR, the character sets, origin mode and the wrap flag), then: origin
 * mode off (DECOM: rows are absolute again), insert mode off (IRM), G0 = ASCII and shifted in, SGR reset,
 * left/right margins off (DECLRMM, `?69l`: with margins set, text past the right one wraps or is lost; the
 * program's come back after, see the filter's layoutRestore), a synchronized update the program began ended
 * (`?2026l`: until its end the terminal would not show what the host draws, and the end may never come), and
 * any hyperlink (OSC 8) the program left open closed, or the host's text would be a link to the program's
 * target (a notice naming one URL while a click on it opens another). The program's link stays closed after:
 * the rest of its label is plain text.
 */
const HOST_DRAW_BEGIN = '\x1b7\x1b[?6l\x1b[4l\x1b(B\x0f\x1b[0m\x1b[?69l\x1b[?2026l\x1b]8;;\x1b\\';
/** Back to the program's cursor, SGR, character sets and origin mode (DECRC). */
const HOST_DRAW_END = '\x1b[0m\x1b8';
/**
 * For boxes shown while the program's output is held and removed by a repaint (palette, confirmation):
 * the scroll region is reset too; the capsule's repaint puts the program's back. Notices, drawn while the
 * program runs, keep the program's region: they are placed with absolute moves and never line-feed, which
 * is all a region could change once origin mode is off.
 */
const HOST_OVERLAY_BEGIN = `${HOST_DRAW_BEGIN}\x1b[r`;

/**
 * The cursor at `row`, `col` on a single-width line: DECSWL (`ESC # 5`) first, at column 1 (on a
 * double-width line a terminal keeps the cursor in its left half), since a row the program made double width
 * or double height (`ESC # 3/4/6`) would show only the left half of what the host draws there. The row
 * stays single width after; the program's next drawing of it decides again.
 */
export function singleWidthAt(row: number, col: number): string {
  return `\x1b[${row};1H\x1b#5\x1b[${row};${col}H`;
}

/**
 * Whether the host draws in colour: the one process-wide setting of this module, set once when a session
 * starts, from the environment (colourFromEnv). The palette, prompts and notices each build their own
 * styles, and all of them pass through hostDrawn.
 */
let colour = true;

export function setHostColour(on: boolean): void {
  colour = on;
}

/** False when NO_COLOR is set to anything but the empty string (https://no-color.org). */
export function colourFromEnv(env: Readonly<Record<string, string | undefined>>): boolean {
  return (env['NO_COLOR'] ?? '') === '';
}

/** One SGR's parameters without colours: a coloured background becomes reverse video, grey text faint. */
function monochromeSgr(params: string): string {
  const out: string[] = [];
  const list = params === '' ? ['0'] : params.split(';');
  for (let i = 0; i < list.length; i++) {
    const p = Number(list[i]);
    if (p === 38 || p === 48) {
      // 38;5;n / 48;5;n and 38;2;r;g;b / 48;2;r;g;b
      i += list[i + 1] === '5' ? 2 : list[i + 1] === '2' ? 4 : 1;
      if (p === 48) out.push('7');
    } else if ((p >= 41 && p <= 47) || (p >= 101 && p <= 107)) out.push('7');
    else if (p === 90) out.push('2');
    else if (!((p >= 30 && p <= 40) || (p >= 91 && p <= 97) || p === 100)) out.push(list[i]!);
  }
  return [...new Set(out)].join(';');
}

/** `text` with every colour of its SGR sequences dropped (bold, faint, underline and reverse kept). */
export function withoutColour(text: string): string {
  return text.replace(/\x1b\[([0-9;]*)m/gu, (_, params: string) => `\x1b[${monochromeSgr(params)}m`);
}

/**
 * `body` (cursor-addressed drawing) wrapped so it lands where it says whatever modes the program set.
 * `after` (not for overlays) follows the end: what gives the program back the state the begin reset.
 */
export function hostDrawn(body: string, overlay = false, after = ''): string {
  return `${overlay ? HOST_OVERLAY_BEGIN : HOST_DRAW_BEGIN}${colour ? body : withoutColour(body)}${overlay ? '' : HOST_DRAW_END + after}`;
}
