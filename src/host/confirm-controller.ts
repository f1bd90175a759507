/**
 * The host's confirmation prompt in a session: one question at a time, drawn by the host over the
 * program's screen (confirm-prompt.ts), answered with Enter or Esc. While it is up every input event goes
 * to it and nothing else happens; the caller holds the program's output, as for the palette, and has the
 * capsule repaint when it closes. Nothing is confirmed unless the operator pressed Enter: a second question
 * while one is up, the session ending, or a dispose all answer "no".
 */
import type { Disposable } from '../disposable.ts';
import { hostDrawn } from '../ui/host-draw.ts';
import { ConfirmPrompt, type ConfirmRequest } from './confirm-prompt.ts';
import type { InputEvent } from './input-scan.ts';
import type { HostTerminal } from './terminal.ts';

export interface ConfirmControllerOptions {
  terminal: Pick<HostTerminal, 'write' | 'size'>;
  /** Called after the prompt closed (the caller repaints the program's screen). */
  closed: () => void;
}

export class ConfirmController implements Disposable {
  private current: { prompt: ConfirmPrompt; answer: (yes: boolean) => void } | null = null;
  private disposed = false;

  constructor(private readonly o: ConfirmControllerOptions) {}

  get isOpen(): boolean {
    return this.current !== null;
  }

  /** Shows the question; resolves true only when the operator pressed Enter. */
  ask(request: ConfirmRequest): Promise<boolean> {
    if (this.disposed || this.current !== null) return Promise.resolve(false);
    return new Promise((resolve) => {
      this.current = { prompt: new ConfirmPrompt(request), answer: resolve };
      this.draw();
    });
  }

  /** One input event while the prompt is up. */
  handle(ev: InputEvent): void {
    const c = this.current;
    if (c === null) return;
    // Only typed bytes can answer: a paste, a mouse report or the palette key never does.
    if (ev.type !== 'bytes') return;
    const key = c.prompt.key(ev.bytes);
    if (key === 'ignore') return;
    this.close(key === 'confirm');
  }

  /** Draws the prompt again (after a resize). */
  redraw(): void {
    if (this.current !== null) this.draw();
  }

  dispose(): void {
    this.disposed = true;
    if (this.current !== null) {
      const { answer } = this.current;
      this.current = null;
      answer(false);
    }
  }

  private close(yes: boolean): void {
    const c = this.current;
    if (c === null) return;
    this.current = null;
    this.o.closed();
    c.answer(yes);
  }

  private draw(): void {
    const c = this.current;
    if (c === null) return;
    const { rows, cols } = this.o.terminal.size();
    this.o.terminal.write(Buffer.from(hostDrawn(c.prompt.render(rows, cols), true), 'utf8'));
  }
}
