/**
 * The host's notice overlay (the counterpart of capsule/connection/overlay-notices.ts): a NoticeBoard (the host's own
 * notices, and the container's in their own rate-limited queue) drawn in the top-right corner of the
 * operator's terminal over the program's screen, with its timers. A notice is removed by asking the capsule
 * to repaint the program's screen, and drawn again right after each batch of program output (a program
 * that rewrote row 1 every 5 ms used to keep a redraw that waited for quiet output from ever running). Nothing is drawn while one of the host's
 * modals is up (modal-stack.ts). An upstream capsule cannot repaint: there a notice stays until the program draws over it.
 */
import { DisposableStore, toDisposable, type Disposable } from '../../disposable.ts';
import type { NoticeLevel } from '../../protocol/index.ts';
import { renderNotice } from '../../ui/notices.ts';
import { NoticeBoard, type NoticeSource } from './notice-board.ts';
import type { HostTerminal } from '../terminal/terminal.ts';
import type { ModalStack } from './modal-stack.ts';

/** After the screen under the overlay changed (a resize, the palette closed), the notice is redrawn this long after. */
const NOTICE_REDRAW_MS = 30;

export interface NoticeOverlayOptions {
  /** `hostColours`: the operator's colours while a notice is up (the program's put back after). */
  terminal: Pick<HostTerminal, 'write' | 'size'> & Partial<Pick<HostTerminal, 'hostColours' | 'layoutRestore'>>;
  /** The host's modals: while one covers the screen (the palette, a confirmation, a feature's overlay), notices wait. */
  modals: Pick<ModalStack, 'anyOpen'>;
  /** Asks the capsule to repaint the program's screen (removes a notice). */
  repaint: () => void;
  now?: () => number;
}

export class NoticeOverlay implements Disposable {
  readonly #queue: NoticeBoard;
  readonly #store = new DisposableStore();
  #expiryTimer: NodeJS.Timeout | undefined;
  #redrawTimer: NodeJS.Timeout | undefined;
  #immediate: NodeJS.Immediate | undefined;
  #colours: Disposable | undefined;

  readonly #o: NoticeOverlayOptions;
  constructor(o: NoticeOverlayOptions) {
    this.#o = o;
    this.#queue = new NoticeBoard(o.now);
    this.#store.add(
      toDisposable(() => {
        clearTimeout(this.#expiryTimer);
        clearTimeout(this.#redrawTimer);
        clearImmediate(this.#immediate);
        this.#releaseColours();
      }),
    );
  }

  /** Queues a notice (made inert); draws it now when it is the one to show. */
  post(level: NoticeLevel, text: string, from: NoticeSource = 'host'): void {
    if (this.#store.isDisposed) return;
    if (this.#queue.post(level, text, from)) this.#draw();
    this.#scheduleExpiry();
  }

  /**
   * Program output was just written and may have drawn over the notice: draw it again right after, once
   * per turn of the event loop (all the frames of one read), so output cannot keep it hidden.
   */
  afterOutput(): void {
    if (this.#queue.current === null || this.#store.isDisposed || this.#immediate !== undefined) return;
    this.#immediate = setImmediate(() => {
      this.#immediate = undefined;
      this.#draw();
    });
  }

  /** The screen under the overlay changed (resize, the palette closed): redraw shortly. */
  redrawSoon(): void {
    if (this.#queue.current === null || this.#store.isDisposed || this.#redrawTimer !== undefined) return;
    this.#redrawTimer = setTimeout(() => {
      this.#redrawTimer = undefined;
      this.#draw();
    }, NOTICE_REDRAW_MS);
  }

  /**
   * Takes back a host notice before its time (the keys hint, at the operator's first key): when it was on
   * screen, the program's screen is repainted over it and the next notice, if any, drawn.
   */
  withdraw(text: string): void {
    if (this.#store.isDisposed || !this.#queue.withdraw(text)) return;
    if (!this.#o.modals.anyOpen) this.#o.repaint();
    if (this.#queue.current === null) this.#releaseColours();
    this.redrawSoon();
    this.#scheduleExpiry();
  }

  /** Notices waiting behind the one drawn. */
  get pending(): number {
    return this.#queue.pending;
  }

  dispose(): void {
    this.#store.dispose();
  }

  #draw(): void {
    const n = this.#queue.current;
    if (n === null || this.#o.modals.anyOpen || this.#store.isDisposed) return;
    this.#colours ??= this.#o.terminal.hostColours?.();
    this.#o.terminal.write(Buffer.from(renderNotice(n, this.#o.terminal.size().cols, this.#o.terminal.layoutRestore?.() ?? ''), 'utf8'));
  }

  #releaseColours(): void {
    const c = this.#colours;
    this.#colours = undefined;
    c?.dispose();
  }

  #scheduleExpiry(): void {
    clearTimeout(this.#expiryTimer);
    const deadline = this.#queue.deadline;
    if (deadline === null) return;
    const now = (this.#o.now ?? Date.now)();
    this.#expiryTimer = setTimeout(
      () => {
        if (this.#queue.tick()) {
          // Remove the old notice by repainting the program's screen, then draw the next one (if any) over it.
          if (!this.#o.modals.anyOpen) this.#o.repaint();
          if (this.#queue.current === null) this.#releaseColours();
          this.redrawSoon();
        }
        this.#scheduleExpiry();
      },
      Math.max(0, deadline - now),
    );
  }
}
