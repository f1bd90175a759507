/**
 * Which of the host's modals has the operator's screen and keyboard: the confirmation prompt, a feature's
 * overlay (link hints) and the palette. The one place that decides, for all three, where an input event
 * goes, whether the program's output is held, and what a resize redraws; the session, its input router
 * and its notices ask it.
 *
 * Priorities: the prompt is above everything (it takes every input event, terminal replies too, and is
 * redrawn first). Below it, input goes to the overlay before the palette, and neither takes a terminal
 * reply (the router answers those); a resize redraws the palette before the overlay. Notices wait while
 * any is up.
 */
import type { FeatureOverlay } from './feature-session.ts';
import type { InputEvent } from '../terminal/input-scan.ts';
import type { ConfirmController } from './confirm-controller.ts';
import type { PaletteController } from './palette-controller.ts';

export interface ModalStackOptions {
  /** The host's confirmation prompt. */
  prompt?: Pick<ConfirmController, 'isOpen' | 'handle' | 'redraw'>;
  palette: Pick<PaletteController, 'isOpen' | 'isShown' | 'handle' | 'redraw'>;
  /** Draws a feature's overlay over the program's screen (a resize while it is up). */
  drawOverlay?: (overlay: FeatureOverlay) => void;
}

const NOTHING = Buffer.alloc(0);

export class ModalStack {
  #overlay: FeatureOverlay | null = null;

  readonly #o: ModalStackOptions;
  constructor(o: ModalStackOptions) {
    this.#o = o;
  }

  /** The feature's overlay that is up, or null. */
  get overlay(): FeatureOverlay | null {
    return this.#overlay;
  }

  /** Puts a feature's overlay up; one at a time (a second one replaces the first). */
  showOverlay(overlay: FeatureOverlay): void {
    this.#overlay = overlay;
  }

  /** Takes `overlay` down; false when it was no longer the one up (another replaced it). */
  hideOverlay(overlay: FeatureOverlay): boolean {
    if (this.#overlay !== overlay) return false;
    this.#overlay = null;
    return true;
  }

  /** The confirmation prompt is up: it takes every input event (whole reads, while input is held). */
  get promptOpen(): boolean {
    return this.#o.prompt?.isOpen === true;
  }

  /** Any modal is up: notices wait, and the capsule keeps answering the program's queries. */
  get anyOpen(): boolean {
    return this.#o.palette.isOpen || this.promptOpen || this.#overlay !== null;
  }

  /**
   * Whether a modal holds the program's output (the capsule's screen model keeps it; closing repaints).
   * `drawnPalette`: the palette holds it only once drawn (extension `held-replies`: the output before the
   * capsule's mark is still written), else from its opening.
   */
  holdsOutput(drawnPalette: boolean): boolean {
    if (this.promptOpen || this.#overlay !== null) return true;
    return drawnPalette ? this.#o.palette.isShown : this.#o.palette.isOpen;
  }

  /**
   * Gives an input event to the modal that has the keyboard. Returns null when none took it (none is up,
   * or a terminal reply under the overlay or the palette); else the typed bytes that followed the key that
   * closed it in the same event, the operator's next keys, to be routed as typed input (often none).
   */
  take(ev: InputEvent): Buffer | null {
    const prompt = this.#o.prompt;
    if (prompt?.isOpen === true) {
      prompt.handle(ev);
      return NOTHING;
    }
    if (ev.type === 'reply') return null;
    const overlay = this.#overlay;
    if (overlay !== null) return overlay.handle(ev) ?? NOTHING;
    if (this.#o.palette.isOpen) return this.#o.palette.handle(ev);
    return null;
  }

  /** Redraws the modal that is up (after a resize); false when none is. */
  redraw(): boolean {
    if (this.promptOpen) this.#o.prompt?.redraw();
    else if (this.#o.palette.isOpen) this.#o.palette.redraw();
    else if (this.#overlay !== null) this.#o.drawOverlay?.(this.#overlay);
    else return false;
    return true;
  }
}
