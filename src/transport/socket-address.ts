/**
 * A Unix socket's address for bind() or connect(). The kernel takes at most 107 bytes of path on Linux
 * (103 on macOS), and Node silently cuts a longer path there: a capsule under a long JACKIN_HOME (a long
 * TMPDIR, a deep home directory) would listen on a truncated name and no host would find it. On Linux a long
 * path is reached through its directory instead, opened for the call: `/proc/self/fd/N/jackin.sock` names
 * the same file in few bytes. Elsewhere a long path is refused with a clear error.
 */
import { closeSync, constants, existsSync, openSync } from 'node:fs';
import { basename, dirname } from 'node:path';

/** Path bytes a socket address holds (sun_path less its terminating NUL). */
export const MAX_SOCKET_PATH_BYTES = process.platform === 'linux' ? 107 : 103;

export class SocketAddress {
  /** What to pass to listen() or connect(). */
  readonly address: string;
  /** The directory descriptor the address names, until released. */
  #fd: number | undefined;

  constructor(address: string, fd?: number) {
    this.address = address;
    this.#fd = fd;
  }

  /**
   * Closes the directory descriptor the address names, if any; call once the call completed. A bound
   * function: callers hand it to finally() or once() as it is.
   */
  readonly release = (): void => {
    if (this.#fd !== undefined) closeSync(this.#fd);
    this.#fd = undefined;
  };
}

/** An errno-shaped error, so callers read it like bind(2)'s or connect(2)'s own. */
function errnoError(code: string, message: string): NodeJS.ErrnoException {
  return Object.assign(new Error(message), { code });
}

/** `path` itself when it fits, else (Linux) the same file through its directory's descriptor; throws ENAMETOOLONG otherwise. */
export function socketAddress(path: string): SocketAddress {
  const bytes = Buffer.byteLength(path);
  if (bytes <= MAX_SOCKET_PATH_BYTES) return new SocketAddress(path);
  if (process.platform !== 'linux' || !existsSync('/proc/self/fd')) {
    throw errnoError('ENAMETOOLONG', `the socket path ${path} is ${bytes} bytes, more than the ${MAX_SOCKET_PATH_BYTES} a socket address holds`);
  }
  const fd = openSync(dirname(path), constants.O_RDONLY | constants.O_DIRECTORY);
  const address = `/proc/self/fd/${fd}/${basename(path)}`;
  if (Buffer.byteLength(address) > MAX_SOCKET_PATH_BYTES) {
    closeSync(fd);
    throw errnoError('ENAMETOOLONG', `the socket name ${basename(path)} is too long for a socket address`);
  }
  return new SocketAddress(address, fd);
}
