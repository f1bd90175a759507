/**
 * The one subscription shape of the project (the habit xterm.js follows): every listener, timer and
 * handle is a `Disposable`, subscriptions return one, and an owner releases everything it holds through a
 * `DisposableStore` in one call. Pure: no Node I/O, so both sides and `ui/` can use it.
 */

/** Something that holds a resource until `dispose()` is called. Calling it twice is harmless. */
export interface Disposable {
  dispose(): void;
}

/** A Disposable that runs `fn` once, on the first `dispose()`. */
export function toDisposable(fn: () => void): Disposable {
  let done = false;
  return {
    dispose(): void {
      if (done) return;
      done = true;
      fn();
    },
  };
}

/** Holds Disposables and releases them together, newest first. Adding to a disposed store disposes at once. */
export class DisposableStore implements Disposable {
  readonly #items: Disposable[] = [];
  #disposed = false;

  get isDisposed(): boolean {
    return this.#disposed;
  }

  add<T extends Disposable>(item: T): T {
    if (this.#disposed) item.dispose();
    else this.#items.push(item);
    return item;
  }

  dispose(): void {
    if (this.#disposed) return;
    this.#disposed = true;
    for (const item of this.#items.splice(0).reverse()) item.dispose();
  }
}

/** A typed event source: `event(listener)` subscribes and returns the Disposable that unsubscribes. */
export class Emitter<T> implements Disposable {
  readonly #listeners = new Set<(value: T) => void>();

  readonly event = (listener: (value: T) => void): Disposable => {
    this.#listeners.add(listener);
    return toDisposable(() => this.#listeners.delete(listener));
  };

  fire(value: T): void {
    for (const listener of [...this.#listeners]) listener(value);
  }

  get hasListeners(): boolean {
    return this.#listeners.size > 0;
  }

  dispose(): void {
    this.#listeners.clear();
  }
}

/** The part of a Node-style event emitter that `onEvent` uses (structural: this module imports no Node API). */
export interface EventSource {
  on(event: string, listener: (...args: unknown[]) => void): unknown;
  off(event: string, listener: (...args: unknown[]) => void): unknown;
}

/** Subscribes `listener` to `event` of an emitter (a socket, `process`); the Disposable unsubscribes it. */
export function onEvent<A extends unknown[]>(source: EventSource, event: string, listener: (...args: A) => void): Disposable {
  source.on(event, listener as (...args: unknown[]) => void);
  return toDisposable(() => source.off(event, listener as (...args: unknown[]) => void));
}
