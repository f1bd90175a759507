/**
 * The host's notice overlay (the counterpart of capsule/overlay-notices.ts): a NoticeQueue drawn in the
 * top-right corner of the operator's terminal over the program's screen, with its timers. A notice is
 * removed by asking the capsule to repaint the program's screen, and redrawn once the program's output
 * has been quiet for a moment (output draws over it). Nothing is drawn while the palette is open.
 */
import { DisposableStore, toDisposable, type Disposable } from '../disposable.ts';
import type { NoticeLevel } from '../protocol/index.ts';
import { NoticeQueue, renderNotice } from '../ui/notices.ts';
import type { HostTerminal } from './terminal.ts';

/** After the overlay changes, notices are redrawn once output has been quiet this long. */
export const NOTICE_REDRAW_MS = 30;

export interface NoticeOverlayOptions {
  terminal: Pick<HostTerminal, 'write' | 'size'>;
  /** True while the palette covers the screen (notices wait). */
  paletteOpen: () => boolean;
  /** Asks the capsule to repaint the program's screen (removes a notice). */
  repaint: () => void;
  now?: () => number;
}

export class NoticeOverlay implements Disposable {
  private readonly queue: NoticeQueue;
  private readonly store = new DisposableStore();
  private expiryTimer: NodeJS.Timeout | undefined;
  private redrawTimer: NodeJS.Timeout | undefined;

  constructor(private readonly o: NoticeOverlayOptions) {
    this.queue = new NoticeQueue(o.now);
    this.store.add(
      toDisposable(() => {
        clearTimeout(this.expiryTimer);
        clearTimeout(this.redrawTimer);
      }),
    );
  }

  /** Queues a notice (made inert); draws it now when nothing else is shown. */
  post(level: NoticeLevel, text: string): void {
    if (this.store.isDisposed) return;
    if (this.queue.post(level, text)) this.draw();
    this.scheduleExpiry();
  }

  /** The screen under the overlay changed (output, resize, the palette closed): redraw once it is quiet. */
  redrawSoon(): void {
    if (this.queue.current === null || this.store.isDisposed) return;
    clearTimeout(this.redrawTimer);
    this.redrawTimer = setTimeout(() => this.draw(), NOTICE_REDRAW_MS);
  }

  dispose(): void {
    this.store.dispose();
  }

  private draw(): void {
    const n = this.queue.current;
    if (n === null || this.o.paletteOpen() || this.store.isDisposed) return;
    this.o.terminal.write(Buffer.from(renderNotice(n, this.o.terminal.size().cols), 'utf8'));
  }

  private scheduleExpiry(): void {
    clearTimeout(this.expiryTimer);
    const deadline = this.queue.deadline;
    if (deadline === null) return;
    const now = (this.o.now ?? Date.now)();
    this.expiryTimer = setTimeout(() => {
      if (this.queue.tick()) {
        // Remove the old notice by repainting the program's screen, then draw the next one (if any) over it.
        if (!this.o.paletteOpen()) this.o.repaint();
        this.redrawSoon();
      }
      this.scheduleExpiry();
    }, Math.max(0, deadline - now));
  }
}
