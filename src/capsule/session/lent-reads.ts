/**
 * The capsule's accepted connections read into one buffer lent to all of them (a socket's `onread`)
 * instead of a fresh 64 KiB buffer per read. Node offers `onread` only to sockets it connects; a server's
 * connection is re-wrapped here: the server accepts it paused (`pauseOnConnect`), and its handle is taken
 * into a new socket made with `onread`, which then counts as the server's connection (server.close waits for it).
 *
 * Every read is handed on at once, inside the read: to the connection's view reader when one is set
 * (readViews: a bulk receiver that copies what it keeps, such as the stage's decoder with copyInput), or
 * else as a 'data' event carrying a copy of exactly the bytes read, so every other consumer (attach
 * frames, control requests, forwards) sees an ordinary socket. pause() and resume() stop and start the
 * handle's reads as for any socket read with `onread`.
 *
 * The host's side of an export lends a buffer to the socket it connects (src/transport/borrowed-reads.ts),
 * one per connection, held until an async reader asks for the next read. Here the reads are consumed
 * before the callback returns, which is what lets one buffer serve every connection.
 *
 * Measured on Node 20 (bench/RESULTS.md): a server receiving 256 MiB from a local writer, hashing it and
 * writing it in 128 KiB pieces, spent 390-495 ms of CPU with a peak of 51 MiB through the lent buffer's
 * views, against 575-635 ms and 84 MiB through 'data' events of Node's own reads.
 */
import { type Server, Socket } from 'node:net';
import { BORROWED_READ_BYTES } from '../../transport/borrowed-reads.ts';

/** Where a connection's reads go while a view reader is set. */
interface ViewTarget {
  reader: ((view: Buffer) => void) | null;
}

const targets = new WeakMap<Socket, ViewTarget>();

/** The parts of an accepted socket and of the Socket constructor Node does not type. */
type Accepted = Socket & { _handle?: object | null };
type WrapOptions = ConstructorParameters<typeof Socket>[0] & {
  handle: object;
  onread: { buffer: Buffer; callback: (bytes: number, buffer: Buffer) => boolean | undefined };
};

/**
 * One lent buffer for every connection of a server. Reads run one at a time on the event loop and each is
 * consumed before the next, so the connections can share it.
 */
export class LentReads {
  readonly #buffer = Buffer.allocUnsafeSlow(BORROWED_READ_BYTES);

  /**
   * The connection `accepted` (from a server listening with `pauseOnConnect: true`) as a socket that reads
   * into the lent buffer. A connection whose handle is gone (closed at once) is returned as it is, resumed.
   */
  wrap(accepted: Socket, server: Server): Socket {
    const handle = (accepted as Accepted)._handle;
    if (handle === null || handle === undefined) {
      accepted.resume();
      return accepted;
    }
    const target: ViewTarget = { reader: null };
    const socket: Socket = new Socket({
      handle,
      allowHalfOpen: accepted.allowHalfOpen,
      readable: true,
      writable: true,
      onread: {
        buffer: this.#buffer,
        callback: (bytes, buffer) => {
          const view = buffer.subarray(0, bytes);
          if (target.reader !== null) target.reader(view);
          else socket.emit('data', Buffer.from(view));
          return undefined;
        },
      },
    } as WrapOptions);
    // What net.Server's own accept sets: the server counts this connection until it closes.
    Object.assign(socket, { server, _server: server });
    targets.set(socket, target);
    return socket;
  }
}

/**
 * Hands each read of `socket` to `reader` as a view valid only during the call (a copy of each read, in
 * 'data' events, on a socket that was not wrapped by LentReads); returns the function that stops it.
 */
export function readViews(socket: Socket, reader: (view: Buffer) => void): () => void {
  const target = targets.get(socket);
  if (target === undefined) {
    socket.on('data', reader);
    return () => socket.off('data', reader);
  }
  target.reader = reader;
  return () => {
    if (target.reader === reader) target.reader = null;
  };
}
