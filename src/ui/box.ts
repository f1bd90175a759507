/** A bordered box centred on the screen, drawn with absolute cursor moves (palette, confirmation). Pure. */
import { singleWidthAt } from './host-draw.ts';
import { textWidth } from './inert-text.ts';

export interface BoxOptions {
  readonly rows: number;
  readonly cols: number;
  /** Columns, borders included. */
  readonly width: number;
  /** Shown in the top border. */
  readonly title: string;
  /** SGR of the border. */
  readonly border: string;
  /** Each row inside the borders, already styled and exactly `width - 2` columns wide. */
  readonly inner: readonly string[];
}

/** The escape sequences that draw the box (cursor hidden), and where its top-left corner is (1-based). */
export function drawBox(o: BoxOptions): { text: string; top: number; left: number } {
  const inner = o.width - 2;
  const height = o.inner.length + 2;
  const top = Math.max(1, Math.floor((o.rows - height) / 2) + 1);
  const left = Math.max(1, Math.floor((o.cols - o.width) / 2) + 1);
  let s = '\x1b[?25l';
  s += `${singleWidthAt(top, left)}${o.border}┌─${o.title}${'─'.repeat(Math.max(0, inner - 1 - textWidth(o.title)))}┐`;
  o.inner.forEach((row, i) => {
    s += `${singleWidthAt(top + 1 + i, left)}${o.border}│${row}${o.border}│`;
  });
  s += `${singleWidthAt(top + height - 1, left)}${o.border}└${'─'.repeat(inner)}┘\x1b[0m`;
  return { text: s, top, left };
}
