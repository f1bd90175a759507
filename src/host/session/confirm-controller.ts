/**
 * The host's confirmation prompt in a session: one question at a time, drawn by the host over the
 * program's screen (confirm-prompt.ts), answered with Enter or Esc. While it is up every input event goes
 * to it and nothing else happens; the caller holds the program's output, as for the palette, and has the
 * capsule repaint when it closes. Nothing is confirmed unless the operator pressed Enter once the prompt had
 * been up for CONFIRM_ARM_MS: a second question while one is up, the session ending, or a dispose all
 * answer "no".
 */
import { performance } from 'node:perf_hooks';
import type { Disposable } from '../../disposable.ts';
import { hostDrawn } from '../../ui/host-draw.ts';
import { ConfirmPrompt, type ConfirmRequest } from './confirm-prompt.ts';
import type { InputEvent } from '../terminal/input-scan.ts';
import type { HostTerminal } from '../terminal/terminal.ts';

/**
 * An Enter this soon after the prompt appeared does not confirm (it is ignored; Esc still cancels). The
 * prompt appears when the capsule answers a lookup, and the capsule sees the operator's typing: it can hold
 * its answer until a command line is nearly typed, so the Enter meant for the program lands on the prompt.
 * Nobody reads a target and decides in less than this; browsers arm their download buttons the same way.
 */
export const CONFIRM_ARM_MS = 500;

export interface ConfirmControllerOptions {
  /** `hostColours`: the operator's colours while the prompt is up (the program's put back after). */
  terminal: Pick<HostTerminal, 'write' | 'size'> & Partial<Pick<HostTerminal, 'hostColours'>>;
  /** Called after the prompt closed (the caller repaints the program's screen). */
  closed: () => void;
  /** Monotonic clock in milliseconds; injected by tests. */
  now?: () => number;
}

export class ConfirmController implements Disposable {
  #current: { prompt: ConfirmPrompt; answer: (yes: boolean) => void; shownAt: number; colours: Disposable | undefined } | null = null;
  #disposed = false;
  readonly #now: () => number;

  readonly #o: ConfirmControllerOptions;
  constructor(o: ConfirmControllerOptions) {
    this.#o = o;
    this.#now = o.now ?? (() => performance.now());
  }

  get isOpen(): boolean {
    return this.#current !== null;
  }

  /** Shows the question; resolves true only when the operator pressed Enter. */
  ask(request: ConfirmRequest): Promise<boolean> {
    if (this.#disposed || this.#current !== null) return Promise.resolve(false);
    return new Promise((resolve) => {
      this.#current = { prompt: new ConfirmPrompt(request), answer: resolve, shownAt: this.#now(), colours: this.#o.terminal.hostColours?.() };
      this.#draw();
    });
  }

  /** One input event while the prompt is up. */
  handle(ev: InputEvent): void {
    const c = this.#current;
    if (c === null) return;
    // Only typed bytes can answer: a paste, a mouse report or the palette key never does.
    if (ev.type !== 'bytes') return;
    const key = c.prompt.key(ev.bytes);
    if (key === 'ignore') return;
    // Typed before the operator could have read the prompt: meant for the program, never a confirmation.
    if (key === 'confirm' && this.#now() - c.shownAt < CONFIRM_ARM_MS) return;
    this.#close(key === 'confirm');
  }

  /** Draws the prompt again (after a resize). */
  redraw(): void {
    if (this.#current !== null) this.#draw();
  }

  dispose(): void {
    this.#disposed = true;
    if (this.#current !== null) {
      const { answer, colours } = this.#current;
      this.#current = null;
      colours?.dispose();
      answer(false);
    }
  }

  #close(yes: boolean): void {
    const c = this.#current;
    if (c === null) return;
    this.#current = null;
    this.#o.closed();
    c.colours?.dispose();
    c.answer(yes);
  }

  #draw(): void {
    const c = this.#current;
    if (c === null) return;
    const { rows, cols } = this.#o.terminal.size();
    this.#o.terminal.write(Buffer.from(hostDrawn(c.prompt.render(rows, cols), true), 'utf8'));
  }
}
