import { statSync } from 'node:fs';
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
      return permissionDenied(path);
    case 'ENOTSOCK':
      return `${path} is not a socket`;
    default:
      return `cannot connect to ${path}${code === undefined ? '' : ` (${code})`}`;
  }
}

/** The uid owning `path` (the socket or, when it cannot be read, its directory), or null. */
export function socketOwner(path: string): number | null {
  try {
    return statSync(path).uid;
  } catch {
    return null;
  }
}

/**
 * EACCES on a capsule socket almost always means the capsule runs as another user than the operator: a
 * container whose capsule runs as root (the default user of most images) made a 0600 socket owned by root.
 */
function permissionDenied(path: string): string {
  const owner = socketOwner(path);
  const me = typeof process.getuid === 'function' ? process.getuid() : null;
  const who = owner === null ? '' : ` (owned by uid ${owner}${me === null ? '' : `, you are uid ${me}`})`;
  return (
    `permission denied on ${path}${who}: the capsule runs as another user. Start the container with ` +
    '`--user "$(id -u):$(id -g)"` (or use `jackin run --image`, which does), or use a jackin-capsule that hands ' +
    'its socket to the owner of the run directory, or attach as that user'
  );
}

/** True when the error is a permission refusal on the socket (not a missing or dead capsule). */
export function isPermissionDenied(e: unknown): boolean {
  const cause = e instanceof Error ? (e.cause as NodeJS.ErrnoException | undefined) : undefined;
  return cause?.code === 'EACCES' || cause?.code === 'EPERM';
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
