/**
 * The byte level of an attach session: client frames encoded onto the transport, server frames decoded
 * from it, and backpressure both ways. When the transport is full after typed input, the keyboard stops
 * being read until it drains (a large paste outruns the capsule); when the operator's terminal is full
 * after program output, the transport stops being read until the terminal drains (the terminal is the
 * slowest consumer on the path). Program output reaches the terminal only through `writeOutput`, i.e.
 * HostTerminal.writeOutput, through the terminal filter. Output frames are decoded as they arrive, in parts
 * (decoder.ts): the terminal gets the first bytes of a 256 KiB frame while the capsule still sends the
 * rest, and no frame is copied together first.
 */
import { DisposableStore, Emitter, toDisposable, type Disposable } from '../../disposable.ts';
import { createServerFrameDecoder, encodeClientFrame, ProtocolError, type ClientFrame, type ServerFrame } from '../../protocol/index.ts';
import type { Transport } from '../../transport/transport.ts';
import type { HostTerminal } from '../terminal/terminal.ts';

export class FrameRelay implements Disposable {
  readonly #decoder = createServerFrameDecoder(undefined, { streamOutput: true });
  readonly #store = new DisposableStore();
  readonly #frames = this.#store.add(new Emitter<ServerFrame>());
  readonly #skipped = this.#store.add(new Emitter<ProtocolError>());
  readonly #broken = this.#store.add(new Emitter<string>());
  readonly #ended = this.#store.add(new Emitter<void>());
  #outputPaused = false;
  #drainWait: Disposable | null = null;
  #inputPaused = false;
  /** Callers of `drained` still waiting; all released on close. */
  readonly #waiting = new Set<() => void>();

  /** A decoded server frame, in stream order. */
  readonly onFrame = this.#frames.event;
  /** A malformed frame was skipped (protocol.md section 5). */
  readonly onSkipped = this.#skipped.event;
  /** The stream is lost (framing error, connection error); with the reason. */
  readonly onBroken = this.#broken.event;
  /** The capsule closed the connection cleanly, at a frame boundary. */
  readonly onEnd = this.#ended.event;

  readonly #transport: Transport;
  readonly #terminal: Pick<HostTerminal, 'writeOutput' | 'onceDrain' | 'stdin'>;
  readonly #inputWanted: () => boolean;
  constructor(
    transport: Transport,
    terminal: Pick<HostTerminal, 'writeOutput' | 'onceDrain' | 'stdin'>,
    /** False once typed input must stay paused (detaching). */
    inputWanted: () => boolean,
  ) {
    this.#transport = transport;
    this.#terminal = terminal;
    this.#inputWanted = inputWanted;
    this.#store.add(toDisposable(() => [...this.#waiting].forEach((done) => done())));
  }

  get closed(): boolean {
    return this.#store.isDisposed;
  }

  /** Starts reading the transport. */
  start(): void {
    const { readable, writable } = this.#transport;
    const onData = (chunk: Buffer) => this.#onBytes(chunk);
    const onEnd = () => this.#onEnd_();
    const onError = (e: Error) => this.#broken.fire(`connection error: ${e.message}`);
    readable.on('data', onData);
    readable.on('end', onEnd);
    readable.on('error', onError);
    writable.on('error', onError);
    this.#store.add(
      toDisposable(() => {
        readable.off('data', onData);
        readable.off('end', onEnd);
        readable.off('error', onError);
        writable.off('error', onError);
      }),
    );
  }

  /** Encodes and writes one frame; false when the transport is full (or closed). */
  send(f: ClientFrame): boolean {
    if (this.closed) return false;
    const ok = this.#transport.writable.write(encodeClientFrame(f));
    if (!ok && f.type === 'Input' && !this.#inputPaused) {
      // A large paste outruns the capsule: stop reading the keyboard until the transport drains.
      this.#inputPaused = true;
      this.#terminal.stdin.pause();
      this.#transport.writable.once('drain', () => {
        this.#inputPaused = false;
        if (!this.closed && this.#inputWanted()) this.#terminal.stdin.resume();
      });
    }
    return ok;
  }

  /** Program output to the operator's terminal, pausing the transport while the terminal is full. */
  writeOutput(bytes: Buffer): void {
    if (!this.#terminal.writeOutput(bytes) && !this.#outputPaused) {
      this.#outputPaused = true;
      this.#transport.readable.pause();
      // One wait at a time (outputPaused), released with the relay: a field, not the store, which would
      // keep one entry per pause for the whole session.
      this.#drainWait = this.#terminal.onceDrain(() => {
        this.#drainWait = null;
        this.#outputPaused = false;
        if (!this.closed) this.#transport.readable.resume();
      });
    }
  }

  /** Resolves once the transport takes more bytes (after a send that returned false), or on close. */
  drained(): Promise<void> {
    const w = this.#transport.writable;
    if (this.closed || !w.writableNeedDrain) return Promise.resolve();
    return new Promise((resolve) => {
      const done = (): void => {
        w.off('drain', done);
        w.off('close', done);
        this.#waiting.delete(done);
        resolve();
      };
      this.#waiting.add(done);
      w.once('drain', done);
      w.once('close', done);
    });
  }

  /** Stops relaying and closes the transport. */
  dispose(): void {
    if (this.closed) return;
    this.#drainWait?.dispose();
    this.#store.dispose();
    this.#transport.close();
  }

  #onBytes(chunk: Buffer): void {
    let items;
    try {
      items = this.#decoder.push(chunk);
    } catch (e) {
      this.#broken.fire(`protocol error: ${e instanceof Error ? e.message : String(e)}`);
      return;
    }
    for (const item of items) {
      if (this.closed) return;
      if (item.ok) this.#frames.fire(item.frame);
      else this.#skipped.fire(item.error);
    }
    // Frames before a framing error in the same read were handled above (an ExitStatus still counts);
    // the stream itself is lost.
    const failure = this.#decoder.failure;
    if (failure && !this.closed) this.#broken.fire(`protocol error: ${failure.message}`);
  }

  #onEnd_(): void {
    if (this.closed) return;
    try {
      this.#decoder.end();
    } catch (e) {
      this.#broken.fire(e instanceof ProtocolError ? `the stream ended inside a frame (${e.message})` : String(e));
      return;
    }
    this.#ended.fire();
  }
}
