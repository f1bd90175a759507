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
import { ForwardListener } from './forward-listener.ts';
import { recordForward } from './forward-registry.ts';
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
}

export interface LoginForwardFeature extends Disposable {
  /** Closes every open login forward (each logged closed, its record removed); resolves when all are done. */
  close(): Promise<void>;
}

/** One bound callback port. */
interface Live {
  readonly listener: ForwardListener;
  close(why: string): Promise<void>;
}

/** What the login forward uses of the session. */
export type LoginForwardSession = Pick<SessionFrames, 'features'> & SessionNotices & Pick<SessionRequests, 'addUrlOpenHook'>;

export function installLoginForwardFeature(session: LoginForwardSession, o: LoginForwardOptions): LoginForwardFeature {
  const store = new DisposableStore();
  const env = o.env ?? process.env;
  const live = new Map<number, Live>();
  const target = (port: number): string => `localhost:${port} -> ${o.instance}:${port}`;
  /** Set once the session ended: a forward whose port was being bound then closes as soon as it is. */
  let ended = false;
  /** Forwards being opened or closed, so close() returns only once every one of them is done. */
  const pending = new Set<Promise<void>>();
  const track = (p: Promise<void>): Promise<void> => {
    pending.add(p);
    const done = (): void => void pending.delete(p);
    p.then(done, done);
    return p;
  };

  const open = async (port: number): Promise<void> => {
    if (live.has(port) || ended) return;
    let sentAny = false;
    let receivedAny = false;
    let closing: Promise<void> | undefined;
    let idle: NodeJS.Timeout | undefined;
    let entry: Live | undefined;
    const closeSoon = (why: string): void => void entry?.close(why);
    const idleMs = o.idleMs ?? LOGIN_FORWARD_IDLE_MS;
    let listener: ForwardListener;
    try {
      listener = await ForwardListener.listen({
        hostPort: port,
        containerPort: port,
        connect: o.connect!,
        onEvent: (e) => {
          if (e.kind === 'closed' && e.outcome.sent > 0 && e.outcome.received > 0) closeSoon('its exchange is done');
          if (e.kind === 'failed') session.notify('warning', `Login callback on localhost:${port} not forwarded: ${e.error.message}`);
        },
        onBytes: (_id, direction) => {
          if (direction === 'sent') sentAny = true;
          else receivedAny = true;
          // The first exchange is done once both ways carried bytes and then nothing moves for a while.
          if (sentAny && receivedAny) {
            clearTimeout(idle);
            idle = setTimeout(() => closeSoon('its exchange is done'), idleMs);
          }
        },
      });
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
      session.logAction({ action: 'login-forward', target: target(port), result: 'failed', detail: why });
      return;
    }
    // The record for `jackin ls`, written while the forward runs; a close waits for it, then removes it.
    const recorded: Promise<(() => Promise<void>) | null> =
      o.home === undefined
        ? Promise.resolve(null)
        : recordForward(o.home, { instance: o.instance, hostPort: port, containerPort: port, kind: 'login' }).catch(() => null);
    const deadline = setTimeout(() => closeSoon(`${Math.round((o.maxMs ?? LOGIN_FORWARD_MAX_MS) / 60_000)} minutes passed`), o.maxMs ?? LOGIN_FORWARD_MAX_MS);
    entry = {
      listener,
      // Once: a second caller (the session's end while the exchange's end closes it) waits for the first.
      close: (why) =>
        (closing ??= track(
          (async () => {
            clearTimeout(idle);
            clearTimeout(deadline);
            live.delete(port);
            await listener.close();
            await (await recorded)?.();
            session.notify('info', `Stopped forwarding localhost:${port} to ${o.instance}: ${why}`);
            session.logAction({ action: 'login-forward', target: target(port), result: 'ok', detail: `closed: ${why}` });
          })(),
        )),
    };
    live.set(port, entry);
    session.notify(
      'info',
      `Forwarding localhost:${port} to ${o.instance} for the login's callback (until it is done, ${Math.round((o.maxMs ?? LOGIN_FORWARD_MAX_MS) / 60_000)} minutes at most)`,
    );
    session.logAction({ action: 'login-forward', target: target(port), result: 'ok', detail: `listening on ${listener.addresses.join(', ')}` });
    await recorded;
    // The session ended while the port was being bound: the forward closes at once.
    if (ended) await entry.close('the session ended');
  };

  store.add(
    session.addUrlOpenHook((href): UrlOpenStep | null => {
      if (!loginForwardEnabled(env) || o.sharedLoopback === true) return null;
      const port = loginCallbackPort(href);
      if (port === null) return null;
      if (live.has(port)) return { note: `and keep forwarding localhost:${port} to ${o.instance}`, entry: `forwarding port ${port}`, run: async () => {} };
      if (!hasFeature(session.features, 'forward') || o.connect === undefined) {
        const why =
          session.features === null
            ? 'an upstream capsule has no forwards'
            : 'this capsule has no forwards (an older jackin-capsule; update it in the container)';
        return {
          run: async () => {
            session.notify('warning', `Not forwarding localhost:${port} to ${o.instance}: ${why}; the link opens, its callback will not reach the container`);
            session.logAction({ action: 'login-forward', target: target(port), result: 'refused', detail: 'E_FORWARD_UNSUPPORTED' });
          },
        };
      }
      return { note: `…and forward localhost:${port} to ${o.instance}`, entry: `forwards port ${port}`, run: () => track(open(port)) };
    }),
  );
  /** Closes every forward, and waits for those being opened or closed already. */
  const closeAll = async (): Promise<void> => {
    ended = true;
    for (const l of live.values()) void l.close('the session ended');
    while (pending.size > 0) await Promise.all([...pending]);
  };
  // The session disposes its affordances when it ends: every forward closes then.
  store.add(toDisposable(() => void closeAll()));
  return { close: closeAll, dispose: () => store.dispose() };
}
