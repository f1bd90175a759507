/**
 * The capsule's Unix socket server: dispatches each connection on its first byte (0x00 control channel,
 * anything else attach frames starting with Hello), bounds connections and handshake time, and keeps at
 * most one attached client (a new attach takes over).
 */
import { unlink } from 'node:fs/promises';
import { createServer, type Server, type Socket } from 'node:net';
import {
  ControlMessageDecoder,
  encodeControlMessage,
  HANDSHAKE_TIMEOUT_MS,
  NOTICE_METHOD,
  STATUS_METHOD,
  type Features,
  type FeatureVersions,
  type NoticeLevel,
} from '../../protocol/index.ts';
import { toDisposable, type Disposable } from '../../disposable.ts';
import { AttachConnection, type AttachHost } from '../connection/attach-connection.ts';
import { startHelloGrace } from '../connection/attach-shutdown.ts';
import { answer, ControlMethods } from './control-methods.ts';
import { rejectingImageSink, type ImageSink } from '../connection/image-sink.ts';
import { Offers, registerOfferMethods } from '../connection/offers.ts';
import { PasteScanner } from '../connection/paste-scanner.ts';
import { LentReads } from './lent-reads.ts';
import { clearStaleSocket, listenPrivate } from './run-dir.ts';
import type { Session } from './session.ts';

const MAX_CONNECTIONS = 16;
const MAX_PENDING_HANDSHAKES = 8;
/** The extensions this capsule implements (docs/protocol.md, "Extensions"). */
export const CAPSULE_FEATURES: FeatureVersions = {
  'exit-status': 1,
  notice: 1,
  repaint: 1,
  resolve: 1,
  modes: 1,
  'image-staged': 1,
  'stage-only': 1,
  'file-stage': 1,
  forward: 1,
  'link-list': 1,
  'held-replies': 1,
  'forward-list': 1,
  ports: 1,
};

interface CapsuleInfo {
  name: string;
  program: string[];
  workspace: string;
  pid: number;
}

export interface CapsuleServerOptions {
  socketPath: string;
  session: Session;
  info: CapsuleInfo;
  handshakeTimeoutMs?: number;
  maxConnections?: number;
  maxPendingHandshakes?: number;
  imageSink?: ImageSink;
  features?: Features;
  log?: (line: string) => void;
  /**
   * Registers the capsule's other control methods (export, stage) before the socket exists: a client that
   * connects the moment it appears (a test, `jackin export` right after `podman run -d`) must never find
   * them missing (E_UNKNOWN_METHOD).
   */
  registerMethods?: (control: ControlMethods, server: CapsuleServer) => void;
}

export class CapsuleServer {
  readonly control = new ControlMethods();
  readonly offers = new Offers();
  /** The text the operator pasted last (bracketed), for the `clipboard-image` method. */
  readonly pasted = new PasteScanner();
  readonly socketPath: string;
  readonly #server: Server;
  /** What affordances want done when the server shuts down (onShutdown). */
  readonly #onShutdown: Array<() => void> = [];
  readonly #sockets = new Set<Socket>();
  /** Sockets that sent no complete frame yet, with the clock that cuts them off. */
  readonly #pending = new Map<Socket, Disposable>();
  readonly #attachConns = new Set<AttachConnection>();
  #current: AttachConnection | null = null;
  readonly #host: AttachHost;
  readonly #handshakeTimeoutMs: number;
  readonly #maxConnections: number;
  readonly #maxPending: number;
  /** Set once the program ended: what shutdown() was told, for a host that completes its Hello during it. */
  #closingWith: { exitStatus: number | null; reason: string | null } | null = null;
  /** An attach client has sent its first bytes (its Hello, or garbage) at some point (see shutdown's waitForHostMs). */
  #hostSeen = false;
  /** Ends the wait for a first host early; set only while shutdown waits for one. */
  #endLinger: (() => void) | null = null;

  readonly #options: CapsuleServerOptions;
  // biome-ignore lint/style/useConsistentMemberAccessibility: built only by its static factory (an asynchronous set-up)
  private constructor(options: CapsuleServerOptions) {
    this.#options = options;
    this.socketPath = options.socketPath;
    this.#handshakeTimeoutMs = options.handshakeTimeoutMs ?? HANDSHAKE_TIMEOUT_MS;
    this.#maxConnections = options.maxConnections ?? MAX_CONNECTIONS;
    this.#maxPending = options.maxPendingHandshakes ?? MAX_PENDING_HANDSHAKES;
    const log = options.log ?? (() => undefined);
    this.#host = {
      session: options.session,
      features: options.features ?? CAPSULE_FEATURES,
      imageSink: options.imageSink ?? rejectingImageSink,
      offers: this.offers,
      pasted: this.pasted,
      log,
      takeOver: (conn) => {
        const prev = this.#current;
        this.#current = conn;
        options.session.setOutputSink(null);
        if (prev && prev !== conn) prev.shutdown('another client attached');
      },
      isCurrent: (conn) => this.#current === conn,
      handshakeDone: (conn) => this.#handshakeDone(conn),
      closed: (conn) => {
        this.#attachConns.delete(conn);
        if (this.#current === conn) {
          this.#current = null;
          options.session.setOutputSink(null);
        }
      },
    };
    this.control.register(STATUS_METHOD, () =>
      answer({
        name: options.info.name,
        program: options.info.program,
        pid: options.info.pid,
        workspace: options.info.workspace,
        attached: this.attached,
        clients: this.clients,
      }),
    );
    // Lets a script in the container tell the operator something (shown as a notice, text made inert).
    this.control.register(NOTICE_METHOD, ({ level, text }) => {
      this.notify(level, text);
      return answer({ shown: this.attached });
    });
    registerOfferMethods(this.control, this.offers, (level, text) => this.notify(level, text));
    // Accepted paused, then re-wrapped to read into one lent buffer (lent-reads.ts).
    const lent = new LentReads();
    this.#server = createServer({ allowHalfOpen: true, pauseOnConnect: true }, (s) => this.#onConnection(lent.wrap(s, this.#server)));
  }

  /** Replaces a stale socket, listens (0600) and returns the running server. */
  static async listen(options: CapsuleServerOptions): Promise<CapsuleServer> {
    await clearStaleSocket(options.socketPath);
    const s = new CapsuleServer(options);
    options.registerMethods?.(s.control, s);
    await listenPrivate(s.#server, options.socketPath);
    return s;
  }

  get attached(): boolean {
    return this.#current?.attached ?? false;
  }

  /** Open connections: in their handshake, attached, or on the control channel (the bound maxConnections counts). */
  get connections(): number {
    return this.#sockets.size;
  }

  /** Attach clients that completed Hello and are still connected. */
  get clients(): number {
    let n = 0;
    for (const c of this.#attachConns) if (c.attached) n++;
    return n;
  }

  /** Runs `fn` when the server shuts down, before it waits for its connections to close. */
  onShutdown(fn: () => void): void {
    this.#onShutdown.push(fn);
  }

  /** Tells the operator of the attached client (drawn by their host or by us); a no-op when detached. */
  notify(level: NoticeLevel, text: string): void {
    this.#current?.notify(level, text);
  }

  /**
   * Tells attached clients the program ended (ExitStatus when negotiated, then Shutdown), stops listening,
   * removes the socket and waits (bounded) for the connections to close. With `waitForHostMs`, a capsule
   * that no attach client has reached yet first keeps accepting them for up to that long (see below).
   */
  async shutdown(exitStatus: number | null, reason: string | null, { waitForHostMs = 0 } = {}): Promise<void> {
    if (this.#closingWith !== null) return;
    this.#closingWith = { exitStatus, reason };
    // A program that ended before any host attached (`jackin run` of a program that exits at once): the
    // host that started this capsule may be connecting at this moment. Closing the listener now would
    // reset that connection (or refuse it), and the host would never learn the exit status, so keep
    // accepting attach clients until one sends its Hello or waitForHostMs have passed.
    if (waitForHostMs > 0 && !this.#hostSeen) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => this.#endLinger?.(), waitForHostMs);
        this.#endLinger = () => {
          clearTimeout(timer);
          this.#endLinger = null;
          resolve();
        };
      });
    }
    const closed = new Promise<void>((resolve) => this.#server.close(() => resolve()));
    await unlink(this.socketPath).catch(() => undefined);
    // What affordances hold open (a forward's announcement) is closed here, or the server would wait for it.
    for (const fn of this.#onShutdown.splice(0)) fn();
    for (const c of [...this.#attachConns]) c.shutdown(reason, exitStatus);
    // A connection that has sent nothing yet may be a host whose Hello is on the way (`jackin run` of a
    // program that exits at once): it gets HELLO_GRACE_MS to send it (see onConnection), then goes.
    for (const [s, clock] of this.#pending) {
      clock.dispose();
      this.#pending.set(
        s,
        startHelloGrace(() => s.destroy()),
      );
    }
    await closed;
  }

  #onConnection(socket: Socket): void {
    const closing = this.#closingWith !== null && this.#endLinger === null;
    if (closing || this.#sockets.size >= this.#maxConnections || this.#pending.size >= this.#maxPending) {
      this.#options.log?.(`refused a connection: ${this.#sockets.size} open, ${this.#pending.size} in handshake`);
      socket.destroy();
      return;
    }
    this.#sockets.add(socket);
    const timer = setTimeout(() => {
      this.#options.log?.(`closed a connection that sent no complete frame within ${this.#handshakeTimeoutMs} ms`);
      socket.destroy();
    }, this.#handshakeTimeoutMs);
    this.#pending.set(
      socket,
      toDisposable(() => clearTimeout(timer)),
    );
    socket.on('error', () => undefined);
    // The server allows half-open sockets (control replies stream after the request), but an EOF before a
    // complete first frame or request means the client is gone: free its handshake slot now, not at the
    // timeout, or a crowd of vanished clients would lock out a real one.
    socket.once('end', () => {
      if (this.#pending.has(socket)) socket.destroy();
    });
    socket.once('close', () => {
      this.#sockets.delete(socket);
      this.#pending.get(socket)?.dispose();
      this.#pending.delete(socket);
    });
    socket.once('data', (first: Buffer) => {
      if (first[0] === 0x00) {
        // No new control requests once the program has ended.
        if (this.#closingWith !== null) socket.destroy();
        else this.#serveControl(socket, first);
      } else {
        // allowHalfOpen is for the control channel's streamed replies; an attach client's EOF is a detach.
        socket.allowHalfOpen = false;
        const conn = new AttachConnection(socket, this.#host);
        this.#attachConns.add(conn);
        this.#hostSeen = true;
        conn.onData(first);
        // Connected before the program ended (or while shutdown waits for a first host): welcomed, then
        // told (AttachConnection.shutdown waits for that).
        if (this.#closingWith !== null) conn.shutdown(this.#closingWith.reason, this.#closingWith.exitStatus);
        this.#endLinger?.();
      }
    });
  }

  #handshakeDone(conn: AttachConnection | Socket): void {
    const socket = conn instanceof AttachConnection ? conn.socket : conn;
    this.#pending.get(socket)?.dispose();
    this.#pending.delete(socket);
  }

  #serveControl(socket: Socket, first: Buffer): void {
    const decoder = new ControlMessageDecoder();
    let handled = false;
    const onData = (chunk: Buffer): void => {
      if (handled) return;
      let messages: unknown[];
      try {
        messages = decoder.push(chunk);
      } catch (e) {
        this.#options.log?.(`control channel: ${(e as Error).message}`);
        socket.destroy();
        return;
      }
      const request = messages[0];
      if (messages.length === 0) return;
      handled = true;
      this.#handshakeDone(socket);
      void this.control.dispatch(request, socket).then(async (outcome) => {
        if (socket.destroyed) return;
        socket.write(encodeControlMessage(outcome.reply));
        if (outcome.ownLimit === true) this.#sockets.delete(socket);
        if (outcome.stream) await outcome.stream(socket).catch((e: unknown) => this.#options.log?.(`control stream: ${(e as Error).message}`));
        socket.end(() => socket.destroy());
      });
    };
    socket.on('data', onData);
    socket.on('end', () => {
      if (!handled) socket.destroy();
    });
    onData(first);
  }
}
