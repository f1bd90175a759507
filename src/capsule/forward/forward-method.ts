/**
 * The `forward` control method (docs/protocol.md section 8.15): the host asks `{"method":"forward","port":P}`
 * on a connection of its own; the capsule connects to the container's loopback, 127.0.0.1:P and then, when
 * that is refused, [::1]:P, and to nothing else (the request can name a port only: any other field is
 * refused), replies `{"ok":true,"address"}` and pumps bytes both ways until both end or one side resets.
 *
 * The capsule never looks into the bytes. At most MAX_CAPSULE_FORWARDS connections at once (the host keeps
 * its own, tighter limit per forward).
 */
import { connect, type Socket } from 'node:net';
import { FORWARD_LOOPBACKS, FORWARD_METHOD, type ForwardLoopback, type ForwardReply } from '../../protocol/index.ts';
import { pumpForward } from '../../transport/forward-pump.ts';
import { answer, refuse, type ControlAnswer, type ControlMethods } from '../session/control-methods.ts';

/** Forwarded connections open at once in this capsule; more are refused (E_FORWARD_LIMIT). */
const MAX_CAPSULE_FORWARDS = 256;
/** How long one connect to the container's loopback may take. */
const FORWARD_CONNECT_TIMEOUT_MS = 5_000;

export interface ForwardMethodOptions {
  readonly log?: (line: string) => void;
  readonly connectTimeoutMs?: number;
}

type Attempt = { ok: true; socket: Socket } | { ok: false; code: 'ECONNREFUSED' | 'ETIMEDOUT' | string; message: string };

/** One connect to `address:port`, allowHalfOpen so a half-close travels. */
function connectTo(address: ForwardLoopback, port: number, timeoutMs: number): Promise<Attempt> {
  return new Promise((resolve) => {
    const socket = connect({ host: address, port, allowHalfOpen: true, family: address === '::1' ? 6 : 4 });
    const timer = setTimeout(() => {
      socket.destroy();
      resolve({ ok: false, code: 'ETIMEDOUT', message: `${address} port ${port} did not accept within ${timeoutMs} ms` });
    }, timeoutMs);
    socket.once('connect', () => {
      clearTimeout(timer);
      socket.off('error', onError);
      // Until the pump listens, a reset by the server is noticed by the pump (a closed socket), not thrown.
      socket.on('error', () => {});
      resolve({ ok: true, socket });
    });
    const onError = (e: NodeJS.ErrnoException): void => {
      clearTimeout(timer);
      resolve({ ok: false, code: e.code ?? 'EIO', message: `${address} port ${port}: ${e.message}` });
    };
    socket.once('error', onError);
  });
}

/** Registers `forward` on the capsule's control channel. */
export function registerForwardMethod(control: ControlMethods, o: ForwardMethodOptions = {}): void {
  let open = 0;
  control.register(FORWARD_METHOD, async ({ port }, control): Promise<ControlAnswer<ForwardReply>> => {
    if (open >= MAX_CAPSULE_FORWARDS) return refuse('E_FORWARD_LIMIT', `${MAX_CAPSULE_FORWARDS} forwarded connections are open in this capsule already`);
    open++;
    let released = false;
    const release = (): void => {
      if (!released) open--;
      released = true;
    };
    const failures: string[] = [];
    let timedOut = false;
    // Only these two addresses, in this order: a server that listens on ::1 only is reached second.
    for (const address of FORWARD_LOOPBACKS) {
      const got = await connectTo(address, port, o.connectTimeoutMs ?? FORWARD_CONNECT_TIMEOUT_MS);
      if (got.ok) {
        const tcp = got.socket;
        // The host may go while we connected: then no stream runs, and the connection must not stay open.
        const orphaned = (): void => {
          tcp.destroy();
          release();
        };
        if (control.destroyed) {
          orphaned();
          return refuse('E_FORWARD_RESET', 'the host closed the connection');
        }
        control.once('close', orphaned);
        return answer(
          { address },
          {
            ownLimit: true,
            stream: async (socket) => {
              socket.off('close', orphaned);
              try {
                const outcome = await pumpForward({ side: 'server', local: tcp, peer: { readable: socket, writable: socket } });
                if (!outcome.ok) o.log?.(`forward of port ${port}: ${outcome.reason} (${outcome.by}): ${outcome.message}`);
                else await new Promise<void>((r) => (socket.writableFinished ? r() : socket.once('finish', () => r()).once('close', () => r())));
              } finally {
                release();
              }
            },
          },
        );
      }
      if (got.code === 'ETIMEDOUT') timedOut = true;
      failures.push(got.message);
    }
    release();
    return timedOut
      ? refuse('E_FORWARD_TIMEOUT', `the container's loopback did not accept port ${port}: ${failures.join('; ')}`)
      : refuse('E_FORWARD_REFUSED', `nothing listens on port ${port} of the container's loopback (127.0.0.1 nor ::1): ${failures.join('; ')}`);
  });
}
