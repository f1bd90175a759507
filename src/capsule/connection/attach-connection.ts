/**
 * One attach client (protocol.md section 6): Hello, then Welcome and a repaint, then Input/Resize/focus/
 * detach/images/notices. This class wires the socket to its parts:
 *
 * - attach-handshake.ts: where the connection stands (handshake, attaching, attached, closed) and what
 *   the host announced with ExtHello;
 * - frame-queue.ts: frames handled strictly in order, an exclusive step (the repaint) holding later
 *   frames, and the read gate that pauses the socket for that step or for input backpressure;
 * - attach-dispatch.ts: what each frame does once the host is past Hello;
 * - attach-input.ts: input and focus to the program, with backpressure;
 * - output-coalescer.ts: PTY output gathered into frames, the PTY held while the socket does not drain;
 * - attach-shutdown.ts: how the connection ends (grace for a host not welcomed yet, or for its ExtHello).
 */
import type { Socket } from 'node:net';
import { DisposableStore, onEvent, toDisposable } from '../../disposable.ts';
import {
  CLIENT_TAGS,
  createClientFrameDecoder,
  outputFrameBuffers,
  encodeServerFrame,
  truncateUtf8,
  type ClientFrame,
  type ControlResult,
  type DecodeItem,
  type Features,
  type FrameDecoder,
  type Hello,
  type NoticeLevel,
  type ServerFrame,
} from '../../protocol/index.ts';
import { dispatchFrame, type DispatchHost, type FrameContext } from './attach-dispatch.ts';
import { AttachHandshake } from './attach-handshake.ts';
import { AttachInput } from './attach-input.ts';
import { AttachShutdown, CLOSE_GRACE_MS } from './attach-shutdown.ts';
import { FrameQueue, ReadGate } from './frame-queue.ts';
import { forEachOutputFrame, OutputCoalescer } from './output-coalescer.ts';
import { OverlayNotices } from './overlay-notices.ts';
import { PortWatch } from './port-watch.ts';

const MAX_NOTICE_TEXT_BYTES = 2048;

export interface AttachHost extends DispatchHost {
  /** Makes this connection the attached one, shutting down the previous one. */
  takeOver(conn: AttachConnection): void;
  isCurrent(conn: AttachConnection): boolean;
  /** The first complete frame arrived: stop the handshake clock. */
  handshakeDone(conn: AttachConnection): void;
  closed(conn: AttachConnection): void;
}

let nextId = 1;

export class AttachConnection {
  readonly id = nextId++;
  readonly #handshake = new AttachHandshake();
  readonly #decoder: FrameDecoder<ClientFrame> = createClientFrameDecoder();
  readonly #gate: ReadGate;
  readonly #queue: FrameQueue<DecodeItem<ClientFrame>>;
  readonly #input: AttachInput;
  readonly #shutdownMachine: AttachShutdown;
  readonly #output: OutputCoalescer;
  readonly #overlay: OverlayNotices;
  readonly #frames: FrameContext;
  /** The ports this host is told of (feature `ports`); null until it asked. */
  #ports: PortWatch | null = null;
  /** What the connection holds while it relays the session (released when it stops relaying). */
  readonly #relay = new DisposableStore();
  /** What lives until the socket closed. */
  readonly #lifetime = new DisposableStore();

  readonly #host: AttachHost;
  constructor(
    readonly socket: Socket,
    host: AttachHost,
  ) {
    this.#host = host;
    const handshake = this.#handshake;
    const open = (): boolean => !handshake.closed;
    this.#gate = new ReadGate(socket, open);
    this.#queue = new FrameQueue(
      this.#gate,
      (item) => this.#handle(item),
      open,
      (e) => {
        this.#host.log(`client ${this.id}: ${e.message}`);
        this.destroy();
      },
    );
    this.#input = this.#relay.add(new AttachInput(host.session, this.#gate));
    this.#output = this.#relay.add(
      new OutputCoalescer({
        writeOutput: (bytes) => this.#writeBuffers(outputFrameBuffers(Buffer.isBuffer(bytes) ? [bytes] : bytes)),
        onceDrain: (fn) => {
          const sub = onEvent(socket, 'drain', () => {
            sub.dispose();
            fn();
          });
          return sub;
        },
        holdPty: () => host.session.hold(`client:${this.id}`),
        releasePty: () => host.session.release(`client:${this.id}`),
        afterFlush: () => this.#overlay.afterOutput(),
        relaying: () => this.#handshake.live,
      }),
    );
    this.#overlay = this.#lifetime.add(
      new OverlayNotices({
        write: (bytes) => {
          if (this.#handshake.live) this.#send({ type: 'Output', bytes });
        },
        repaint: () => this.#repaintExact(),
        cols: () => this.#host.session.cols,
      }),
    );
    this.#shutdownMachine = this.#lifetime.add(
      new AttachShutdown({
        get phase() {
          return handshake.phase;
        },
        get socketOpen() {
          return !socket.destroyed;
        },
        offersExitStatus: host.features['exit-status'] !== undefined,
        takeQueuedExtHello: () => {
          for (const item of this.#queue.queued) if (item.ok && item.frame.type === 'ExtHello') this.#handshake.extHello(item.frame.features);
          return this.#handshake.extHelloSeen;
        },
        finish: (reason, exitStatus) => this.#finish(reason, exitStatus),
      }),
    );
    this.#frames = {
      id: this.id,
      host,
      handshake,
      shutdown: this.#shutdownMachine,
      input: this.#input,
      replies: {
        respond: (requestId, result) => this.#respond(requestId, result),
        notify: (level, text) => this.notify(level, text),
        imageStaged: (requestId, bytes, pasted, path) => {
          if (!handshake.hostHas('image-staged') || !handshake.live) return false;
          this.#send({ type: 'ImageStaged', requestId, bytes, pasted, path });
          return true;
        },
      },
      send: (frame) => this.#send(frame),
      respond: (requestId, result) => this.#respond(requestId, result),
      notify: (level, text) => this.notify(level, text),
      runExclusive: (step) => this.#queue.runExclusive(step),
      repaint: () => this.#repaintExact(),
      sendModes: () => this.#sendModes(),
      holdReplies: (held) => this.#holdReplies(held),
      watchPorts: () => this.#watchPorts(),
    };
    // A host that goes (or is replaced) while it held the output answers nothing more: the model stops too.
    this.#relay.add(toDisposable(() => this.#holdReplies(false, false)));
    this.#lifetime.add(onEvent(socket, 'data', (chunk: Buffer) => this.onData(chunk)));
    this.#lifetime.add(
      onEvent(socket, 'end', () => {
        try {
          this.#decoder.end();
        } catch (e) {
          this.#host.log(`client ${this.id}: ${(e as Error).message}`);
        }
        // A closed connection is a detach; the program keeps running.
        socket.destroy();
      }),
    );
    this.#lifetime.add(onEvent(socket, 'error', (e: Error) => this.#host.log(`client ${this.id}: socket error: ${e.message}`)));
    this.#lifetime.add(onEvent(socket, 'close', () => this.#onClose()));
  }

  get attached(): boolean {
    return this.#handshake.attached;
  }

  /** The features the host announced with ExtHello. */
  get negotiated(): Features {
    return this.#handshake.negotiated;
  }

  /** Feeds bytes that were read before this object took over the socket. */
  onData(chunk: Buffer): void {
    if (this.#handshake.closed) return;
    let items: Array<DecodeItem<ClientFrame>>;
    try {
      items = this.#decoder.push(chunk);
      // A framing error after complete frames in the same read is held by the decoder: the stream is lost
      // all the same, so the connection goes now rather than at the next read (which may never come).
      if (this.#decoder.failure) throw this.#decoder.failure;
    } catch (e) {
      // A framing error: the stream is lost, so only this connection goes.
      this.#host.log(`client ${this.id}: dropping connection: ${(e as Error).message}`);
      this.destroy();
      return;
    }
    if (items.length > 0 && this.#handshake.phase === 'handshake') this.#host.handshakeDone(this);
    this.#queue.push(items);
  }

  /** Ends the connection (see attach-shutdown.ts for the waits this may take first). */
  shutdown(reason: string | null, exitStatus: number | null = null): void {
    this.#shutdownMachine.request(reason, exitStatus);
  }

  destroy(): void {
    this.#handshake.to('closed');
    this.#queue.clear();
    this.socket.destroy();
    this.#relay.dispose();
  }

  /** Sends PTY output (see output-coalescer.ts). */
  sendOutput(chunk: Buffer): void {
    if (!this.#handshake.live) return;
    this.#output.push(chunk);
    this.#ports?.output();
  }

  /** Tells the operator: a Notice frame for a host that draws notices, else drawn by the capsule. */
  notify(level: NoticeLevel, text: string): void {
    this.#host.log(`client ${this.id}: notice (${level}): ${text}`);
    if (!this.#handshake.live) return;
    if (this.#handshake.hostHas('notice')) {
      this.#send({ type: 'Notice', level, text: truncateUtf8(text, MAX_NOTICE_TEXT_BYTES) });
      return;
    }
    this.#overlay.post(level, text);
  }

  #finish(reason: string | null, exitStatus: number | null): void {
    if (this.#handshake.closed) return;
    const wasAttached = this.#handshake.phase !== 'handshake';
    this.#handshake.to('closed');
    this.#queue.clear();
    if (wasAttached) {
      if (exitStatus !== null && this.#handshake.hostHas('exit-status')) this.#send({ type: 'ExitStatus', status: exitStatus });
      this.#send({ type: 'Shutdown', reason });
    }
    // Half-close and wait for the host's own end ('end' above) or CLOSE_GRACE_MS: closing at once made a
    // frame the host sent meanwhile (a resize, the ExtHello of a program that exited at once) fail with
    // EPIPE, and the host lost the ExitStatus still unread behind it ("lost connection", status 1).
    this.socket.end();
    const closeTimer = setTimeout(() => this.socket.destroy(), CLOSE_GRACE_MS);
    closeTimer.unref();
    this.#lifetime.add(toDisposable(() => clearTimeout(closeTimer)));
    this.#relay.dispose();
  }

  /** Every frame but gathered output: what is pending goes first. */
  #send(frame: ServerFrame): boolean {
    if (this.#output.hasPending) this.#output.flush();
    return this.#writeFrame(frame);
  }

  #writeFrame(frame: ServerFrame): boolean {
    return this.#writeEncoded(encodeServerFrame(frame));
  }

  /**
   * Writes the buffers of a frame in order, corked into one writev: the PTY's reads go to the socket as
   * they are, not copied into a frame first (that copy was the capsule's largest, a whole flood's worth).
   * Like one write of their concatenation, false once the socket's buffer is over its high-water mark.
   */
  #writeBuffers(list: readonly Buffer[]): boolean {
    if (this.socket.destroyed || this.socket.writableEnded) return false;
    this.socket.cork();
    let ok = true;
    for (const b of list) ok = this.socket.write(b);
    this.socket.uncork();
    return ok;
  }

  #writeEncoded(bytes: Buffer): boolean {
    if (this.socket.destroyed || this.socket.writableEnded) return false;
    return this.socket.write(bytes);
  }

  #respond(requestId: bigint, result: ControlResult): void {
    if (!this.#handshake.closed) this.#send({ type: 'AttachControlResponse', requestId, result });
  }

  #handle(item: DecodeItem<ClientFrame>): void {
    if (!item.ok) {
      const err = item.error;
      if (this.#handshake.phase === 'handshake') {
        this.#host.log(`client ${this.id}: invalid first frame, closing: ${err.message}`);
        this.destroy();
        return;
      }
      this.#host.log(`client ${this.id}: skipped invalid frame: ${err.message}`);
      if (err.tag === CLIENT_TAGS.AttachControl && err.requestId !== undefined) {
        this.#respond(err.requestId, err.code === 'E_BAD_CONTEXT' ? 'invalid-correlation' : 'rejected');
      }
      return;
    }
    const f = item.frame;
    if (this.#handshake.phase !== 'handshake') {
      dispatchFrame(f, this.#frames);
      return;
    }
    if (f.type !== 'Hello') {
      this.#host.log(`client ${this.id}: first frame is ${f.type}, not Hello; closing`);
      this.destroy();
      return;
    }
    this.#attach(f);
  }

  #attach(hello: Hello): void {
    this.#handshake.to('attaching');
    this.#host.takeOver(this);
    const session = this.#host.session;
    const hold = `attach:${this.id}`;
    this.#queue.runExclusive(async () => {
      session.hold(hold);
      try {
        session.resize(hello.rows, hello.cols);
        await session.settle();
        if (this.#handshake.phase !== 'attaching' || !this.#host.isCurrent(this)) return;
        this.#send({ type: 'Welcome', sessions: 1, features: this.#host.features });
        // A plain session's first host (no terminal) gets the program's bytes as written, not a screen.
        const backlog = session.takePlainBacklog();
        if (backlog === null) this.#sendRepaint();
        else for (const chunk of backlog) forEachOutputFrame(chunk, (bytes) => this.#send({ type: 'Output', bytes }));
        this.#handshake.to('attached');
        // The terminal of this host answers the program's queries until it holds the output itself.
        session.answerQueries = false;
        session.setOutputSink((chunk) => this.sendOutput(chunk));
        this.#relay.add(session.onModesChange(() => this.#sendModes()));
        // The program ended while this host was being welcomed: now it can be told.
        this.#shutdownMachine.welcomed();
      } finally {
        session.release(hold);
      }
    });
  }

  /** Repaints from a settled model, with the PTY held so nothing is drawn twice or missed. */
  async #repaintExact(): Promise<void> {
    const session = this.#host.session;
    const hold = `repaint:${this.id}`;
    session.hold(hold);
    try {
      await session.settle();
      if (this.#handshake.live) this.#sendRepaint();
    } finally {
      session.release(hold);
    }
  }

  #sendRepaint(): void {
    forEachOutputFrame(this.#host.session.repaint(), (bytes) => this.#send({ type: 'Output', bytes }));
    // A repaint resets the terminal's mouse modes: a host capturing the mouse re-applies its capture on Modes.
    this.#sendModes();
  }

  /** Whether this connection's host holds the program's output (extension `held-replies`). */
  #repliesHeld = false;

  /**
   * The host holds the program's output (its palette is up) or no more (extension `held-replies`): from the
   * RepliesHeld marker sent here on, the session answers the position and status queries in the output (it
   * goes after every output frame gathered so far, so the host knows exactly which queries it no longer
   * lets out to its terminal); from a RepliesHeld false on, the host's terminal answers them again.
   */
  #holdReplies(held: boolean, mark = true): void {
    const session = this.#host.session;
    if (held && (!this.#handshake.live || !this.#host.isCurrent(this))) return;
    // A connection replaced by another no longer speaks for the session (the new one started answering nothing).
    if (held || (this.#repliesHeld && this.#host.isCurrent(this))) session.answerQueries = held;
    this.#repliesHeld = held;
    if (mark && this.#handshake.live) this.#send({ type: 'RepliesHeld', held });
  }

  #watchPorts(): void {
    if (this.#ports !== null || !this.#handshake.live) return;
    const watch = new PortWatch((ports) => {
      if (this.#handshake.live) this.#send({ type: 'Ports', ports });
    });
    this.#ports = watch;
    // Released when the connection stops relaying (detach, take-over, the program's end): no look after.
    this.#relay.add(watch);
    watch.start();
  }

  /** Modes (extension `modes`) to a host that negotiated it. */
  #sendModes(): void {
    if (!this.#handshake.hostHas('modes') || this.#handshake.closed) return;
    this.#send({ type: 'Modes', ...this.#host.session.programModes });
  }

  #onClose(): void {
    this.#lifetime.dispose();
    this.#handshake.to('closed');
    this.#relay.dispose();
    this.#host.imageSink.connectionClosed?.();
    this.#host.closed(this);
  }
}
