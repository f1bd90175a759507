/**
 * The host's command palette in a session: the action registry, the palette's drawing on the operator's
 * terminal, and the input it takes while open. An action runs at once when chosen (so a key it sends
 * keeps its place among typed bytes); its failure becomes an error notice.
 *
 * Entries with a target (an offer, `readsTarget`) act on exactly what the palette drew before the key: at
 * each opening they start pending (drawn dim, not choosable) until their feature shows the target for that
 * opening, and the action gets the target the entry drew, held here, never a fresh answer of the capsule.
 */
import { Emitter, toDisposable, type Disposable } from '../../disposable.ts';
import type { NoticeLevel } from '../../protocol/index.ts';
import { hostDrawn } from '../../ui/host-draw.ts';
import type { PaletteOpening, SessionAction, ShownTarget, TargetEntry } from './feature-session.ts';
import type { InputEvent } from '../terminal/input-scan.ts';
import { Palette, type PaletteResult } from './palette.ts';
import type { HostTerminal } from '../terminal/terminal.ts';

export interface PaletteControllerOptions {
  /** `hostColours`: the operator's colours while the palette is up (the program's put back after). */
  terminal: Pick<HostTerminal, 'write' | 'size'> & Partial<Pick<HostTerminal, 'hostColours'>>;
  /** Called after the palette closed (the caller repaints the program's screen). */
  closed: () => void;
  /** Reports an action's failure. */
  notify: (level: NoticeLevel, text: string) => void;
  /**
   * Called as the palette opens: calls `ready` once the program's output is held (at once, or when the
   * capsule marked where it starts answering the program's queries, extension `held-replies`). The palette
   * takes keys at once and is drawn from `ready` on.
   */
  holdOutput?: (ready: () => void) => void;
}

export class PaletteController implements Disposable {
  readonly #palette = new Palette();
  readonly #actions = new Map<string, SessionAction>();
  readonly #owners = new Map<string, object>();
  readonly #chosen = new Emitter<SessionAction>();
  readonly #opened = new Emitter<PaletteOpening>();
  /** The opening in progress (its `current` turns false when the palette closes). */
  #opening: { current: boolean } = { current: false };
  /** What each entry with a target drew in this opening. */
  readonly #targets = new Map<string, { target: string | null; literal: boolean }>();
  #colours: Disposable | undefined;
  /** The palette is open and its output hold is in place: it is drawn. */
  #drawn = false;
  /** Counts openings, so a `ready` for an earlier one does nothing. */
  #openings = 0;
  /** The operator chose an action (fired before it runs). */
  readonly onChoose = this.#chosen.event;
  /** The palette opened. */
  readonly onOpen = this.#opened.event;

  readonly #o: PaletteControllerOptions;
  constructor(o: PaletteControllerOptions) {
    this.#o = o;
  }

  get isOpen(): boolean {
    return this.#palette.isOpen;
  }

  /** Adds (or replaces) an action; disposing removes it. */
  register(action: SessionAction): Disposable {
    this.#actions.set(action.id, action);
    // Who registered the id last: a retitle keeps the owner, a newer registration takes it over.
    const owner = {};
    this.#owners.set(action.id, owner);
    this.#targets.delete(action.id);
    // An entry with a target is pending until its feature shows one for an opening.
    this.#palette.register(
      action.readsTarget === undefined ? this.#shown(action) : { ...this.#shown(action), title: action.readsTarget.pendingTitle, pending: true },
    );
    return toDisposable(() => {
      if (this.#owners.get(action.id) !== owner) return;
      this.#owners.delete(action.id);
      this.#actions.delete(action.id);
      this.#palette.unregister(action.id);
    });
  }

  open(): void {
    this.#opening.current = false;
    const opening = { current: true };
    this.#opening = opening;
    // Entries with a target show none until their feature read it for this opening: never a stale one.
    this.#targets.clear();
    for (const a of this.#actions.values()) {
      if (a.readsTarget !== undefined) this.#palette.register({ ...this.#shown(a), title: a.readsTarget.pendingTitle, pending: true });
    }
    this.#palette.open();
    this.#drawn = false;
    const drawing = ++this.#openings;
    const ready = (): void => {
      if (drawing !== this.#openings || !this.#palette.isOpen || this.#drawn) return;
      this.#drawn = true;
      this.#colours ??= this.#o.terminal.hostColours?.();
      this.#draw();
    };
    if (this.#o.holdOutput) this.#o.holdOutput(ready);
    else ready();
    this.#opened.fire(opening);
  }

  /** Shows an entry's target for `opening` (a feature read it); the entry becomes choosable. */
  showTarget(id: string, opening: PaletteOpening, entry: TargetEntry): void {
    const action = this.#actions.get(id);
    if (opening !== this.#opening || !opening.current || action?.readsTarget === undefined) return;
    this.#targets.set(id, { target: entry.target, literal: entry.literal });
    this.#palette.register({ ...this.#shown(action), title: entry.title, ...(entry.suffix !== undefined ? { suffix: entry.suffix } : {}), pending: false });
    this.redraw();
  }

  #shown(action: SessionAction): { id: string; title: string; key?: string; prompt?: string } {
    return {
      id: action.id,
      title: action.title,
      ...(action.key !== undefined ? { key: action.key } : {}),
      ...(action.prompt !== undefined ? { prompt: action.prompt } : {}),
    };
  }

  /** True while the palette is open and drawn (the program's output is held). */
  get isShown(): boolean {
    return this.#palette.isOpen && this.#drawn;
  }

  /** Changes an action's title (an offer's target shown in its entry); redraws when open. */
  retitle(id: string, title: string): void {
    const action = this.#actions.get(id);
    // An entry with a target changes only through showTarget, which holds the target with the title.
    if (action === undefined || action.readsTarget !== undefined || action.title === title) return;
    const updated = { ...action, title };
    this.#actions.set(id, updated);
    const shown = this.#shown(updated);
    this.#palette.register(shown);
    this.redraw();
  }

  /** Draws the palette again (after a resize); a no-op while closed. */
  redraw(): void {
    if (this.isShown) this.#draw();
  }

  /**
   * One input event while the palette is open. Returns the typed bytes that followed the key that closed
   * the palette in the same event (keys typed quickly after an action's key), for the caller to route as
   * typed input: empty when there are none.
   */
  handle(ev: InputEvent): Buffer {
    let results: PaletteResult[];
    let rest: Buffer = Buffer.alloc(0);
    switch (ev.type) {
      case 'palette-key':
        results = [this.#palette.paletteKey()];
        break;
      case 'bytes':
        ({ results, rest } = this.#palette.inputKeys(ev.bytes));
        break;
      case 'paste':
        // Pasting into the palette's prompt (a path to export) is ordinary text entry; never an action.
        results = this.#palette.input(
          Buffer.from(
            ev.content
              .toString('utf8')
              .replace(/[\r\n]+/g, ' ')
              .trim(),
            'utf8',
          ),
        );
        break;
      default:
        results = [];
    }
    for (const r of results) {
      if (r.type === 'none') continue;
      if (r.type === 'pending') {
        // Nothing runs: the target is not drawn yet. The palette stays up and says why.
        const action = this.#actions.get(r.action.id);
        this.#palette.setStatus(action?.readsTarget?.whilePending() ?? null, r.action.id);
        continue;
      }
      // What an entry with a target drew, taken before the palette closes.
      const shown = r.type === 'run' ? this.#shownTarget(r.action.id) : undefined;
      this.#close();
      if (r.type === 'run') {
        const action = this.#actions.get(r.action.id);
        if (action) {
          this.#chosen.fire(action);
          this.#run(action, r.argument, shown);
        }
      }
      return rest;
    }
    if (this.isShown) this.#draw();
    return rest;
  }

  dispose(): void {
    this.#releaseColours();
    this.#chosen.dispose();
    this.#opened.dispose();
  }

  #shownTarget(id: string): ShownTarget | undefined {
    if (this.#actions.get(id)?.readsTarget === undefined) return undefined;
    const t = this.#targets.get(id);
    if (t === undefined) return { target: null, seen: false };
    // Seen only once the palette is drawn (it waits for the capsule's reply mark, up to a second): a key
    // pressed before that acted on nothing the operator saw, so the target is confirmed first.
    return { target: t.target, seen: this.#drawn && t.literal && this.#palette.titleShownWhole(id, this.#o.terminal.size().cols) };
  }

  #run(action: SessionAction, argument?: string, shown?: ShownTarget): void {
    const fail = (e: unknown) => this.#o.notify('error', `${action.title}: ${e instanceof Error ? e.message : String(e)}`);
    try {
      const p = action.run(argument, shown);
      if (p instanceof Promise) p.catch(fail);
    } catch (e) {
      fail(e);
    }
  }

  #draw(): void {
    const { rows, cols } = this.#o.terminal.size();
    // Drawn after resetting origin mode, insert mode, charsets and SGR (and the scroll region: the repaint
    // when the palette closes restores the program's), so no mode the program set can move or hide it.
    this.#o.terminal.write(Buffer.from(hostDrawn(this.#palette.render(rows, cols), true), 'utf8'));
  }

  /** Closes the palette; the caller has the capsule repaint the program's screen, which kept updating. */
  #close(): void {
    this.#opening.current = false;
    this.#palette.close();
    this.#drawn = false;
    this.#o.closed();
    this.#releaseColours();
  }

  #releaseColours(): void {
    const c = this.#colours;
    this.#colours = undefined;
    c?.dispose();
  }
}
