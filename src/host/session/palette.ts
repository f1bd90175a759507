/**
 * The command palette: a list of host actions drawn by the host over the session. Pure state and rendering;
 * the attach client feeds it keys and runs what it returns.
 *
 * Keys: with an empty filter, an action's one-key shortcut runs it at once (so `Ctrl+\ d` detaches and
 * `Ctrl+\ Ctrl+\` sends one literal `Ctrl+\`, as before the palette existed); any other printable key starts
 * the filter. Up/Down move, Enter runs the selection, Backspace edits the filter, Esc clears the filter or
 * closes. An action with a prompt opens a one-line text field (ordinary editing; Enter submits, Esc cancels).
 *
 * An entry whose target is still being read (an offer the capsule has not answered yet) is `pending`: drawn
 * dim, and choosing it runs nothing (the result says so; the caller puts a line in the palette's footer
 * with `setStatus`), so the key cannot act on a target the palette has not shown.
 */
import { drawBox } from '../../ui/box.ts';
import { decodeKeyEnds, type Key } from '../terminal/keys.ts';
import { cutColumns, padColumns, textWidth } from '../../ui/inert-text.ts';

/** Width of the palette box (columns, borders included) when the screen has room and no entry needs more. */
const PALETTE_MAX_WIDTH = 64;
/**
 * Widest the box grows for a longer entry ("Open offered link: http://localhost:7803/ (forwards port 7803)"
 * is 62 columns); a title longer still is cut, and its entry then counts as not shown whole.
 */
const PALETTE_WIDEST = 80;
/** Columns of an entry's row besides its title: inside the borders, a space, the key column and a space. */
const ENTRY_COLUMNS = 1 + 7 + 1;
/** Longest action title shown whole in a box of the usual width. */
export const PALETTE_MAX_TITLE_COLUMNS = PALETTE_MAX_WIDTH - 2 - ENTRY_COLUMNS;

export interface PaletteAction {
  id: string;
  title: string;
  /** One printable character, or `palette` for the palette key itself. */
  key?: string;
  /** When set, the action asks for one line of text first. */
  prompt?: string;
  /** Drawn dim and cannot be chosen: what the entry acts on is still being read. */
  pending?: boolean;
  /** Drawn after the title and never cut (what choosing the entry also does, "(forwards port 7803)"). */
  suffix?: string;
}

/** An entry's title as drawn in `columns`: cut (with …) so that its suffix always shows whole. */
function entryTitle(a: Pick<PaletteAction, 'title' | 'suffix'>, columns: number): { text: string; whole: boolean } {
  const suffix = a.suffix ?? '';
  const room = Math.max(1, columns - textWidth(suffix));
  const whole = textWidth(a.title) <= room;
  return { text: `${whole ? a.title : cutColumns(a.title, room)}${suffix}`, whole };
}

export type PaletteResult =
  | { type: 'none' }
  | { type: 'close' }
  | { type: 'run'; action: PaletteAction; argument?: string }
  /** A pending entry was chosen: nothing runs, the palette stays open. */
  | { type: 'pending'; action: PaletteAction };

interface PromptState {
  action: PaletteAction;
  text: string;
  cursor: number;
}

const PALETTE_KEY_LABEL = 'Ctrl+\\';

export class Palette {
  #actions: PaletteAction[] = [];
  #filter = '';
  #filtering = false;
  #selected = 0;
  #prompt: PromptState | null = null;
  #openState = false;
  /** A line shown in the footer instead of the key help (why a chosen entry did not run), and that entry. */
  #status: { text: string; about: string } | null = null;

  constructor(actions: PaletteAction[] = []) {
    this.#actions = [...actions];
  }

  register(action: PaletteAction): void {
    const at = this.#actions.findIndex((a) => a.id === action.id);
    // The entry the line is about is no longer pending (its target was read): the line no longer holds.
    if (this.#status?.about === action.id && action.pending !== true) this.#status = null;
    if (at >= 0) this.#actions[at] = action;
    else this.#actions.push(action);
  }

  unregister(id: string): void {
    this.#actions = this.#actions.filter((a) => a.id !== id);
    this.#selected = 0;
  }

  get isOpen(): boolean {
    return this.#openState;
  }

  /** Shows `text` in the footer, about entry `about`, until the palette closes or that entry is no longer pending. */
  setStatus(text: string | null, about: string): void {
    this.#status = text === null ? null : { text, about };
  }

  /** The entry's title is drawn whole on a screen `cols` wide (not cut short of its end). */
  titleShownWhole(id: string, cols: number): boolean {
    const a = this.#actions.find((x) => x.id === id);
    return a !== undefined && entryTitle(a, this.#width(cols) - 2 - ENTRY_COLUMNS).whole;
  }

  /** The box's width on a screen `cols` wide: the usual, or wider for the longest entry (all of them, so a filter never changes it). */
  #width(cols: number): number {
    const longest = Math.max(0, ...this.#actions.map((a) => textWidth(a.title) + textWidth(a.suffix ?? '')));
    const wanted = Math.min(PALETTE_WIDEST, Math.max(PALETTE_MAX_WIDTH, longest + ENTRY_COLUMNS + 2));
    return Math.max(20, Math.min(cols - 2, wanted));
  }

  open(): void {
    this.#openState = true;
    this.#status = null;
    this.#filter = '';
    this.#filtering = false;
    this.#selected = 0;
    this.#prompt = null;
  }

  close(): void {
    this.#openState = false;
    this.#prompt = null;
    this.#status = null;
  }

  /** The actions shown for the current filter (case-insensitive substring of title or id). */
  visible(): PaletteAction[] {
    const f = this.#filter.toLowerCase();
    if (f === '') return this.#actions;
    return this.#actions.filter((a) => a.title.toLowerCase().includes(f) || a.id.includes(f));
  }

  /** The palette key pressed while the palette is open. */
  paletteKey(): PaletteResult {
    if (this.#prompt) return { type: 'none' };
    const a = this.#actions.find((x) => x.key === 'palette');
    return a ? this.#choose(a) : { type: 'none' };
  }

  /** Feeds raw key bytes; returns what the caller must do, in order. */
  input(bytes: Buffer): PaletteResult[] {
    return this.inputKeys(bytes).results;
  }

  /**
   * Feeds raw key bytes until the palette closes; `rest` is what follows the key that closed it (typed in
   * the same read: the operator's next keys, which the caller routes as typed input), empty otherwise.
   */
  inputKeys(bytes: Buffer): { results: PaletteResult[]; rest: Buffer } {
    const results: PaletteResult[] = [];
    for (const { key, end } of decodeKeyEnds(bytes)) {
      if (!this.#openState) break;
      const r = this.#prompt ? this.#promptKey(this.#prompt, key) : this.#listKey(key);
      if (r.type !== 'none') results.push(r);
      if (!this.#openState) return { results, rest: bytes.subarray(end) };
    }
    return { results, rest: bytes.subarray(bytes.length) };
  }

  #choose(a: PaletteAction): PaletteResult {
    if (a.pending === true) return { type: 'pending', action: a };
    if (a.prompt !== undefined) {
      this.#prompt = { action: a, text: '', cursor: 0 };
      return { type: 'none' };
    }
    this.close();
    return { type: 'run', action: a };
  }

  #listKey(key: Key): PaletteResult {
    const list = this.visible();
    switch (key.name) {
      case 'escape':
        if (this.#filtering) {
          this.#filter = '';
          this.#filtering = false;
          this.#selected = 0;
          return { type: 'none' };
        }
        this.close();
        return { type: 'close' };
      case 'ctrl-c':
        this.close();
        return { type: 'close' };
      case 'up':
        this.#selected = list.length === 0 ? 0 : (this.#selected - 1 + list.length) % list.length;
        return { type: 'none' };
      case 'down':
      case 'tab':
        this.#selected = list.length === 0 ? 0 : (this.#selected + 1) % list.length;
        return { type: 'none' };
      case 'enter': {
        const a = list[this.#selected];
        return a ? this.#choose(a) : { type: 'none' };
      }
      case 'backspace':
        this.#filter = [...this.#filter].slice(0, -1).join('');
        if (this.#filter === '') this.#filtering = false;
        this.#selected = 0;
        return { type: 'none' };
      case 'char': {
        if (!this.#filtering) {
          const a = this.#actions.find((x) => x.key === key.text);
          if (a) return this.#choose(a);
          this.#filtering = true;
          if (key.text === '/') return { type: 'none' };
        }
        this.#filter += key.text;
        this.#selected = 0;
        return { type: 'none' };
      }
      default:
        return { type: 'none' };
    }
  }

  #promptKey(p: PromptState, key: Key): PaletteResult {
    const chars = [...p.text];
    switch (key.name) {
      case 'escape':
      case 'ctrl-c':
        this.#prompt = null;
        return { type: 'none' };
      case 'enter': {
        const argument = p.text.trim();
        if (argument === '') return { type: 'none' };
        this.close();
        return { type: 'run', action: p.action, argument };
      }
      case 'char':
        chars.splice(p.cursor, 0, key.text);
        p.cursor += 1;
        break;
      case 'backspace':
        if (p.cursor > 0) {
          chars.splice(p.cursor - 1, 1);
          p.cursor -= 1;
        }
        break;
      case 'delete':
        chars.splice(p.cursor, 1);
        break;
      case 'left':
        p.cursor = Math.max(0, p.cursor - 1);
        break;
      case 'right':
        p.cursor = Math.min(chars.length, p.cursor + 1);
        break;
      case 'home':
      case 'ctrl-a':
        p.cursor = 0;
        break;
      case 'end':
      case 'ctrl-e':
        p.cursor = chars.length;
        break;
      case 'ctrl-u':
        chars.splice(0, p.cursor);
        p.cursor = 0;
        break;
      case 'ctrl-k':
        chars.splice(p.cursor);
        break;
      case 'ctrl-w': {
        let i = p.cursor;
        while (i > 0 && chars[i - 1] === ' ') i--;
        while (i > 0 && chars[i - 1] !== ' ') i--;
        chars.splice(i, p.cursor - i);
        p.cursor = i;
        break;
      }
      default:
        return { type: 'none' };
    }
    p.text = chars.join('');
    return { type: 'none' };
  }

  /** Escape sequences that draw the palette as a box in the middle of a rows × cols screen. */
  render(rows: number, cols: number): string {
    const width = this.#width(cols);
    const inner = width - 2;
    const list = this.visible();
    const maxItems = Math.max(1, rows - 7);
    const first = Math.max(0, Math.min(this.#selected - maxItems + 1, list.length - maxItems));
    const shown = list.slice(first, first + maxItems);
    const lines: Array<{ text: string; style: string }> = [];
    const border = '\x1b[0;36m';
    const body = '\x1b[0;37;40m';
    const sel = '\x1b[0;30;46m';
    const dim = '\x1b[0;90;40m';
    if (this.#prompt) {
      lines.push({ text: ` ${this.#prompt.action.prompt ?? this.#prompt.action.title}`, style: body });
      lines.push({ text: ` > ${this.#prompt.text}`, style: body });
      const fullHeight = 1 + Math.min(this.#actions.length, maxItems);
      while (lines.length < fullHeight) lines.push({ text: '', style: body });
      lines.push({ text: ' Enter run · Esc back', style: dim });
    } else {
      const f = this.#filtering ? `/${this.#filter}` : 'type to filter';
      lines.push({ text: ` ${f}`, style: this.#filtering ? body : dim });
      if (shown.length === 0) lines.push({ text: '  no matching action', style: dim });
      shown.forEach((a, i) => {
        const key = a.key === 'palette' ? PALETTE_KEY_LABEL : (a.key ?? '');
        const text = ` ${padColumns(key, 7)} ${entryTitle(a, inner - ENTRY_COLUMNS).text}`;
        lines.push({ text, style: first + i === this.#selected ? sel : a.pending === true ? dim : body });
      });
      // The box keeps the height of the full list, so a narrower filter never leaves old borders behind.
      const fullHeight = 1 + Math.min(this.#actions.length, maxItems);
      while (lines.length < fullHeight) lines.push({ text: '', style: body });
      lines.push(this.#status === null ? { text: ' ↑↓ select · Enter run · Esc close', style: dim } : { text: ` ${this.#status.text}`, style: body });
    }
    const box = drawBox({ rows, cols, width, title: ' jackin ', border, inner: lines.map((l) => `${l.style}${padColumns(cutColumns(l.text, inner), inner)}`) });
    let s = box.text;
    const { top, left } = box;
    if (this.#prompt) {
      const before = [...this.#prompt.text].slice(0, this.#prompt.cursor).join('');
      const col = left + 1 + 3 + textWidth(before);
      s += `\x1b[${top + 2};${Math.min(col, left + inner)}H\x1b[?25h`;
    }
    return s;
  }
}
