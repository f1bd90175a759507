/**
 * Notices the capsule draws itself, for a host that does not draw its own (an upstream host, or any host
 * that did not negotiate `notice`): the notice is written into that client's output stream over the
 * program's screen, redrawn after program output, and removed by a repaint from the screen model when it
 * expires. The screen model never sees the overlay, so the repaint is exactly the program's screen.
 */
import type { NoticeLevel } from '../../protocol/index.ts';
import { NoticeQueue, renderNotice } from '../../ui/notices.ts';

/** After program output, the notice is redrawn once output has been quiet this long. */
const OVERLAY_REDRAW_MS = 30;

export interface OverlayTarget {
  /** Writes bytes to the client's terminal (as Output). */
  write(bytes: Buffer): void;
  /** Repaints the program's screen from the model (removes the overlay). */
  repaint(): Promise<void>;
  cols(): number;
}

export class OverlayNotices {
  readonly #queue: NoticeQueue;
  #expiry: NodeJS.Timeout | undefined;
  #redraw: NodeJS.Timeout | undefined;
  #disposed = false;

  readonly #target: OverlayTarget;
  readonly #now: () => number;
  constructor(target: OverlayTarget, now: () => number = Date.now) {
    this.#target = target;
    this.#now = now;
    this.#queue = new NoticeQueue(now);
  }

  post(level: NoticeLevel, text: string): void {
    if (this.#disposed) return;
    if (this.#queue.post(level, text)) this.#draw();
    this.#schedule();
  }

  /** Program output went to the client: the notice may have been drawn over, so redraw it soon. */
  afterOutput(): void {
    if (this.#queue.current === null || this.#disposed) return;
    clearTimeout(this.#redraw);
    this.#redraw = setTimeout(() => this.#draw(), OVERLAY_REDRAW_MS);
  }

  get showing(): boolean {
    return this.#queue.current !== null;
  }

  dispose(): void {
    this.#disposed = true;
    clearTimeout(this.#expiry);
    clearTimeout(this.#redraw);
    this.#queue.clear();
  }

  #draw(): void {
    const n = this.#queue.current;
    if (n === null || this.#disposed) return;
    this.#target.write(Buffer.from(renderNotice(n, this.#target.cols()), 'utf8'));
  }

  #schedule(): void {
    clearTimeout(this.#expiry);
    const deadline = this.#queue.deadline;
    if (deadline === null || this.#disposed) return;
    this.#expiry = setTimeout(
      () => {
        if (this.#queue.tick()) {
          void this.#target.repaint().then(() => this.#draw());
        }
        this.#schedule();
      },
      Math.max(0, deadline - this.#now()),
    );
    this.#expiry.unref();
  }
}
