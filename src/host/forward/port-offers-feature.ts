/**
 * Port offers (docs/guide.md, "Ports the program opens"): a capsule with the `ports` extension tells this
 * host which TCP ports programs in the container listen on (Ports frames, docs/protocol.md section 8.17).
 * For each port that was not listening before, the host shows a notice of its own, made from the number
 * alone, and a palette entry **Forward port N**; nothing is bound before the operator chooses it. Choosing it
 * listens on the same port of the host's loopback when it is free, else on a free one (the notice names
 * the URL), and forwards each connection to port N of the container's loopback, until the session ends or
 * the operator chooses **Stop forwarding port N**. Each forward is recorded for `jackin ls` (kind `offer`)
 * and logged (`jackin log`, action `port-forward`).
 *
 * A link to `localhost:N` opened in this session while N is forwarded under another host port opens that
 * host port instead (a URL-open hook whose step names the URL that opens; the prompt shows both).
 *
 * The host asks for ports only when the capsule's loopback is not its own (a capsule jackin started on this
 * host shares its network: the program's port is already the host's) and JACKIN_PORT_OFFERS is not off.
 */
import { DisposableStore, toDisposable, type Disposable } from '../../disposable.ts';
import { JackinError } from '../../errors.ts';
import { envSwitch } from '../../policy/env-switch.ts';
import { hasFeature, isPort, type ServerFrame } from '../../protocol/index.ts';
import type { Transport } from '../../transport/transport.ts';
import { createRateLimiter, type RateLimiter } from '../platform/rate-limiter.ts';
import type { SessionFrames, SessionNotices, SessionPalette, SessionRequests } from '../session/feature-session.ts';
import type { UrlOpenStep } from '../session/url-open-hooks.ts';
import { ForwardListener } from './forward-listener.ts';
import { recordForward } from './forward-registry.ts';
import { announceForwards } from './forward-announce.ts';

/** Notices of opened ports (and of failed connections) at most this many in any window; the rest are only palette entries. */
const PORT_NOTICE_RATE = { max: 4, windowMs: 10_000 } as const;

/** Whether this session asks the capsule for ports: not where the loopback is shared, not with JACKIN_PORT_OFFERS off. */
export function portOffersWanted(env: Readonly<Record<string, string | undefined>>, sharedLoopback: boolean): boolean {
  return !sharedLoopback && envSwitch(env, 'JACKIN_PORT_OFFERS');
}

export interface PortOffersOptions {
  readonly instance: string;
  /** Opens a new connection to the capsule; without it nothing can be forwarded (no offers are made). */
  readonly connect?: () => Promise<Transport>;
  /** JACKIN_HOME, for `jackin ls`; no record without it. */
  readonly home?: string;
}

/** What the port offers use of the session. */
export type PortOffersSession = Pick<SessionFrames, 'features' | 'onFrame'> &
  SessionNotices &
  Pick<SessionPalette, 'registerAction'> &
  Pick<SessionRequests, 'addUrlOpenHook'>;

/** One port being forwarded. */
interface Forwarded {
  readonly listener: ForwardListener;
  readonly hostPort: number;
  readonly unrecord: Promise<(() => Promise<void>) | null>;
}

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/** The container port a loopback link names (its explicit port, else its scheme's), or null. */
function loopbackLinkPort(href: string): { url: URL; port: number } | null {
  let url: URL;
  try {
    url = new URL(href);
  } catch {
    return null;
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || !LOOPBACK_HOSTS.has(url.hostname)) return null;
  const port = url.port === '' ? (url.protocol === 'http:' ? 80 : 443) : Number(url.port);
  return isPort(port) ? { url, port } : null;
}

/** The action log's target for the forward of container port `port` from `hostPort`. */
function forwardTarget(hostPort: number, instance: string, port: number): string {
  return `localhost:${hostPort} -> ${instance}:${port}`;
}

/** The port offers of one attached session; installPortOffersFeature() makes it. */
export class PortOffersFeature implements Disposable {
  readonly #session: PortOffersSession;
  readonly #o: PortOffersOptions;
  readonly #store = new DisposableStore();
  /** The ports the capsule said listen now. */
  #listening = new Set<number>();
  /** Each offered or forwarded port's palette entry. */
  readonly #entries = new Map<number, Disposable>();
  readonly #forwards = new Map<number, Forwarded>();
  /** Ports whose forward is being opened. */
  readonly #opening = new Set<number>();
  readonly #pending = new Set<Promise<void>>();
  readonly #notices: RateLimiter;
  #ended = false;

  constructor(session: PortOffersSession, o: PortOffersOptions) {
    this.#session = session;
    this.#o = o;
    this.#notices = createRateLimiter(PORT_NOTICE_RATE);
    this.#store.add(session.onFrame((f) => this.#onFrame(f)));
    this.#store.add(session.addUrlOpenHook((href) => this.#urlOpenStep(href)));
    this.#store.add(toDisposable(() => void this.close()));
  }

  /** The container ports offered now (listening, not forwarded), ascending. */
  get offered(): number[] {
    return [...this.#listening].filter((p) => !this.#forwards.has(p)).sort((a, b) => a - b);
  }

  /** The host port each forwarded container port listens on. */
  get forwarded(): ReadonlyMap<number, number> {
    return new Map([...this.#forwards].map(([p, f]) => [p, f.hostPort]));
  }

  /** Forwards container port `port` (the operator chose its entry); resolves once it listens or failed. */
  forward(port: number): Promise<void> {
    return this.#track(this.#open(port));
  }

  /** Stops forwarding `port` (the operator chose its entry); resolves once closed. */
  stop(port: number, why = 'stopped from the palette'): Promise<void> {
    return this.#track(this.#close(port, why));
  }

  /** Closes every forward (each logged closed, its record removed); resolves when all are done. */
  async close(): Promise<void> {
    this.#ended = true;
    for (const port of [...this.#forwards.keys()]) void this.stop(port, 'the session ended');
    while (this.#pending.size > 0) await Promise.all([...this.#pending]);
  }

  dispose(): void {
    this.#store.dispose();
    for (const e of this.#entries.values()) e.dispose();
    this.#entries.clear();
  }

  #track(p: Promise<void>): Promise<void> {
    this.#pending.add(p);
    const done = (): void => void this.#pending.delete(p);
    p.then(done, done);
    return p;
  }

  #onFrame(f: ServerFrame): void {
    if (f.type !== 'Ports' || this.#ended) return;
    // Sent only to a host that announced `ports`; a capsule that sends it unasked is ignored.
    if (!hasFeature(this.#session.features, 'ports') || this.#o.connect === undefined) return;
    // The decoder checked the list; only numbers are taken from it, again checked.
    const now = new Set(f.ports.filter((p) => isPort(p)));
    const opened = [...now].filter((p) => !this.#listening.has(p));
    const closed = [...this.#listening].filter((p) => !now.has(p));
    this.#listening = now;
    for (const port of closed) {
      // A forwarded port keeps its entry (Stop forwarding); an offer of a port that closed goes.
      if (this.#forwards.has(port) || this.#opening.has(port)) continue;
      this.#entries.get(port)?.dispose();
      this.#entries.delete(port);
    }
    for (const port of opened) {
      if (this.#forwards.has(port) || this.#opening.has(port)) continue;
      this.#offer(port);
      if (this.#notices.tryTake()) this.#session.notify('info', `Port ${port} opened in the container: forward it from the palette (Forward port ${port})`);
    }
  }

  #offer(port: number): void {
    this.#entries.get(port)?.dispose();
    this.#entries.set(port, this.#session.registerAction({ id: `forward-port-${port}`, title: `Forward port ${port}`, run: () => this.forward(port) }));
  }

  async #open(port: number): Promise<void> {
    const session = this.#session;
    const { instance, connect, home } = this.#o;
    if (this.#forwards.has(port) || this.#opening.has(port) || this.#ended || connect === undefined) return;
    this.#opening.add(port);
    let listener: ForwardListener;
    try {
      const listen = (hostPort: number): Promise<ForwardListener> =>
        ForwardListener.listen({
          hostPort,
          containerPort: port,
          connect,
          onEvent: (e) => {
            // A browser retrying a port whose server stopped is told once in a while, not once per connection.
            if (e.kind === 'failed' && this.#notices.tryTake()) session.notify('warning', `Port ${port}: a connection was not forwarded: ${e.error.message}`);
          },
        });
      try {
        listener = await listen(port);
      } catch (e) {
        // The same port is taken on this host (or is below 1024): any free one instead, said in the notice.
        if (!(e instanceof JackinError) || (e.code !== 'E_FORWARD_PORT_TAKEN' && e.code !== 'E_FORWARD_PORT')) throw e;
        listener = await listen(0);
      }
    } catch (e) {
      this.#opening.delete(port);
      const why = e instanceof Error ? e.message : String(e);
      session.notify('error', `Could not forward port ${port}: ${why}`);
      session.logAction({ action: 'port-forward', target: `${instance}:${port}`, result: 'failed', detail: why });
      return;
    }
    const hostPort = listener.port;
    const written: Promise<(() => Promise<void>) | null> =
      home === undefined ? Promise.resolve(null) : recordForward(home, { instance, hostPort, containerPort: port, kind: 'offer' }).catch(() => null);
    // Listed in the container too (`jackin-capsule ports`) while it runs, when the capsule keeps such a list.
    const announced = hasFeature(session.features, 'forward-list')
      ? announceForwards(connect, [{ hostPort, containerPort: port, kind: 'offered' }])
      : undefined;
    const unrecord = written.then((remove) => async () => {
      announced?.dispose();
      await remove?.();
    });
    this.#forwards.set(port, { listener, hostPort, unrecord });
    this.#opening.delete(port);
    this.#entries.get(port)?.dispose();
    this.#entries.set(
      port,
      session.registerAction({
        id: `stop-forward-port-${port}`,
        title: `Stop forwarding port ${port} (localhost:${hostPort})`,
        run: () => this.stop(port),
      }),
    );
    const url = `http://localhost:${hostPort}/`;
    session.notify(
      'success',
      // The URL first: a long instance name never cuts it off.
      hostPort === port
        ? `Forwarding ${url} to port ${port} of ${instance}`
        : `Forwarding ${url} to port ${port} of ${instance} (port ${port} is taken on this host)`,
    );
    session.logAction({
      action: 'port-forward',
      target: forwardTarget(hostPort, instance, port),
      result: 'ok',
      detail: `listening on ${listener.addresses.join(', ')}`,
    });
    await unrecord;
    if (this.#ended) await this.#close(port, 'the session ended');
  }

  async #close(port: number, why: string): Promise<void> {
    const f = this.#forwards.get(port);
    if (f === undefined) return;
    this.#forwards.delete(port);
    const session = this.#session;
    const { instance } = this.#o;
    await f.listener.close();
    await (await f.unrecord)?.();
    this.#entries.get(port)?.dispose();
    this.#entries.delete(port);
    // Still listening in the container: offered again (without a second notice).
    if (this.#listening.has(port) && !this.#ended) this.#offer(port);
    session.notify('info', `Stopped forwarding port ${port} of ${instance} (localhost:${f.hostPort}): ${why}`);
    session.logAction({ action: 'port-forward', target: forwardTarget(f.hostPort, instance, port), result: 'ok', detail: `closed: ${why}` });
  }

  /** A link to a forwarded container port opens through its host port. */
  #urlOpenStep(href: string): UrlOpenStep | null {
    const link = loopbackLinkPort(href);
    if (link === null) return null;
    const f = this.#forwards.get(link.port);
    if (f === undefined) return null;
    if (f.hostPort === link.port) return { opens: href, run: async () => {} };
    const url = new URL(link.url.href);
    // A host without IPv6 loopback listens on 127.0.0.1 alone.
    if (url.hostname === '[::1]' && !f.listener.addresses.includes('::1')) url.hostname = 'localhost';
    url.port = String(f.hostPort);
    return {
      opens: url.href,
      note: `opens ${url.href} (container port ${link.port} is forwarded from host port ${f.hostPort})`,
      entry: `opens localhost:${f.hostPort}`,
      run: async () => {},
    };
  }
}

export function installPortOffersFeature(session: PortOffersSession, o: PortOffersOptions): PortOffersFeature {
  return new PortOffersFeature(session, o);
}
