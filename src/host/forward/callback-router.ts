/**
 * The login callback router of one host port (docs/guide.md, "Logging in from a container"): a small detached
 * process (`jackin callback-router PORT`, started by the first session that opens a login link calling back to
 * PORT) shared by every session of the user (one JACKIN_HOME). It owns the port on the host's loopback and a
 * control socket, `$JACKIN_HOME/callbacks/PORT.sock` (a 0700 directory). Each session holds a connection to
 * it while its login link is open, registering the link's OAuth `state` and callback path and the Unix
 * socket (its inbox) its callbacks are handed on; closing the connection unregisters. On each connection to
 * the port the router reads the request line (bounded, callback-match.ts), picks the session, connects to its
 * inbox, writes what it read and then pipes both ways; the session forwards that to its container. A callback
 * matching no link gets a short page saying so and is forwarded nowhere. The router exits once its last
 * session is gone (or none came), so nothing of it outlives the logins.
 *
 * The control connection carries JSON lines: a session sends `{"instance","inbox","state","path"}` (one per
 * link; the first names the inbox) and gets `{"ok":true}` for each; the router sends `{"event":"unmatched"}`
 * to every session when a callback matched none. A state is a secret while the login runs: nothing here
 * prints or logs one.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { dirname, join } from 'node:path';
import { JackinError } from '../../errors.ts';
import { socketAddress } from '../../transport/socket-address.ts';
import { type CallbackKey, MAX_REQUEST_LINE_BYTES, parseRequestLine, pickOwner, type RegisteredLink } from './callback-match.ts';
import { resetOrDestroy } from '../../transport/forward-pump.ts';
import { closeServer, listenLoopback } from './forward-listener.ts';

/** The longest a callback's request line may take to arrive. */
const REQUEST_LINE_TIMEOUT_MS = 5_000;
/** A router no session registers with (its starter died, or lost a race) exits after this. */
const UNUSED_ROUTER_MS = 30_000;
/** The longest line on the control connection. */
const MAX_CONTROL_LINE_BYTES = 64 * 1024;

/** The directory of the routers' sockets and the sessions' inboxes. */
function callbacksDir(home: string): string {
  return join(home, 'callbacks');
}

export function routerSocketPath(home: string, port: number): string {
  return join(callbacksDir(home), `${port}.sock`);
}

/** The router's pid while it runs (for tests and the curious; removed when it exits). */
export function routerPidPath(home: string, port: number): string {
  return join(callbacksDir(home), `${port}.pid`);
}

/** Inboxes made by this process so far: two sessions of one process (tests) never share one. */
let inboxes = 0;

/** A new inbox for a session of this process to listen on for the callbacks of `port`. */
export function newInboxPath(home: string, port: number): string {
  return join(callbacksDir(home), `${process.pid}-${port}-${inboxes++}.in`);
}

/** Splits a byte stream into lines; more than MAX_CONTROL_LINE_BYTES without a newline is an error. */
export class LineReader {
  #buf = '';

  push(chunk: Buffer): string[] {
    this.#buf += chunk.toString('utf8');
    const lines = this.#buf.split('\n');
    this.#buf = lines.pop()!;
    if (this.#buf.length > MAX_CONTROL_LINE_BYTES) throw new Error('control line too long');
    return lines;
  }
}

/** One link as a session registers it (a control line). */
interface LinkRegistration extends CallbackKey {
  readonly instance: string;
  readonly inbox: string;
}

function isRegistration(v: unknown): v is LinkRegistration {
  const r = v as Record<string, unknown> | null;
  return (
    typeof r === 'object' &&
    r !== null &&
    typeof r['instance'] === 'string' &&
    typeof r['inbox'] === 'string' &&
    (r['state'] === null || typeof r['state'] === 'string') &&
    (r['path'] === null || typeof r['path'] === 'string')
  );
}

/** A short HTML answer to a callback that is forwarded nowhere. */
function callbackPage(status: 400 | 404 | 502, text: string): string {
  const reason = status === 400 ? 'Bad Request' : status === 404 ? 'Not Found' : 'Bad Gateway';
  const body = `<!doctype html><html><head><meta charset="utf-8"><title>jackin</title></head><body><p>${text}</p></body></html>\n`;
  return `HTTP/1.1 ${status} ${reason}\r\ncontent-type: text/html; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`;
}

/** The page of a callback matching no link opened in jackin. */
export const NO_MATCH_TEXT = 'jackin: no login link opened in jackin matches this callback; it was not forwarded to any container.';

function listenUnix(server: Server, path: string): Promise<NodeJS.ErrnoException | null> {
  const address = socketAddress(path);
  return new Promise<NodeJS.ErrnoException | null>((resolve) => {
    server.once('error', resolve);
    server.listen(address.address, () => {
      server.off('error', resolve);
      resolve(null);
    });
  }).finally(address.release);
}

/** Whether something answers on the Unix socket `path`. */
function answers(path: string): Promise<boolean> {
  const address = socketAddress(path);
  return new Promise<boolean>((resolve) => {
    const s = connect(address.address, () => {
      s.destroy();
      resolve(true);
    });
    s.on('error', () => resolve(false));
  }).finally(address.release);
}

/** A session registered with the router: its control connection and its inbox. */
interface Client {
  readonly socket: Socket;
  inbox: string | null;
}

export class CallbackRouter {
  readonly #home: string;
  readonly #port: number;
  readonly #control: Server;
  readonly #sockPath: string;
  #tcp: Server[] = [];
  readonly #clients = new Set<Client>();
  #links: RegisteredLink<Client>[] = [];
  #seq = 0;
  #lastRouted: Client | null = null;
  /** Connections on the port, reset if still open when the router exits. */
  readonly #routing = new Set<Socket>();
  #unused: NodeJS.Timeout | undefined;
  #ended = false;
  readonly #closed: Promise<void>;
  #resolveClosed!: () => void;

  // biome-ignore lint/style/useConsistentMemberAccessibility: built only by its static factory (an asynchronous set-up)
  private constructor(home: string, port: number) {
    this.#home = home;
    this.#port = port;
    this.#sockPath = routerSocketPath(home, port);
    this.#control = createServer({ allowHalfOpen: true }, (s) => this.#acceptClient(s));
    this.#closed = new Promise((resolve) => (this.#resolveClosed = resolve));
  }

  /**
   * Starts the router of `port`: 'live' when one answers on its control socket already. Throws
   * E_FORWARD_PORT_TAKEN when another program has the port, E_CALLBACK_ROUTER when the socket cannot be made.
   */
  static async start(home: string, port: number): Promise<CallbackRouter | 'live'> {
    mkdirSync(callbacksDir(home), { recursive: true, mode: 0o700 });
    const r = new CallbackRouter(home, port);
    // The control socket is the router's lock: bound first, so two starters never both take the port.
    let err = await listenUnix(r.#control, r.#sockPath);
    if (err?.code === 'EADDRINUSE') {
      if (await answers(r.#sockPath)) return 'live';
      // Left by a router that died: removed, and tried once more.
      rmSync(r.#sockPath, { force: true });
      err = await listenUnix(r.#control, r.#sockPath);
      if (err?.code === 'EADDRINUSE') return 'live';
    }
    if (err !== null) throw new JackinError('E_CALLBACK_ROUTER', `cannot listen on ${r.#sockPath}: ${err.message}`);
    try {
      r.#tcp = (await listenLoopback(port, (s) => r.#acceptCallback(s))).servers;
    } catch (e) {
      r.#closeControl();
      throw e;
    }
    writeFileSync(routerPidPath(home, port), `${process.pid}\n`, { mode: 0o600 });
    r.#unused = setTimeout(() => r.#end(), UNUSED_ROUTER_MS).unref();
    return r;
  }

  /** Resolves once the router stopped: its last session left, or none came. */
  get closed(): Promise<void> {
    return this.#closed;
  }

  #closeControl(): void {
    void closeServer(this.#control);
    // In the same turn as the close: a router started after it cannot have bound this name yet.
    rmSync(this.#sockPath, { force: true });
  }

  /** Stops: the port first (free once the last session's close returns), then the control socket. */
  #end(): void {
    if (this.#ended) return;
    this.#ended = true;
    clearTimeout(this.#unused);
    const tcp = this.#tcp.map(closeServer);
    this.#closeControl();
    rmSync(routerPidPath(this.#home, this.#port), { force: true });
    for (const s of this.#routing) resetOrDestroy(s);
    for (const c of this.#clients) c.socket.end();
    void Promise.all(tcp).then(() => this.#resolveClosed());
  }

  #acceptClient(socket: Socket): void {
    socket.on('error', () => {});
    if (this.#ended) {
      socket.destroy();
      return;
    }
    clearTimeout(this.#unused);
    const client: Client = { socket, inbox: null };
    this.#clients.add(client);
    const reader = new LineReader();
    socket.on('data', (chunk: Buffer) => {
      try {
        for (const line of reader.push(chunk)) this.#register(client, JSON.parse(line));
      } catch {
        socket.destroy();
      }
    });
    // The session's end of the connection (or its death) unregisters its links.
    const gone = (): void => this.#unregister(client);
    socket.once('end', gone);
    socket.once('close', gone);
  }

  #register(client: Client, r: unknown): void {
    // An inbox is a socket of the callbacks directory, nowhere else.
    if (!isRegistration(r) || dirname(r.inbox) !== callbacksDir(this.#home)) throw new Error('bad registration');
    client.inbox ??= r.inbox;
    this.#links.push({ state: r.state, path: r.path, seq: this.#seq++, owner: client });
    client.socket.write(`${JSON.stringify({ ok: true })}\n`);
  }

  #unregister(client: Client): void {
    if (!this.#clients.delete(client)) return;
    this.#links = this.#links.filter((l) => l.owner !== client);
    if (this.#lastRouted === client) this.#lastRouted = null;
    if (this.#clients.size === 0) this.#end();
    // After #end: the port is free before the session reads the end of its connection.
    client.socket.end();
  }

  #acceptCallback(tcp: Socket): void {
    tcp.on('error', () => {});
    if (this.#ended) {
      tcp.resetAndDestroy();
      return;
    }
    this.#routing.add(tcp);
    tcp.once('close', () => this.#routing.delete(tcp));
    let head = Buffer.alloc(0);
    const timer = setTimeout(() => answer(400, 'jackin: the callback did not send its request in time; it was not forwarded.'), REQUEST_LINE_TIMEOUT_MS);
    const answer = (status: 400 | 404 | 502, text: string): void => {
      tcp.off('data', onData);
      clearTimeout(timer);
      tcp.end(callbackPage(status, text));
      tcp.resume();
    };
    const onData = (chunk: Buffer): void => {
      head = Buffer.concat([head, chunk]);
      const line = parseRequestLine(head);
      if (line.kind === 'incomplete') return;
      tcp.off('data', onData);
      tcp.pause();
      clearTimeout(timer);
      if (line.kind === 'invalid') {
        answer(400, 'jackin: this is not an HTTP request a login callback makes; it was not forwarded.');
        return;
      }
      const owner = pickOwner(this.#links, line, this.#lastRouted);
      if (owner === null || owner.inbox === null) {
        answer(404, NO_MATCH_TEXT);
        for (const c of this.#clients) c.socket.write(`${JSON.stringify({ event: 'unmatched', path: line.path.slice(0, 200) })}\n`);
        return;
      }
      this.#lastRouted = owner;
      this.#handOver(tcp, head, owner.inbox, () => answer(502, 'jackin: the session this login link was opened in is gone; the callback was not forwarded.'));
    };
    tcp.on('data', onData);
    tcp.once('end', () => {
      if (head.length < MAX_REQUEST_LINE_BYTES && parseRequestLine(head).kind === 'incomplete') tcp.destroy();
    });
    tcp.resume();
  }

  /** Connects to the session's inbox, writes what was read, then pipes both ways (ends and all). */
  #handOver(tcp: Socket, head: Buffer, inbox: string, unreachable: () => void): void {
    let address;
    try {
      address = socketAddress(inbox);
    } catch {
      unreachable();
      return;
    }
    const session = connect({ path: address.address, allowHalfOpen: true });
    this.#routing.add(session);
    session.once('close', () => this.#routing.delete(session));
    let connected = false;
    session.once('connect', () => {
      address.release();
      connected = true;
      session.write(head);
      tcp.pipe(session);
      session.pipe(tcp);
      tcp.resume();
    });
    session.on('error', () => {
      address.release();
      if (connected) tcp.destroy();
      else unreachable();
    });
    tcp.once('close', () => session.destroy());
  }
}
