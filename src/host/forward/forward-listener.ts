/**
 * A host port forwarded to a port of the container's loopback (docs/protocol.md section 8.15): the host
 * listens on its own loopback only (127.0.0.1, and ::1 where the host has it), never on another address,
 * and forwards each accepted connection on a connection of its own to the capsule. At most
 * MAX_FORWARD_CONNECTIONS at once; more are reset. The listener never reads the bytes it carries.
 */
import { rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { JackinError } from '../../errors.ts';
import type { ForwardLoopback } from '../../protocol/index.ts';
import { forwardConnection } from '../../transport/forward-connect.ts';
import { type ForwardOutcome, resetOrDestroy } from '../../transport/forward-pump.ts';
import { socketAddress } from '../../transport/socket-address.ts';
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

/**
 * Binds `port` on 127.0.0.1, then on ::1 when the host has IPv6 loopback (the same port: the one picked for
 * 0 on the first). E_FORWARD_PORT_TAKEN when either address has it in use already (nothing stays bound then).
 */
export async function listenLoopback(port: number, onConnection: (s: Socket) => void): Promise<{ servers: Server[]; addresses: string[]; port: number }> {
  const servers: Server[] = [];
  const addresses: string[] = [];
  let bound = port;
  for (const host of ['127.0.0.1', '::1']) {
    const server = createServer({ allowHalfOpen: true, pauseOnConnect: true }, onConnection);
    const err = await listenOn(server, host, host === '::1' ? bound : port);
    if (err === null) {
      servers.push(server);
      addresses.push(host);
      const addr = server.address();
      if (typeof addr === 'object' && addr !== null) bound = addr.port;
      continue;
    }
    // A host without IPv6 loopback forwards on 127.0.0.1 alone.
    if (host === '::1' && (err.code === 'EADDRNOTAVAIL' || err.code === 'EAFNOSUPPORT' || err.code === 'EINVAL')) continue;
    await Promise.all(servers.map(closeServer));
    if (err.code === 'EADDRINUSE') throw new JackinError('E_FORWARD_PORT_TAKEN', `port ${port} is already in use on the host's loopback (${host})`);
    if (err.code === 'EACCES')
      throw new JackinError('E_FORWARD_PORT', `the host does not let this user listen on port ${port} (${host}): pick a port of 1024 or above`);
    throw new JackinError('E_FORWARD_PORT_TAKEN', `cannot listen on ${host} port ${port}: ${err.message}`);
  }
  return { servers, addresses, port: bound };
}

export function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => (server.listening ? server.close(() => resolve()) : resolve()));
}

export class ForwardListener {
  readonly #o: ForwardListenerOptions;
  readonly #servers: Server[] = [];
  readonly #sockets = new Set<Socket>();
  #nextId = 1;
  #closed = false;
  /** The Unix socket listened on, removed at close. */
  #unlink: string | undefined;
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
    const bound = await listenLoopback(o.hostPort, (s) => l.#accept(s));
    l.#servers.push(...bound.servers);
    l.addresses.push(...bound.addresses);
    l.port = bound.port;
    return l;
  }

  /**
   * Listens on the Unix socket `path` instead of a TCP port: the inbox a login callback router hands this
   * session its callbacks on (callback-router.ts). `path` may be longer than a socket address holds.
   */
  static async listenUnix(path: string, o: Omit<ForwardListenerOptions, 'hostPort'>): Promise<ForwardListener> {
    const l = new ForwardListener({ ...o, hostPort: 0 });
    const server = createServer({ allowHalfOpen: true, pauseOnConnect: true }, (s) => l.#accept(s));
    const address = socketAddress(path);
    const err = await new Promise<NodeJS.ErrnoException | null>((resolve) => {
      server.once('error', resolve);
      server.listen(address.address, () => {
        server.off('error', resolve);
        resolve(null);
      });
    }).finally(address.release);
    if (err !== null) throw new JackinError('E_FORWARD_PORT', `cannot listen on ${path}: ${err.message}`);
    l.#servers.push(server);
    l.addresses.push(path);
    l.#unlink = path;
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
      resetOrDestroy(s);
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
    for (const s of this.#sockets) resetOrDestroy(s);
    const servers = this.#servers.map(closeServer);
    // Removed in the same turn as the close: nothing else can have bound this name in between.
    if (this.#unlink !== undefined) rmSync(this.#unlink, { force: true });
    await Promise.all(servers);
  }
}
