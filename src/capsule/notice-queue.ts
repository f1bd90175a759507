/**
 * HostNotice texts from clients, kept until the palette/notices work renders them. Bounded: the oldest
 * notice is dropped when a client floods.
 */
import type { Disposable } from '../disposable.ts';

export const MAX_QUEUED_NOTICES = 64;

export interface HostNoticeEvent {
  text: string;
  receivedAt: Date;
}

export class NoticeQueue {
  private readonly items: HostNoticeEvent[] = [];
  private readonly listeners = new Set<(n: HostNoticeEvent) => void>();

  push(text: string): void {
    const n: HostNoticeEvent = { text, receivedAt: new Date() };
    this.items.push(n);
    if (this.items.length > MAX_QUEUED_NOTICES) this.items.shift();
    for (const l of [...this.listeners]) l(n);
  }

  onNotice(listener: (n: HostNoticeEvent) => void): Disposable {
    this.listeners.add(listener);
    return { dispose: () => this.listeners.delete(listener) };
  }

  /** Removes and returns the queued notices, oldest first. */
  drain(): HostNoticeEvent[] {
    return this.items.splice(0, this.items.length);
  }

  get size(): number {
    return this.items.length;
  }
}
