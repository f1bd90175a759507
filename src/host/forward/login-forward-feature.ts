/**
 * Login callbacks on the open gesture (docs/guide.md, "Logging in from a container"): when the operator
 * opens a link (click, palette, offered link) whose target, or whose callback parameter (redirect_uri,
 * callback_url, return_to, … CALLBACK_PARAMETERS), is a loopback URL with a port (login-callback.ts), the host binds that port on its own
 * loopback before the browser opens and forwards each connection to the same port of the container's
 * loopback. The confirm prompt says so; a notice and the host's log record it. It closes once its first
 * HTTP exchange is done and the connection idle, after LOGIN_FORWARD_MAX_MS at most, and with the session.
 * Nothing is bound without the gesture: a program that only prints or offers a URL gets nothing. When the
 * capsule's loopback is the host's own (the embedded default, `jackin run` without --image), the callback
 * already reaches the program and a forward would only connect back to itself: nothing is done then.
 * A forward still open when the session ends is closed, logged and unrecorded before jackin exits (close()).
 *
 * The links affordance does not know this one: it asks the session's URL-open hooks, which this installs.
 */
import { DisposableStore, toDisposable, type Disposable } from '../../disposable.ts';
import { JackinError } from '../../errors.ts';
import { envSwitch } from '../../policy/env-switch.ts';
import { hasFeature } from '../../protocol/index.ts';
import type { Transport } from '../../transport/transport.ts';
import type { SessionFrames, SessionNotices, SessionRequests } from '../session/feature-session.ts';
import type { UrlOpenStep } from '../session/url-open-hooks.ts';
import { rmSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { type CallbackKey, callbackKey } from './callback-match.ts';
import { CallbackRegistration, spawnCallbackRouter, type StartRouter } from './callback-registration.ts';
import { newInboxPath } from './callback-router.ts';
import { type ForwardEvent, ForwardListener } from './forward-listener.ts';
import { recordForward } from './forward-registry.ts';
import { announceForwards } from './forward-announce.ts';
import { loginCallbackPort } from './login-callback.ts';

/** The longest a login forward stays open. */
export const LOGIN_FORWARD_MAX_MS = 10 * 60_000;
/** Silence after the first exchange (bytes both ways) that ends it. */
export const LOGIN_FORWARD_IDLE_MS = 2_000;

/** False when JACKIN_LOGIN_FORWARD is an off-word (env-switch.ts). */
export function loginForwardEnabled(env: Readonly<Record<string, string | undefined>>): boolean {
  return envSwitch(env, 'JACKIN_LOGIN_FORWARD');
}

export interface LoginForwardOptions {
  readonly instance: string;
  /** Opens a new connection to the capsule; without it (no way to reach the capsule again) nothing is forwarded. */
  readonly connect?: () => Promise<Transport>;
  /** JACKIN_HOME, for `jackin ls`; no record without it. */
  readonly home?: string;
  readonly env?: Readonly<Record<string, string | undefined>>;
  readonly maxMs?: number;
  readonly idleMs?: number;
  /**
   * The capsule's loopback is this host's (a capsule jackin started here, or one whose network namespace is
   * the host's): a callback port is already the host's port, so nothing is forwarded, said or logged.
   */
  readonly sharedLoopback?: boolean;
  /**
   * Starts the callback router of a port (with `home`: the callbacks of every session of the user are routed
   * by their link's state, callback-router.ts); the detached `jackin callback-router` unless a test says.
   */
  readonly startRouter?: StartRouter;
}

/** What the login forward uses of the session. */
export type LoginForwardSession = Pick<SessionFrames, 'features'> & SessionNotices & Pick<SessionRequests, 'addUrlOpenHook'>;

/** The action log's target for the forward of `port`. */
function forwardTarget(port: number, instance: string): string {
  return `localhost:${port} -> ${instance}:${port}`;
}

/** What one login forward needs of the feature that opens it. */
interface LoginForwardHooks {
  readonly session: SessionNotices;
  readonly instance: string;
  readonly idleMs: number;
  /** Keeps the closing in the feature's pending set (close() waits for it). */
  readonly track: (p: Promise<void>) => Promise<void>;
  /** The forward closes: the feature forgets it. */
  readonly forget: () => void;
}

/** What a bound forward holds. */
interface Bound {
  readonly listener: ForwardListener;
  /** Its links registered with the port's callback router (null: the listener has the port itself). */
  readonly registration: CallbackRegistration | null;
  readonly recorded: Promise<(() => Promise<void>) | null>;
  readonly deadline: NodeJS.Timeout;
}

/**
 * One callback port: made before its port is bound (the listener's events reach it), live once bound();
 * it closes once its first exchange is done, at its deadline, or with the session.
 */
class LoginForward {
  readonly #port: number;
  readonly #hooks: LoginForwardHooks;
  #sentAny = false;
  #receivedAny = false;
  #idle: NodeJS.Timeout | undefined;
  /** Unset until the port is bound: a close before then does nothing. */
  #bound: Bound | undefined;
  #closing: Promise<void> | undefined;

  constructor(port: number, hooks: LoginForwardHooks) {
    this.#port = port;
    this.#hooks = hooks;
  }

  /** The port is bound and its record being written: the deadline starts, and closes may come. */
  bound(listener: ForwardListener, registration: CallbackRegistration | null, recorded: Promise<(() => Promise<void>) | null>, maxMs: number): void {
    const deadline = setTimeout(() => this.#closeSoon(`${Math.round(maxMs / 60_000)} minutes passed`), maxMs);
    this.#bound = { listener, registration, recorded, deadline };
  }

  /** Another link of this session calls back to the same port: the router learns its state too. */
  async addLink(key: CallbackKey): Promise<void> {
    await this.#bound?.registration?.add(key);
  }

  onEvent(e: ForwardEvent): void {
    if (e.kind === 'closed' && e.outcome.sent > 0 && e.outcome.received > 0) this.#closeSoon('its exchange is done');
    if (e.kind === 'failed') this.#hooks.session.notify('warning', `Login callback on localhost:${this.#port} not forwarded: ${e.error.message}`);
  }

  onBytes(direction: 'sent' | 'received'): void {
    if (direction === 'sent') this.#sentAny = true;
    else this.#receivedAny = true;
    // The first exchange is done once both ways carried bytes and then nothing moves for a while.
    if (this.#sentAny && this.#receivedAny) {
      clearTimeout(this.#idle);
      this.#idle = setTimeout(() => this.#closeSoon('its exchange is done'), this.#hooks.idleMs);
    }
  }

  /** Closes the forward, logged closed and its record removed (nothing before it is bound). */
  close(why: string): Promise<void> {
    const b = this.#bound;
    if (b === undefined) return Promise.resolve();
    const { session, instance } = this.#hooks;
    const port = this.#port;
    // Once: a second caller (the session's end while the exchange's end closes it) waits for the first.
    this.#closing ??= this.#hooks.track(
      (async () => {
        clearTimeout(this.#idle);
        clearTimeout(b.deadline);
        this.#hooks.forget();
        // Unregistered first: the router hands this session nothing more, and frees the port if it was the last.
        await b.registration?.close();
        await b.listener.close();
        await (await b.recorded)?.();
        session.notify('info', `Stopped forwarding localhost:${port} to ${instance}: ${why}`);
        session.logAction({ action: 'login-forward', target: forwardTarget(port, instance), result: 'ok', detail: `closed: ${why}` });
      })(),
    );
    return this.#closing;
  }

  #closeSoon(why: string): void {
    void this.close(why);
  }
}

/** The login-callback forwards of one attached session; installLoginForwardFeature() makes it. */
export class LoginForwardFeature implements Disposable {
  readonly #session: LoginForwardSession;
  readonly #o: LoginForwardOptions;
  readonly #store = new DisposableStore();
  readonly #env: Readonly<Record<string, string | undefined>>;
  readonly #live = new Map<number, LoginForward>();
  /** Set once the session ended: a forward whose port was being bound then closes as soon as it is. */
  #ended = false;
  /** Forwards being opened or closed, so close() returns only once every one of them is done. */
  readonly #pending = new Set<Promise<void>>();

  constructor(session: LoginForwardSession, o: LoginForwardOptions) {
    this.#session = session;
    this.#o = o;
    this.#env = o.env ?? process.env;
    this.#store.add(session.addUrlOpenHook((href) => this.#urlOpenStep(href)));
    // The session disposes its affordances when it ends: every forward closes then.
    this.#store.add(toDisposable(() => void this.close()));
  }

  /** Closes every open login forward (each logged closed, its record removed); resolves when all are done. */
  async close(): Promise<void> {
    // Closes every forward, and waits for those being opened or closed already.
    this.#ended = true;
    for (const l of this.#live.values()) void l.close('the session ended');
    while (this.#pending.size > 0) await Promise.all([...this.#pending]);
  }

  dispose(): void {
    this.#store.dispose();
  }

  #track(p: Promise<void>): Promise<void> {
    this.#pending.add(p);
    const done = (): void => void this.#pending.delete(p);
    p.then(done, done);
    return p;
  }

  #urlOpenStep(href: string): UrlOpenStep | null {
    const session = this.#session;
    const o = this.#o;
    if (!loginForwardEnabled(this.#env) || o.sharedLoopback === true) return null;
    const port = loginCallbackPort(href);
    if (port === null) return null;
    const key = callbackKey(href);
    const live = this.#live.get(port);
    if (live !== undefined)
      return { note: `and keep forwarding localhost:${port} to ${o.instance}`, entry: `forwarding port ${port}`, run: () => live.addLink(key) };
    if (!hasFeature(session.features, 'forward') || o.connect === undefined) {
      const why =
        session.features === null
          ? 'an upstream capsule has no forwards'
          : 'this capsule has no forwards (an older jackin-capsule; update it in the container)';
      return {
        run: async () => {
          session.notify('warning', `Not forwarding localhost:${port} to ${o.instance}: ${why}; the link opens, its callback will not reach the container`);
          session.logAction({ action: 'login-forward', target: forwardTarget(port, o.instance), result: 'refused', detail: 'E_FORWARD_UNSUPPORTED' });
        },
      };
    }
    // Routed by state, the callback finds this session among others on the port; without one the newest link wins.
    const routed = o.home !== undefined;
    const stateless = routed && key.state === null ? ` (no state in this link: the last link opened for port ${port} gets its callback)` : '';
    return {
      note: `…and forward localhost:${port} to ${o.instance}${stateless}`,
      entry: `forwards port ${port}`,
      run: () => this.#track(this.#open(port, key)),
    };
  }

  /** The router's port, or (no JACKIN_HOME to share one) the port bound by this session alone. */
  async #listen(port: number, key: CallbackKey, forward: LoginForward): Promise<{ listener: ForwardListener; registration: CallbackRegistration | null }> {
    const o = this.#o;
    const events = {
      connect: o.connect!,
      onEvent: (e: ForwardEvent) => forward.onEvent(e),
      onBytes: (_id: number, direction: 'sent' | 'received') => forward.onBytes(direction),
    };
    if (o.home === undefined) return { listener: await ForwardListener.listen({ hostPort: port, containerPort: port, ...events }), registration: null };
    // Absolute: the router, in a directory of its own, connects to the inbox by this name.
    const home = resolve(o.home);
    const inbox = newInboxPath(home, port);
    await mkdir(dirname(inbox), { recursive: true, mode: 0o700 });
    // The name is this process's: one left by a process of the same pid long gone is removed.
    rmSync(inbox, { force: true });
    const listener = await ForwardListener.listenUnix(inbox, { containerPort: port, ...events });
    try {
      const registration = await CallbackRegistration.open(
        {
          home,
          port,
          instance: o.instance,
          inbox,
          startRouter: o.startRouter ?? spawnCallbackRouter,
          onUnmatched: () =>
            this.#session.notify(
              'warning',
              `A callback on localhost:${port} matched no login link opened in jackin: it was answered so and forwarded to no container`,
            ),
        },
        key,
      );
      return { listener, registration };
    } catch (e) {
      await listener.close();
      throw e;
    }
  }

  async #open(port: number, key: CallbackKey): Promise<void> {
    const session = this.#session;
    const o = this.#o;
    if (this.#live.has(port) || this.#ended) return;
    const forward = new LoginForward(port, {
      session,
      instance: o.instance,
      idleMs: o.idleMs ?? LOGIN_FORWARD_IDLE_MS,
      track: (p) => this.#track(p),
      forget: () => void this.#live.delete(port),
    });
    let listener: ForwardListener;
    let registration: CallbackRegistration | null;
    try {
      ({ listener, registration } = await this.#listen(port, key, forward));
    } catch (e) {
      const why =
        e instanceof JackinError && e.code === 'E_FORWARD_PORT_TAKEN'
          ? `port ${port} is already in use on this host`
          : e instanceof Error
            ? e.message
            : String(e);
      session.notify(
        'warning',
        `Not forwarding localhost:${port} to ${o.instance}: ${why}; the link opens anyway, and its callback will not reach the container`,
      );
      session.logAction({ action: 'login-forward', target: forwardTarget(port, o.instance), result: 'failed', detail: why });
      return;
    }
    // The record for `jackin ls`, written while the forward runs; a close waits for it, then removes it.
    const written: Promise<(() => Promise<void>) | null> =
      o.home === undefined
        ? Promise.resolve(null)
        : recordForward(o.home, { instance: o.instance, hostPort: port, containerPort: port, kind: 'login' }).catch(() => null);
    // Listed in the container too (`jackin-capsule ports`) while it runs, when the capsule keeps such a list.
    const announced = hasFeature(session.features, 'forward-list')
      ? announceForwards(o.connect!, [{ hostPort: port, containerPort: port, kind: 'login' }])
      : undefined;
    const recorded = written.then((unrecord) => async () => {
      announced?.dispose();
      await unrecord?.();
    });
    forward.bound(listener, registration, recorded, o.maxMs ?? LOGIN_FORWARD_MAX_MS);
    this.#live.set(port, forward);
    session.notify(
      'info',
      `Forwarding localhost:${port} to ${o.instance} for the login's callback (until it is done, ${Math.round((o.maxMs ?? LOGIN_FORWARD_MAX_MS) / 60_000)} minutes at most)`,
    );
    session.logAction({
      action: 'login-forward',
      target: forwardTarget(port, o.instance),
      result: 'ok',
      detail:
        registration === null
          ? `listening on ${listener.addresses.join(', ')}`
          : `routed to it by the OAuth state of its link (state ${key.state === null ? 'none' : 'given'})`,
    });
    await recorded;
    // The session ended while the port was being bound: the forward closes at once.
    if (this.#ended) await forward.close('the session ended');
  }
}

export function installLoginForwardFeature(session: LoginForwardSession, o: LoginForwardOptions): LoginForwardFeature {
  return new LoginForwardFeature(session, o);
}
