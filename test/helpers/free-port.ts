import { connect, createServer, type AddressInfo } from 'node:net';

/** A port free on the host's loopback now (bound and released), for a server or a forward a test starts. */
export async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen({ host: '127.0.0.1', port: 0 }, () => r()));
  const { port } = s.address() as AddressInfo;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

/** How a TCP connect to the host's loopback `port` ends: 'open' or the error's code (ECONNREFUSED: nothing bound). */
export function probePort(port: number, host = '127.0.0.1'): Promise<string> {
  return new Promise((resolve) => {
    const s = connect({ host, port }, () => {
      s.destroy();
      resolve('open');
    });
    s.on('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? 'error'));
  });
}
