import { createServer, type AddressInfo } from 'node:net';

/** A port free on the host's loopback now (bound and released), for a server or a forward a test starts. */
export async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen({ host: '127.0.0.1', port: 0 }, () => r()));
  const { port } = s.address() as AddressInfo;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}
