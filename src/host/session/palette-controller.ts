/**
 * The host's command palette in a session: the action registry, the palette's drawing on the operator's
 * terminal, and the input it takes while open. An action runs at once when chosen (so a key it sends
 * keeps its place among typed bytes); its failure becomes an error notice.
 */
import { Emitter, toDisposable, type Disposable } from '../../disposable.ts';
import type { NoticeLevel } from '../../protocol/index.ts';
import { hostDrawn } from '../../ui/host-draw.ts';
import type { SessionAction } from './feature-session.ts';
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
  private readonly palette = new Palette();
  private readonly actions = new Map<string, SessionAction>();
  private readonly owners = new Map<string, object>();
  private readonly chosen = new Emitter<SessionAction>();
  private readonly opened = new Emitter<void>();
  private colours: Disposable | undefined;
  /** The palette is open and its output hold is in place: it is drawn. */
  private shown = false;
  /** Counts openings, so a `ready` for an earlier one does nothing. */
  private openings = 0;
  /** The operator chose an action (fired before it runs). */
  readonly onChoose = this.chosen.event;
  /** The palette opened. */
  readonly onOpen = this.opened.event;

  constructor(private readonly o: PaletteControllerOptions) {}

  get isOpen(): boolean {
    return this.palette.isOpen;
  }

  /** Adds (or replaces) an action; disposing removes it. */
  register(action: SessionAction): Disposable {
    this.actions.set(action.id, action);
    // Who registered the id last: a retitle keeps the owner, a newer registration takes it over.
    const owner = {};
    this.owners.set(action.id, owner);
    const { run: _run, ...shown } = action;
    this.palette.register(shown);
    return toDisposable(() => {
      if (this.owners.get(action.id) !== owner) return;
      this.owners.delete(action.id);
      this.actions.delete(action.id);
      this.palette.unregister(action.id);
    });
  }

  open(): void {
    this.palette.open();
    this.shown = false;
    const opening = ++this.openings;
    const ready = (): void => {
      if (opening !== this.openings || !this.palette.isOpen || this.shown) return;
      this.shown = true;
      this.colours ??= this.o.terminal.hostColours?.();
      this.draw();
    };
    if (this.o.holdOutput) this.o.holdOutput(ready);
    else ready();
    this.opened.fire();
  }

  /** True while the palette is open and drawn (the program's output is held). */
  get isShown(): boolean {
    return this.palette.isOpen && this.shown;
  }

  /** Changes an action's title (an offer's target shown in its entry); redraws when open. */
  retitle(id: string, title: string): void {
    const action = this.actions.get(id);
    if (action === undefined || action.title === title) return;
    const updated = { ...action, title };
    this.actions.set(id, updated);
    const { run: _run, ...shown } = updated;
    this.palette.register(shown);
    this.redraw();
  }

  /** Draws the palette again (after a resize); a no-op while closed. */
  redraw(): void {
    if (this.isShown) this.draw();
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
        results = [this.palette.paletteKey()];
        break;
      case 'bytes':
        ({ results, rest } = this.palette.inputKeys(ev.bytes));
        break;
      case 'paste':
        // Pasting into the palette's prompt (a path to export) is ordinary text entry; never an action.
        results = this.palette.input(Buffer.from(ev.content.toString('utf8').replace(/[\r\n]+/g, ' ').trim(), 'utf8'));
        break;
      default:
        results = [];
    }
    for (const r of results) {
      if (r.type === 'none') continue;
      this.close();
      if (r.type === 'run') {
        const action = this.actions.get(r.action.id);
        if (action) {
          this.chosen.fire(action);
          this.run(action, r.argument);
        }
      }
      return rest;
    }
    if (this.isShown) this.draw();
    return rest;
  }

  dispose(): void {
    this.releaseColours();
    this.chosen.dispose();
    this.opened.dispose();
  }

  private run(action: SessionAction, argument?: string): void {
    const fail = (e: unknown) => this.o.notify('error', `${action.title}: ${e instanceof Error ? e.message : String(e)}`);
    try {
      const p = action.run(argument);
      if (p instanceof Promise) p.catch(fail);
    } catch (e) {
      fail(e);
    }
  }

  private draw(): void {
    const { rows, cols } = this.o.terminal.size();
    // Drawn after resetting origin mode, insert mode, charsets and SGR (and the scroll region: the repaint
    // when the palette closes restores the program's), so no mode the program set can move or hide it.
    this.o.terminal.write(Buffer.from(hostDrawn(this.palette.render(rows, cols), true), 'utf8'));
  }

  /** Closes the palette; the caller has the capsule repaint the program's screen, which kept updating. */
  private close(): void {
    this.palette.close();
    this.shown = false;
    this.o.closed();
    this.releaseColours();
  }

  private releaseColours(): void {
    const c = this.colours;
    this.colours = undefined;
    c?.dispose();
  }
}
