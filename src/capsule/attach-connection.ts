/**
 * One attach client (protocol.md section 6): Hello, then Welcome and a repaint, then Input/Resize/focus/
 * detach/images/notices. Frames are handled strictly in order; while the repaint is being prepared the
 * socket is paused and later frames wait in a queue.
 */
import type { Socket } from 'node:net';
import {
  assertNever,
  CLIENT_TAGS,
  createClientFrameDecoder,
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
} from '../protocol/index.ts';
import type { ImageOp, ImageReplies, ImageSink } from './image-sink.ts';
import type { Offers } from './offers.ts';
import { resolveRequest } from './resolver.ts';
import { OverlayNotices } from './overlay-notices.ts';
import type { Session } from './session.ts';

/** Largest Output frame we send: keeps a repaint from delaying a keystroke's echo behind one huge write. */
export const MAX_OUTPUT_FRAME_BYTES = 256 * 1024;
/** Output gathering during a flood (see sendOutput): at most this long, at most this many bytes. */
export const OUTPUT_COALESCE_MS = 4;
export const OUTPUT_COALESCE_BYTES = 256 * 1024;
/** A PTY read at least this large starts gathering; a smaller one is sent at once. */
export const OUTPUT_FLOOD_READ_BYTES = 2048;
/** How long a shutdown waits for the ExtHello of a host that was just welcomed (see shutdown). */
export const EXT_HELLO_GRACE_MS = 300;
/** How long a shutdown waits for a connected host to finish its Hello and be welcomed (see shutdown). */
export const HELLO_GRACE_MS = 1000;
/** After Shutdown and end(), a peer that never reads is cut off after this long. */
export const CLOSE_GRACE_MS = 2000;
const MAX_NOTICE_TEXT_BYTES = 2048;

export interface AttachHost {
  readonly session: Session;
  readonly features: Features;
  readonly imageSink: ImageSink;
  /** Link and file offers, read by Resolve requests. */
  readonly offers: Offers;
  log(line: string): void;
  /** Makes this connection the attached one, shutting down the previous one. */
  takeOver(conn: AttachConnection): void;
  isCurrent(conn: AttachConnection): boolean;
  /** The first complete frame arrived: stop the handshake clock. */
  handshakeDone(conn: AttachConnection): void;
  closed(conn: AttachConnection): void;
}

type State = 'handshake' | 'attaching' | 'attached' | 'closed';

let nextId = 1;

export class AttachConnection {
  readonly id = nextId++;
  private state: State = 'handshake';
  private readonly decoder: FrameDecoder<ClientFrame> = createClientFrameDecoder();
  private readonly queue: Array<DecodeItem<ClientFrame>> = [];
  private busy = false;
  private hostFeatures: Features = {};
  private waitingDrain = false;
  private inputBlocked = false;
  private closeTimer: NodeJS.Timeout | undefined;
  private readonly holdName = `client:${this.id}`;
  private modesSub: { dispose(): void } | null = null;
  private readonly overlay = new OverlayNotices({
    write: (bytes) => {
      if (this.state === 'attached') this.send({ type: 'Output', bytes });
    },
    repaint: () => this.repaintExact(),
    cols: () => this.host.session.cols,
  });
  private readonly replies: ImageReplies = {
    respond: (requestId, result) => this.respond(requestId, result),
    notify: (level, text) => this.notify(level, text),
    imageStaged: (requestId, bytes, pasted, path) => {
      if (this.hostFeatures['image-staged'] === undefined || this.state !== 'attached') return false;
      this.send({ type: 'ImageStaged', requestId, bytes, pasted, path });
      return true;
    },
  };

  constructor(
    readonly socket: Socket,
    private readonly host: AttachHost,
  ) {
    socket.on('data', (chunk: Buffer) => this.onData(chunk));
    socket.on('end', () => {
      try {
        this.decoder.end();
      } catch (e) {
        this.host.log(`client ${this.id}: ${(e as Error).message}`);
      }
      // A closed connection is a detach; the program keeps running.
      socket.destroy();
    });
    socket.on('error', (e) => this.host.log(`client ${this.id}: socket error: ${e.message}`));
    socket.on('close', () => this.onClose());
  }

  get attached(): boolean {
    return this.state === 'attached' || this.state === 'attaching';
  }

  /** The features the host announced with ExtHello. */
  get negotiated(): Features {
    return this.hostFeatures;
  }

  /** Feeds bytes that were read before this object took over the socket. */
  onData(chunk: Buffer): void {
    if (this.state === 'closed') return;
    let items: Array<DecodeItem<ClientFrame>>;
    try {
      items = this.decoder.push(chunk);
      // A framing error after complete frames in the same read is held by the decoder: the stream is lost
      // all the same, so the connection goes now rather than at the next read (which may never come).
      if (this.decoder.failure) throw this.decoder.failure;
    } catch (e) {
      // A framing error: the stream is lost, so only this connection goes.
      this.host.log(`client ${this.id}: dropping connection: ${(e as Error).message}`);
      this.destroy();
      return;
    }
    if (items.length > 0 && this.state === 'handshake') this.host.handshakeDone(this);
    this.queue.push(...items);
    this.pump();
  }

  /**
   * Sends ExitStatus (when negotiated) and Shutdown, then closes. A host answers Welcome with ExtHello, and
   * a program that exits at once can end between the two: an ExtHello already received but still queued
   * counts, and one not yet received is waited for up to EXT_HELLO_GRACE_MS, so the exit status still
   * reaches the host (an upstream host, which sends none, gets Shutdown after that grace).
   */
  shutdown(reason: string | null, exitStatus: number | null = null): void {
    if (this.state === 'closed' || this.awaitingExtHello !== null || this.awaitingWelcome !== null) return;
    // A host that connected but is not welcomed yet (its Hello is on the way, or the attach is settling)
    // would otherwise be cut off with nothing: it gets HELLO_GRACE_MS to be welcomed, and then the status.
    if ((this.state === 'handshake' || this.state === 'attaching') && !this.socket.destroyed) {
      const timer = setTimeout(() => {
        this.awaitingWelcome = null;
        this.finishShutdown(reason, exitStatus);
      }, HELLO_GRACE_MS);
      this.awaitingWelcome = () => {
        clearTimeout(timer);
        this.awaitingWelcome = null;
        this.shutdown(reason, exitStatus);
      };
      return;
    }
    for (const item of this.queue) if (item.ok && item.frame.type === 'ExtHello') this.noteExtHello(item.frame.features);
    if (this.state === 'attached' && !this.extHelloSeen && exitStatus !== null && this.host.features['exit-status'] !== undefined && !this.socket.destroyed) {
      const timer = setTimeout(() => this.finishShutdown(reason, exitStatus), EXT_HELLO_GRACE_MS);
      this.awaitingExtHello = () => {
        clearTimeout(timer);
        this.finishShutdown(reason, exitStatus);
      };
      return;
    }
    this.finishShutdown(reason, exitStatus);
  }

  /** Set while shutdown waits for this host to be welcomed: goes on with the shutdown. */
  private awaitingWelcome: (() => void) | null = null;
  private extHelloSeen = false;
  /** Set while shutdown waits for ExtHello: finishes the shutdown. */
  private awaitingExtHello: (() => void) | null = null;

  private noteExtHello(features: Features): void {
    this.hostFeatures = { ...features };
    this.extHelloSeen = true;
  }

  private finishShutdown(reason: string | null, exitStatus: number | null): void {
    this.awaitingExtHello = null;
    if (this.state === 'closed') return;
    const wasAttached = this.state !== 'handshake';
    this.state = 'closed';
    this.queue.length = 0;
    if (wasAttached) {
      if (exitStatus !== null && this.hostFeatures['exit-status'] !== undefined) {
        this.send({ type: 'ExitStatus', status: exitStatus });
      }
      this.send({ type: 'Shutdown', reason });
    }
    this.socket.end(() => this.socket.destroy());
    this.closeTimer = setTimeout(() => this.socket.destroy(), CLOSE_GRACE_MS);
    this.closeTimer.unref();
    this.detachFromSession();
  }

  destroy(): void {
    this.state = 'closed';
    this.queue.length = 0;
    this.socket.destroy();
    this.detachFromSession();
  }

  /**
   * Sends PTY output, holding the PTY while the socket is not draining. A small read goes out at once (a
   * keystroke's echo, a line of output: never delayed). A large read means the program writes faster than
   * the PTY is read, a flood: then reads are gathered for up to OUTPUT_COALESCE_MS or OUTPUT_COALESCE_BYTES
   * into one frame. The PTY hands over about 4 KiB per read, and one socket write per read woke the host
   * for every 4 KiB: the two processes then spent their time waking each other (measured: the capsule alone
   * relays 65 MiB/s, the host alone 58, the two together 28). Any other frame first flushes what is
   * pending, so nothing overtakes output.
   */
  sendOutput(chunk: Buffer): void {
    if (this.state !== 'attached') return;
    this.pendingOutput.push(chunk);
    this.pendingOutputBytes += chunk.length;
    if (this.pendingOutputBytes >= OUTPUT_COALESCE_BYTES) {
      this.flushOutput();
      return;
    }
    if (this.outputTimer !== null) return;
    if (chunk.length < OUTPUT_FLOOD_READ_BYTES) {
      this.flushOutput();
      return;
    }
    this.outputTimer = setTimeout(() => this.flushOutput(), OUTPUT_COALESCE_MS);
  }

  private pendingOutput: Buffer[] = [];
  private pendingOutputBytes = 0;
  private outputTimer: NodeJS.Timeout | null = null;

  private flushOutput(): void {
    if (this.outputTimer !== null) {
      clearTimeout(this.outputTimer);
      this.outputTimer = null;
    }
    if (this.pendingOutput.length === 0) return;
    const parts = this.pendingOutput;
    const chunk = parts.length === 1 ? parts[0]! : Buffer.concat(parts, this.pendingOutputBytes);
    this.pendingOutput = [];
    this.pendingOutputBytes = 0;
    let ok = true;
    for (let off = 0; off < chunk.length; off += MAX_OUTPUT_FRAME_BYTES) {
      ok = this.writeFrame({ type: 'Output', bytes: chunk.subarray(off, off + MAX_OUTPUT_FRAME_BYTES) });
    }
    this.overlay.afterOutput();
    if (!ok && !this.waitingDrain && this.state === 'attached') {
      this.waitingDrain = true;
      this.host.session.hold(this.holdName);
      this.socket.once('drain', () => {
        this.waitingDrain = false;
        this.host.session.release(this.holdName);
      });
    }
  }

  /** Every frame but gathered output: what is pending goes first. */
  private send(frame: ServerFrame): boolean {
    if (this.pendingOutput.length > 0) this.flushOutput();
    return this.writeFrame(frame);
  }

  private writeFrame(frame: ServerFrame): boolean {
    if (this.socket.destroyed || this.socket.writableEnded) return false;
    return this.socket.write(encodeServerFrame(frame));
  }

  private pump(): void {
    while (!this.busy && this.queue.length > 0 && this.state !== 'closed') {
      const item = this.queue.shift()!;
      this.handle(item);
    }
  }

  /** Runs an async step with the socket paused and later frames queued behind it. */
  private runExclusive(step: () => Promise<void>): void {
    this.busy = true;
    this.socket.pause();
    step()
      .catch((e: unknown) => {
        this.host.log(`client ${this.id}: ${(e as Error).message}`);
        this.destroy();
      })
      .finally(() => {
        this.busy = false;
        if (this.state !== 'closed') {
          if (!this.inputBlocked) this.socket.resume();
          this.pump();
        }
      });
  }

  private handle(item: DecodeItem<ClientFrame>): void {
    if (!item.ok) {
      const err = item.error;
      if (this.state === 'handshake') {
        this.host.log(`client ${this.id}: invalid first frame, closing: ${err.message}`);
        this.destroy();
        return;
      }
      this.host.log(`client ${this.id}: skipped invalid frame: ${err.message}`);
      if (err.tag === CLIENT_TAGS.AttachControl && err.requestId !== undefined) {
        this.respond(err.requestId, err.code === 'E_BAD_CONTEXT' ? 'invalid-correlation' : 'rejected');
      }
      return;
    }
    const f = item.frame;
    if (this.state === 'handshake') {
      if (f.type !== 'Hello') {
        this.host.log(`client ${this.id}: first frame is ${f.type}, not Hello; closing`);
        this.destroy();
        return;
      }
      this.attach(f);
      return;
    }
    this.handleAttached(f);
  }

  private attach(hello: Hello): void {
    this.state = 'attaching';
    this.host.takeOver(this);
    const session = this.host.session;
    const hold = `attach:${this.id}`;
    this.runExclusive(async () => {
      session.hold(hold);
      try {
        session.resize(hello.rows, hello.cols);
        await session.settle();
        if (this.state !== 'attaching' || !this.host.isCurrent(this)) return;
        this.send({ type: 'Welcome', sessions: 1, features: this.host.features });
        this.sendRepaint();
        this.state = 'attached';
        session.setOutputSink((chunk) => this.sendOutput(chunk));
        this.modesSub = session.onModesChange(() => this.sendModes());
        // The program ended while this host was being welcomed: now it can be told.
        this.awaitingWelcome?.();
      } finally {
        session.release(hold);
      }
    });
  }

  /** Repaints from a settled model, with the PTY held so nothing is drawn twice or missed. */
  private async repaintExact(): Promise<void> {
    const session = this.host.session;
    const hold = `repaint:${this.id}`;
    session.hold(hold);
    try {
      await session.settle();
      if (this.state === 'attached') this.sendRepaint();
    } finally {
      session.release(hold);
    }
  }

  private sendRepaint(): void {
    const bytes = this.host.session.repaint();
    for (let off = 0; off < bytes.length; off += MAX_OUTPUT_FRAME_BYTES) {
      this.send({ type: 'Output', bytes: bytes.subarray(off, off + MAX_OUTPUT_FRAME_BYTES) });
    }
    // A repaint resets the terminal's mouse modes: a host capturing the mouse re-applies its capture on Modes.
    this.sendModes();
  }

  /** Modes (extension `modes`) to a host that negotiated it. */
  private sendModes(): void {
    if (this.hostFeatures['modes'] === undefined || this.state === 'closed') return;
    this.send({ type: 'Modes', ...this.host.session.programModes });
  }

  /** Answers one Resolve request (extension `resolve`) with exactly one Resolved under its id. */
  private resolve(f: Extract<ClientFrame, { type: 'Resolve' }>): void {
    resolveRequest(this.host.session, this.host.offers, f.target, f.at)
      .catch((e: unknown) => {
        this.host.log(`client ${this.id}: resolve failed: ${(e as Error).message}`);
        return { kind: 'none' as const, text: '' };
      })
      .then((a) => {
        if (this.state === 'attached') this.send({ type: 'Resolved', requestId: f.requestId, kind: a.kind, text: a.text });
      }, () => undefined);
  }

  private handleAttached(f: ClientFrame): void {
    const session = this.host.session;
    // The program is gone and only ExtHello is awaited (see shutdown).
    if (this.awaitingExtHello !== null && f.type !== 'ExtHello') return;
    switch (f.type) {
      case 'Hello':
        this.host.log(`client ${this.id}: ignored a second Hello`);
        return;
      case 'Resize':
        session.resize(f.rows, f.cols);
        return;
      case 'Input':
        this.input(f.bytes);
        return;
      case 'Command':
        // Reserved by upstream; upstream capsules ignore it too.
        return;
      case 'Detach':
        this.shutdown('detached');
        return;
      case 'FocusIn':
      case 'FocusOut':
        this.focus(f.type === 'FocusIn');
        return;
      case 'ClipboardImage':
        this.image({ kind: 'whole', format: f.format, bytes: f.bytes }, null);
        return;
      case 'ClipboardImageStart':
        this.image({ kind: 'start', transferId: f.transferId, format: f.format, size: f.size }, null);
        return;
      case 'ClipboardImageChunk':
        this.image({ kind: 'chunk', transferId: f.transferId, offset: f.offset, bytes: f.bytes }, null);
        return;
      case 'ClipboardImageEnd':
        this.image({ kind: 'end', transferId: f.transferId, sha256: f.sha256 }, null);
        return;
      case 'ClipboardImageError':
        this.image({ kind: 'error', message: f.message }, null);
        return;
      case 'HostNotice':
        // An upstream host asks us to show the operator something: drawn like our own notices.
        this.notify('info', f.text);
        return;
      case 'AttachControl':
        this.control(f);
        return;
      case 'ExtHello':
        this.noteExtHello(f.features);
        if (this.awaitingExtHello !== null) {
          this.awaitingExtHello();
          return;
        }
        // The attach repaint went out before the host said it wants Modes.
        this.sendModes();
        return;
      case 'Repaint':
        this.runExclusive(() => this.repaintExact());
        return;
      case 'Resolve':
        if (this.host.features['resolve'] === undefined) {
          this.host.log(`client ${this.id}: ignored Resolve (not advertised)`);
          return;
        }
        this.resolve(f);
        return;
      case 'StageOnly':
        if (this.host.features['stage-only'] === undefined || this.host.imageSink.stageOnly === undefined) {
          this.host.log(`client ${this.id}: ignored StageOnly (not advertised)`);
          return;
        }
        // Handled in frame order, so it is recorded before the image request that follows it.
        this.host.imageSink.stageOnly(f.requestId);
        return;
      default:
        assertNever(f);
    }
  }

  private control(f: Extract<ClientFrame, { type: 'AttachControl' }>): void {
    const { body, requestId, context } = f;
    switch (body.kind) {
      case 'Detach':
        this.respond(requestId, 'success');
        this.shutdown('detached');
        return;
      case 'FocusIn':
      case 'FocusOut':
        this.focus(body.kind === 'FocusIn');
        this.respond(requestId, 'success');
        return;
      case 'ClipboardImage':
        this.image({ kind: 'whole', format: body.format, bytes: body.bytes }, requestId, context);
        return;
      case 'ClipboardImageStart':
        this.image({ kind: 'start', transferId: body.transferId, format: body.format, size: body.size }, requestId, context);
        return;
      case 'ClipboardImageChunk':
        this.image({ kind: 'chunk', transferId: body.transferId, offset: body.offset, bytes: body.bytes }, requestId, context);
        return;
      case 'ClipboardImageEnd':
        this.image({ kind: 'end', transferId: body.transferId, sha256: body.sha256 }, requestId, context);
        return;
      case 'ClipboardImageError':
        this.image({ kind: 'error', message: body.message }, requestId, context);
        return;
      default:
        assertNever(body);
    }
  }

  private input(bytes: Buffer): void {
    if (this.host.session.write(bytes) || this.inputBlocked) return;
    // The PTY is not draining (the program is not reading): stop reading this client until it does.
    this.inputBlocked = true;
    this.socket.pause();
    const sub = this.host.session.onDrain(() => {
      sub.dispose();
      this.inputBlocked = false;
      if (!this.busy && this.state !== 'closed') this.socket.resume();
    });
  }

  private focus(focusIn: boolean): void {
    if (!this.host.session.modes.focusReporting) return;
    this.host.session.write(Buffer.from(focusIn ? '\x1b[I' : '\x1b[O', 'latin1'));
  }

  private image(op: ImageOp, requestId: bigint | null, context: Extract<ClientFrame, { type: 'AttachControl' }>['context'] | null = null): void {
    Promise.resolve()
      .then(() => this.host.imageSink.handle({ op, requestId, context }, this.replies))
      .catch((e: unknown) => {
        this.host.log(`client ${this.id}: image sink failed: ${(e as Error).message}`);
        if (requestId !== null && (op.kind === 'whole' || op.kind === 'start')) this.respond(requestId, 'rejected');
      });
  }

  private respond(requestId: bigint, result: ControlResult): void {
    if (this.state === 'closed') return;
    this.send({ type: 'AttachControlResponse', requestId, result });
  }

  /** Tells the operator: a Notice frame for a host that draws notices, else drawn by the capsule. */
  notify(level: NoticeLevel, text: string): void {
    this.host.log(`client ${this.id}: notice (${level}): ${text}`);
    if (this.state !== 'attached') return;
    if (this.hostFeatures['notice'] !== undefined) {
      this.send({ type: 'Notice', level, text: truncateUtf8(text, MAX_NOTICE_TEXT_BYTES) });
      return;
    }
    this.overlay.post(level, text);
  }

  private detachFromSession(): void {
    if (this.outputTimer !== null) clearTimeout(this.outputTimer);
    this.outputTimer = null;
    this.pendingOutput = [];
    this.pendingOutputBytes = 0;
    this.modesSub?.dispose();
    this.modesSub = null;
    if (this.waitingDrain) {
      this.waitingDrain = false;
      this.host.session.release(this.holdName);
    }
  }

  private onClose(): void {
    this.overlay.dispose();
    if (this.closeTimer) clearTimeout(this.closeTimer);
    this.state = 'closed';
    this.detachFromSession();
    this.host.imageSink.connectionClosed?.();
    this.host.closed(this);
  }
}
