/**
 * `jackin-capsule attach-proxy`: a byte-blind relay between stdio and the capsule socket, for hosts that
 * reach the capsule through `docker exec -i` and the like. Each direction is half-closed on its own: stdin
 * EOF ends the socket's write side (a control request can still get its streamed reply), and the socket's
 * EOF closes stdout (so the host sees EOF) while stdin keeps flowing until it ends.
 */
import { fstatSync } from 'node:fs';
import { connect, Socket } from 'node:net';
import { socketAddress, type SocketAddress } from '../transport/socket-address.ts';
import type { Readable, Writable } from 'node:stream';
import { JackinError } from '../errors.ts';

export interface AttachProxyOptions {
  socketPath: string;
  stdin?: Readable;
  stdout?: Writable;
}

/** A stdio fd as a stream that backpressures and that really closes the fd on end (process.stdout never
 * closes fd 1, so the reader on the other side would wait for our exit to see EOF). Pipes and sockets get
 * a net.Socket over the fd; anything else (a TTY, a file) keeps Node's own stream. */
function stdioStream(fd: 0 | 1): Readable | Writable {
  let kind = 'other';
  try {
    const st = fstatSync(fd);
    if (st.isFIFO() || st.isSocket()) kind = 'pipe';
  } catch {
    // fall through to Node's stream
  }
  if (kind === 'pipe') {
    return fd === 0 ? new Socket({ fd, readable: true, writable: false }) : new Socket({ fd, readable: false, writable: true });
  }
  return fd === 0 ? process.stdin : process.stdout;
}

/** Relays until both directions ended; resolves with 0, rejects with E_SOCKET_CONNECT when the socket
 * cannot be reached. */
export async function runAttachProxy(options: AttachProxyOptions): Promise<number> {
  const stdin = options.stdin ?? (stdioStream(0) as Readable);
  const stdout = options.stdout ?? (stdioStream(1) as Writable);
  const fail = (e: NodeJS.ErrnoException): JackinError =>
    new JackinError('E_SOCKET_CONNECT', `cannot connect to ${options.socketPath}: ${e.code ?? e.message}; is the capsule running (jackin-capsule serve)?`, {
      cause: e,
    });
  let address: SocketAddress;
  try {
    address = socketAddress(options.socketPath);
  } catch (e) {
    throw fail(e as NodeJS.ErrnoException);
  }
  const socket = connect({ path: address.address, allowHalfOpen: true });
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', (e: NodeJS.ErrnoException) => reject(fail(e)));
  }).finally(address.release);

  return new Promise<number>((resolve) => {
    let upDone = false;
    let downDone = false;
    let closingDown = false;
    const finish = (): void => {
      if (upDone && downDone) {
        socket.destroy();
        resolve(0);
      }
    };
    // stdin → socket
    stdin.on('data', (chunk: Buffer) => {
      if (!socket.write(chunk)) {
        stdin.pause();
        socket.once('drain', () => stdin.resume());
      }
    });
    stdin.once('end', () => {
      socket.end();
      upDone = true;
      finish();
    });
    stdin.once('error', () => {
      socket.end();
      upDone = true;
      finish();
    });
    // socket → stdout
    socket.on('data', (chunk: Buffer) => {
      if (!stdout.write(chunk)) {
        socket.pause();
        stdout.once('drain', () => socket.resume());
      }
    });
    const closeDown = (): void => {
      if (closingDown) return;
      closingDown = true;
      // Resolve only once stdout has flushed: the caller exits the process right after.
      stdout.end(() => {
        if (stdout instanceof Socket) stdout.destroy();
        downDone = true;
        finish();
      });
    };
    socket.once('end', closeDown);
    socket.on('error', () => {
      // The capsule went away: nothing more can be relayed either way.
      upDone = true;
      stdin.pause();
      closeDown();
      finish();
    });
    stdout.on('error', () => {
      // Nobody reads our output any more: stop reading the socket, keep the upstream direction.
      socket.pause();
      downDone = true;
      finish();
    });
  });
}
