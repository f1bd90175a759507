/**
 * A session's side of the login callback router (callback-router.ts): the connection that keeps its login
 * links registered with the router of one port, started first when none runs. Closing it unregisters them;
 * the router's end of it (its last session gone) comes once the port is free again.
 */
import { spawn } from 'node:child_process';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { isErrorCode, JackinError } from '../../errors.ts';
import { PACKAGE_ROOT } from '../../package-root.ts';
import { socketAddress } from '../../transport/socket-address.ts';
import type { CallbackKey } from './callback-match.ts';
import { CallbackRouter, LineReader, routerSocketPath } from './callback-router.ts';

/** Starts the router of `port` under `home` (or finds one live); throws E_FORWARD_PORT_TAKEN when another program has the port. */
export type StartRouter = (home: string, port: number) => Promise<void>;

/** How long a router may take to say it listens. */
const ROUTER_START_TIMEOUT_MS = 15_000;
/** How long the router may take to answer a registration, and to let go at the end. */
const ROUTER_REPLY_TIMEOUT_MS = 5_000;
/** Routers found closing (their last session just left) before one is reached. */
const ROUTER_ATTEMPTS = 5;

/** Starts `jackin callback-router PORT`, detached (it outlives this session while others use it), and waits for its first line. */
export const spawnCallbackRouter: StartRouter = (home, port) =>
  new Promise<void>((resolve, reject) => {
    const child = spawn(process.execPath, [join(PACKAGE_ROOT, 'bin', 'jackin.js'), 'callback-router', String(port)], {
      detached: true,
      stdio: ['ignore', 'pipe', 'ignore'],
      cwd: home,
      env: { ...process.env, JACKIN_HOME: home },
    });
    const reader = new LineReader();
    let settled = false;
    const done = (e: Error | null): void => {
      // Once: the first line decides; the pipe's end after it is expected.
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      child.stdout!.destroy();
      child.unref();
      if (e === null) resolve();
      else reject(e);
    };
    const timer = setTimeout(() => done(new JackinError('E_CALLBACK_ROUTER', `the callback router of port ${port} did not start`)), ROUTER_START_TIMEOUT_MS);
    child.once('error', (e) => done(new JackinError('E_CALLBACK_ROUTER', `cannot start the callback router of port ${port}: ${e.message}`)));
    child.stdout!.on('data', (chunk: Buffer) => {
      let line: string | undefined;
      try {
        line = reader.push(chunk)[0];
      } catch {
        line = '';
      }
      if (line === undefined) return;
      if (line === 'ready' || line === 'live') {
        done(null);
        return;
      }
      let error: { code?: unknown; message?: unknown } | undefined;
      try {
        error = (JSON.parse(line) as { error?: { code?: unknown; message?: unknown } }).error;
      } catch {}
      const code = typeof error?.code === 'string' && isErrorCode(error.code) ? error.code : 'E_CALLBACK_ROUTER';
      done(new JackinError(code, typeof error?.message === 'string' ? error.message.slice(0, 300) : `the callback router of port ${port} failed`));
    });
    child.stdout!.once('end', () => done(new JackinError('E_CALLBACK_ROUTER', `the callback router of port ${port} exited before it listened`)));
  });

/** Starts the router in this process (tests: no built CLI to spawn). */
export const startRouterInProcess: StartRouter = async (home, port) => {
  await CallbackRouter.start(home, port);
};

/** Connects to the router's control socket; null when none listens there. */
function tryConnect(path: string): Promise<Socket | null> {
  const address = socketAddress(path);
  return new Promise<Socket | null>((resolve) => {
    const s = connect({ path: address.address, allowHalfOpen: true }, () => {
      s.off('error', onError);
      resolve(s);
    });
    const onError = (): void => resolve(null);
    s.once('error', onError);
  }).finally(address.release);
}

export interface RegistrationOptions {
  readonly home: string;
  readonly port: number;
  readonly instance: string;
  /** The session's inbox (ForwardListener.listenUnix), where the router hands this session its callbacks. */
  readonly inbox: string;
  readonly startRouter: StartRouter;
  /** A callback on the port matched no link opened in jackin (the router answered it so). */
  readonly onUnmatched: () => void;
}

/** The links of one session registered with the router of one port. */
export class CallbackRegistration {
  readonly #o: RegistrationOptions;
  readonly #socket: Socket;
  readonly #replies: Array<(ok: boolean) => void> = [];
  readonly #gone: Promise<void>;

  // biome-ignore lint/style/useConsistentMemberAccessibility: built only by its static factory (an asynchronous set-up)
  private constructor(o: RegistrationOptions, socket: Socket) {
    this.#o = o;
    this.#socket = socket;
    socket.on('error', () => {});
    this.#gone = new Promise((resolve) => socket.once('close', () => resolve()));
    const reader = new LineReader();
    socket.on('data', (chunk: Buffer) => {
      let lines: string[];
      try {
        lines = reader.push(chunk);
      } catch {
        socket.destroy();
        return;
      }
      for (const line of lines) {
        let m: { ok?: unknown; event?: unknown };
        try {
          m = JSON.parse(line) as typeof m;
        } catch {
          continue;
        }
        if (m.ok === true) this.#replies.shift()?.(true);
        else if (m.event === 'unmatched') o.onUnmatched();
      }
    });
    void this.#gone.then(() => {
      for (const r of this.#replies.splice(0)) r(false);
    });
  }

  /** Registers the first link: reaches the router of the port, starting it when none answers. */
  static async open(o: RegistrationOptions, key: CallbackKey): Promise<CallbackRegistration> {
    const path = routerSocketPath(o.home, o.port);
    for (let attempt = 0; attempt < ROUTER_ATTEMPTS; attempt++) {
      const socket = await tryConnect(path);
      if (socket === null) {
        await o.startRouter(o.home, o.port);
        continue;
      }
      const r = new CallbackRegistration(o, socket);
      // A router closing as this connected (its last session just left) drops it: the next one is started.
      if (await r.add(key)) return r;
      socket.destroy();
    }
    throw new JackinError('E_CALLBACK_ROUTER', `the callback router of port ${o.port} could not be reached`);
  }

  /** Registers one more link of this session; false when the router did not take it. */
  add(key: CallbackKey): Promise<boolean> {
    return new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), ROUTER_REPLY_TIMEOUT_MS);
      this.#replies.push((ok) => {
        clearTimeout(timer);
        resolve(ok);
      });
      this.#socket.write(`${JSON.stringify({ instance: this.#o.instance, inbox: this.#o.inbox, state: key.state, path: key.path })}\n`);
    });
  }

  /** Unregisters every link; resolves once the router let go (the port is free then if this was its last session). */
  async close(): Promise<void> {
    this.#socket.end();
    const timer = setTimeout(() => this.#socket.destroy(), ROUTER_REPLY_TIMEOUT_MS);
    await this.#gone;
    clearTimeout(timer);
  }
}
