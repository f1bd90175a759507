import { once } from 'node:events';
import { connect, createServer, type Socket } from 'node:net';
import { join } from 'node:path';
import type { TestContext } from 'node:test';

/** A real connection over a Unix socket: the client's end, and the served end a capsule method gets. */
export interface SocketPair {
  readonly client: Socket;
  readonly served: Socket;
}

/**
 * Listens on `<dir>/s.sock` (half-open allowed, as the capsule's server) and returns a function that opens
 * a connection and hands both its ends back. Every socket and the server are closed after the test (the
 * caller removes `dir`).
 */
export async function socketPairs(t: TestContext, dir: string): Promise<() => Promise<SocketPair>> {
  const accepted: Socket[] = [];
  const waiting: Array<(s: Socket) => void> = [];
  const server = createServer({ allowHalfOpen: true }, (s) => {
    const w = waiting.shift();
    if (w) w(s);
    else accepted.push(s);
  });
  const sockets: Socket[] = [];
  t.after(async () => {
    for (const s of sockets) s.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  server.listen(join(dir, 's.sock'));
  await once(server, 'listening');
  return async () => {
    const served = new Promise<Socket>((resolve) => {
      const s = accepted.shift();
      if (s) resolve(s);
      else waiting.push(resolve);
    });
    const client = connect(join(dir, 's.sock'));
    sockets.push(client);
    await once(client, 'connect');
    sockets.push(await served);
    return { client, served: await served };
  };
}
