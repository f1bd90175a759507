import { connect, type Socket } from 'node:net';
import { JackinError } from '../errors.ts';
import type { Transport } from './transport.ts';

/** How long a local socket may take to accept; a live capsule answers in microseconds. */
export const SOCKET_CONNECT_TIMEOUT_MS = 2_000;

/** Errno codes meaning "nothing is listening here", as opposed to a permission or path problem. */
const NOT_LISTENING = new Set(['ENOENT', 'ECONNREFUSED', 'ENOTSOCK']);

function explain(path: string, code: string | undefined): string {
  switch (code) {
    case 'ENOENT':
      return `no socket at ${path}`;
    case 'ECONNREFUSED':
      return `nothing is listening on ${path} (stale socket: the capsule is not running)`;
    case 'EACCES':
    case 'EPERM':
      return `permission denied on ${path}: run jackin as the user that owns the capsule`;
    case 'ENOTSOCK':
      return `${path} is not a socket`;
    default:
      return `cannot connect to ${path}${code === undefined ? '' : ` (${code})`}`;
  }
}

/** Connects to a Unix socket. Rejects with E_SOCKET_UNAVAILABLE (message names the cause and the path). */
export function connectSocket(path: string, { timeoutMs = SOCKET_CONNECT_TIMEOUT_MS }: { timeoutMs?: number } = {}): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const sock = connect({ path });
    const timer = setTimeout(() => {
      sock.destroy();
      reject(new JackinError('E_SOCKET_UNAVAILABLE', `timed out after ${timeoutMs} ms connecting to ${path}`));
    }, timeoutMs);
    sock.once('connect', () => {
      clearTimeout(timer);
      sock.removeAllListeners('error');
      resolve(sock);
    });
    sock.once('error', (e: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      sock.destroy();
      reject(new JackinError('E_SOCKET_UNAVAILABLE', explain(path, e.code), { cause: e }));
    });
  });
}

/** True when the error says nobody listens at the path (so another transport may be tried). */
export function isNotListening(e: unknown): boolean {
  const cause = e instanceof Error ? (e.cause as NodeJS.ErrnoException | undefined) : undefined;
  return cause?.code !== undefined && NOT_LISTENING.has(cause.code);
}

/** Wraps a connected socket as a Transport. */
export function socketTransport(sock: Socket, path: string): Transport {
  return {
    kind: 'socket',
    readable: sock,
    writable: sock,
    description: `socket ${path}`,
    close() {
      sock.destroy();
    },
    // A socket has no account of its own beyond the error the reader already saw.
    failureDetail() {
      return Promise.resolve(null);
    },
  };
}
