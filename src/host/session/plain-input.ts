/**
 * Input for a session without a terminal (`jackin run` with stdin or stdout redirected): the bytes of stdin
 * go to the program unchanged, with no palette key, no paste detection and no mouse (the pipe is data, not an
 * operator), and the end of stdin reaches the program as end of file, as with `docker run -i`.
 *
 * The capsule runs such a program on a PTY in canonical mode without signals or echo (capsule
 * session.ts, PLAIN_TTY_SCRIPT): its VEOF (Ctrl+D) is the end of file. At the start of a line one ends the
 * input; after a partial line the first only hands that line over, so a second is sent.
 */
import type { Readable } from 'node:stream';
import { DisposableStore, onEvent, toDisposable, type Disposable } from '../../disposable.ts';

const VEOF = 0x04;
const NEWLINE = 0x0a;

/** What ends the program's input after the last byte sent (undefined: nothing sent). */
export function plainEndOfInput(lastByte: number | undefined): Buffer {
  return Buffer.from(lastByte === undefined || lastByte === NEWLINE ? [VEOF] : [VEOF, VEOF]);
}

export interface PlainInputOptions {
  stdin: Readable;
  /** Sends bytes to the program; false when the transport is full. */
  send: (bytes: Buffer) => boolean;
  /** Resolves once the transport takes more. */
  drained: () => Promise<void>;
}

export class PlainInput implements Disposable {
  readonly #store = new DisposableStore();
  readonly #o: PlainInputOptions;
  #last: number | undefined;
  #started = false;

  constructor(o: PlainInputOptions) {
    this.#o = o;
  }

  /** Starts reading stdin (once the capsule welcomed the host: input before that has nowhere to go). */
  start(): void {
    if (this.#started || this.#store.isDisposed) return;
    this.#started = true;
    const { stdin } = this.#o;
    this.#store.add(onEvent(stdin, 'data', (chunk: Buffer) => this.#onData(chunk)));
    this.#store.add(onEvent(stdin, 'end', () => void this.#o.send(plainEndOfInput(this.#last))));
    // A stdin that cannot be read (closed descriptor) ends the input the same way.
    this.#store.add(onEvent(stdin, 'error', () => void this.#o.send(plainEndOfInput(this.#last))));
    this.#store.add(toDisposable(() => stdin.pause()));
    stdin.resume();
  }

  #onData(chunk: Buffer): void {
    if (chunk.length === 0) return;
    this.#last = chunk[chunk.length - 1];
    if (this.#o.send(chunk)) return;
    // Backpressure: read no more of stdin until the capsule takes what was sent.
    this.#o.stdin.pause();
    void this.#o.drained().then(() => {
      if (!this.#store.isDisposed) this.#o.stdin.resume();
    });
  }

  dispose(): void {
    this.#store.dispose();
  }
}
