import { closeSync, constants, existsSync, fstatSync, lstatSync, openSync, statSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { errnoOf, JackinError } from '../errors.ts';
import { MAX_SOCKET_PATH_BYTES, socketAddress } from './socket-address.ts';
import type { BorrowedReads, OnRead } from './borrowed-reads.ts';
import type { ConnectOptions, Transport } from './transport.ts';

/** How long a local socket may take to accept; a live capsule answers in microseconds. */
const SOCKET_CONNECT_TIMEOUT_MS = 2_000;

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
      return `${path} is not a socket (a symlink or another file in its place is never followed)`;
    case 'ENAMETOOLONG':
      return `the path ${path} is too long for a socket address (at most ${MAX_SOCKET_PATH_BYTES} bytes here); use a shorter JACKIN_HOME or --socket path`;
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

/** O_PATH (Linux): a descriptor naming a file without opening it, which a socket allows. Not in fs.constants. */
const O_PATH = 0o10000000;

/** An errno-shaped cause, so isNotListening and isPermissionDenied read it like connect(2)'s own. */
function errnoError(code: string, message: string): NodeJS.ErrnoException {
  return Object.assign(new Error(message), { code });
}

/**
 * Where to connect for `path` without following a symlink in its place, and what to release after. An
 * instance's socket lives in its run directory, which a container bind-mounts and can fill at will: a
 * symlink there (to another instance's socket, an ssh or gpg agent, the docker socket) would make the host
 * connect to, and send the operator's input, staged files and requests to, a socket of the container's
 * choosing. On Linux the socket is opened O_PATH|O_NOFOLLOW, checked to be a socket, and connected through
 * /proc/self/fd/N: exactly the file that was checked, whatever is renamed into its place meanwhile.
 * Elsewhere (macOS) an lstat() right before the connect refuses a planted symlink (a narrow race remains).
 */
function pinnedSocketPath(path: string): { target: string; release: () => void } {
  if (process.platform === 'linux' && existsSync('/proc/self/fd')) {
    let fd: number;
    try {
      fd = openSync(path, O_PATH | constants.O_NOFOLLOW);
    } catch (e) {
      throw errnoError(errnoOf(e) ?? 'EIO', e instanceof Error ? e.message : String(e));
    }
    let isSocket = false;
    try {
      isSocket = fstatSync(fd).isSocket();
    } catch {
      // Treated as not a socket below.
    }
    if (!isSocket) {
      closeSync(fd);
      throw errnoError('ENOTSOCK', `${path} is not a socket`);
    }
    return { target: `/proc/self/fd/${fd}`, release: () => closeSync(fd) };
  }
  // Node on Windows reads a connect path as a named pipe, which has no file to check.
  if (process.platform === 'win32') return { target: path, release: () => undefined };
  let st;
  try {
    st = lstatSync(path);
  } catch (e) {
    throw errnoError(errnoOf(e) ?? 'EIO', e instanceof Error ? e.message : String(e));
  }
  if (!st.isSocket()) throw errnoError('ENOTSOCK', `${path} is not a socket`);
  const { address, release } = socketAddress(path);
  return { target: address, release };
}

/**
 * Connects to a Unix socket. Rejects with E_SOCKET_UNAVAILABLE (message names the cause and the path).
 * A symlink in the socket's place is refused (ENOTSOCK) unless `followSymlink` (an operator's own
 * `--socket PATH`): see pinnedSocketPath.
 */
export function connectSocket(
  path: string,
  { timeoutMs = SOCKET_CONNECT_TIMEOUT_MS, followSymlink = false, onread }: { timeoutMs?: number; followSymlink?: boolean; onread?: OnRead } = {},
): Promise<Socket> {
  let pinned: { target: string; release: () => void };
  try {
    if (followSymlink) {
      const { address, release } = socketAddress(path);
      pinned = { target: address, release };
    } else pinned = pinnedSocketPath(path);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    return Promise.reject(new JackinError('E_SOCKET_UNAVAILABLE', explain(path, code), { cause: e }));
  }
  return new Promise<Socket>((resolve, reject) => {
    const sock = connect({ path: pinned.target, ...(onread !== undefined ? { onread } : {}) });
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
  }).finally(() => pinned.release());
}

/** True when the error says nobody listens at the path (so another transport may be tried). */
export function isNotListening(e: unknown): boolean {
  const cause = e instanceof Error ? (e.cause as NodeJS.ErrnoException | undefined) : undefined;
  return cause?.code !== undefined && NOT_LISTENING.has(cause.code);
}

/** Wraps a connected socket as a Transport; `borrowedReads` when it was connected with their onread. */
export function socketTransport(sock: Socket, path: string, borrowedReads?: BorrowedReads): Transport {
  return {
    kind: 'socket',
    readable: sock,
    ...(borrowedReads !== undefined ? { borrowedReads } : {}),
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

/**
 * connectSocket, then socketTransport: a connection read into the lent buffer when `borrowedReads` asks
 * for one (an export), in Node's own reads otherwise.
 */
export async function connectSocketTransport(
  path: string,
  { borrowedReads }: ConnectOptions = {},
  { followSymlink = false }: { followSymlink?: boolean } = {},
): Promise<Transport> {
  const onread = borrowedReads?.onread;
  const sock = await connectSocket(path, { followSymlink, ...(onread !== undefined ? { onread } : {}) });
  return socketTransport(sock, path, borrowedReads);
}
