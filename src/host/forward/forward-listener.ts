/**
 * A host port forwarded to a port of the container's loopback (docs/protocol.md section 8.15): the host
 * listens on its own loopback only (127.0.0.1, and ::1 where the host has it), never on another address,
 * and forwards each accepted connection on a connection of its own to the capsule. At most
 * MAX_FORWARD_CONNECTIONS at once; more are reset. The listener never reads the bytes it carries.
 */
import { createServer, type Server, type Socket } from 'node:net';
import { JackinError } from '../../errors.ts';
import type { ForwardLoopback } from '../../protocol/index.ts';
import { forwardConnection } from '../../transport/forward-connect.ts';
import type { ForwardOutcome } from '../../transport/forward-pump.ts';
import type { Transport } from '../../transport/transport.ts';

/** Connections one forward carries at once. */
const MAX_FORWARD_CONNECTIONS = 32;

/** What happened to one accepted connection, for `-v` and for a login forward's end. */
export type ForwardEvent =
  | { readonly kind: 'accepted'; readonly id: number; readonly from: string }
  | { readonly kind: 'connected'; readonly id: number; readonly address: ForwardLoopback }
  | { readonly kind: 'closed'; readonly id: number; readonly outcome: ForwardOutcome }
  | { readonly kind: 'failed'; readonly id: number; readonly error: JackinError };

export interface ForwardListenerOptions {
  /** The host port (0: any free one, for tests). */
  readonly hostPort: number;
  readonly containerPort: number;
  readonly connect: () => Promise<Transport>;
  readonly maxConnections?: number;
  readonly onEvent?: (e: ForwardEvent) => void;
  readonly onBytes?: (id: number, direction: 'sent' | 'received', bytes: number) => void;
}

function listenOn(server: Server, host: string, port: number): Promise<NodeJS.ErrnoException | null> {
  return new Promise((resolve) => {
    const onError = (e: NodeJS.ErrnoException): void => resolve(e);
    server.once('error', onError);
    server.listen({ host, port, exclusive: true, ipv6Only: host === '::1' }, () => {
      server.off('error', onError);
      resolve(null);
    });
  });
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => (server.listening ? server.close(() => resolve()) : resolve()));
}

export class ForwardListener {
  readonly #o: ForwardListenerOptions;
  readonly #servers: Server[] = [];
  readonly #sockets = new Set<Socket>();
  #nextId = 1;
  #closed = false;
  /** The host port (the one asked, or the one picked for 0). */
  port = 0;
  /** The loopback addresses it listens on. */
  readonly addresses: string[] = [];

  // biome-ignore lint/style/useConsistentMemberAccessibility: built only by its static factory (an asynchronous set-up)
  private constructor(o: ForwardListenerOptions) {
    this.#o = o;
  }

  /**
   * Binds the host port on 127.0.0.1, then on ::1 when the host has IPv6 loopback. E_FORWARD_PORT_TAKEN when
   * either address has it in use already (nothing stays bound then).
   */
  static async listen(o: ForwardListenerOptions): Promise<ForwardListener> {
    const l = new ForwardListener(o);
    for (const host of ['127.0.0.1', '::1']) {
      const server = createServer({ allowHalfOpen: true, pauseOnConnect: true }, (s) => l.#accept(s));
      const err = await listenOn(server, host, host === '::1' ? l.port : o.hostPort);
      if (err === null) {
        l.#servers.push(server);
        l.addresses.push(host);
        const addr = server.address();
        if (typeof addr === 'object' && addr !== null) l.port = addr.port;
        continue;
      }
      // A host without IPv6 loopback forwards on 127.0.0.1 alone.
      if (host === '::1' && (err.code === 'EADDRNOTAVAIL' || err.code === 'EAFNOSUPPORT' || err.code === 'EINVAL')) continue;
      await l.close();
      if (err.code === 'EADDRINUSE') throw new JackinError('E_FORWARD_PORT_TAKEN', `port ${o.hostPort} is already in use on the host's loopback (${host})`);
      if (err.code === 'EACCES')
        throw new JackinError('E_FORWARD_PORT', `the host does not let this user listen on port ${o.hostPort} (${host}): pick a port of 1024 or above`);
      throw new JackinError('E_FORWARD_PORT_TAKEN', `cannot listen on ${host} port ${o.hostPort}: ${err.message}`);
    }
    return l;
  }

  /** Connections being forwarded now. */
  get active(): number {
    return this.#sockets.size;
  }

  get url(): string {
    return `http://localhost:${this.port}/`;
  }

  #accept(s: Socket): void {
    const id = this.#nextId++;
    const emit = this.#o.onEvent ?? (() => {});
    if (this.#closed || this.#sockets.size >= (this.#o.maxConnections ?? MAX_FORWARD_CONNECTIONS)) {
      s.on('error', () => {});
      s.resetAndDestroy();
      emit({
        kind: 'failed',
        id,
        error: new JackinError(
          'E_FORWARD_LIMIT',
          `${this.#o.maxConnections ?? MAX_FORWARD_CONNECTIONS} connections are forwarded already; this one was closed`,
        ),
      });
      return;
    }
    this.#sockets.add(s);
    s.once('close', () => this.#sockets.delete(s));
    // Until the pump listens (the capsule is being reached), a reset by the browser is only a failure of this
    // connection, reported by forwardConnection, never an uncaught error.
    s.on('error', () => {});
    emit({ kind: 'accepted', id, from: `${s.remoteAddress ?? '?'}:${s.remotePort ?? '?'}` });
    const onBytes = this.#o.onBytes;
    forwardConnection(s, {
      connect: this.#o.connect,
      port: this.#o.containerPort,
      onConnected: (address) => emit({ kind: 'connected', id, address }),
      ...(onBytes !== undefined ? { onBytes: (d: 'sent' | 'received', n: number) => onBytes(id, d, n) } : {}),
    }).then(
      (outcome) => emit({ kind: 'closed', id, outcome }),
      (e: unknown) =>
        emit({ kind: 'failed', id, error: e instanceof JackinError ? e : new JackinError('E_FORWARD_RESET', e instanceof Error ? e.message : String(e)) }),
    );
  }

  /** Stops listening and resets every connection still open. Idempotent. */
  async close(): Promise<void> {
    this.#closed = true;
    for (const s of this.#sockets) s.resetAndDestroy();
    await Promise.all(this.#servers.map(closeServer));
  }
}
