import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { connect, createServer, type AddressInfo } from 'node:net';
import { ControlMessageDecoder, encodeControlMessage, type ListedForward } from '../../protocol/index.ts';
import type { Transport } from '../../transport/transport.ts';
import { pollUntil } from '../../../test/helpers/poll.ts';
import { announceForwards } from './forward-announce.ts';

interface Announced {
  readonly request: { forwards?: unknown[] };
  closed: boolean;
}

/** A stand-in capsule answering every request with `reply`; it notes each request and when its connection closes. */
async function standIn(t: TestContext, reply: object): Promise<{ seen: Announced[]; connect: () => Promise<Transport> }> {
  const seen: Announced[] = [];
  const server = createServer((sock) => {
    sock.on('error', () => {});
    const reader = new ControlMessageDecoder();
    sock.on('data', (chunk: Buffer) => {
      const [request] = reader.push(chunk);
      if (request === undefined) return;
      const entry: Announced = { request: request as Announced['request'], closed: false };
      seen.push(entry);
      sock.once('close', () => (entry.closed = true));
      sock.write(encodeControlMessage(reply));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => server.close());
  const port = (server.address() as AddressInfo).port;
  return {
    seen,
    connect: async () => {
      const sock = connect({ host: '127.0.0.1', port });
      await new Promise<void>((resolve, reject) => sock.once('connect', resolve).once('error', reject));
      return { kind: 'socket', readable: sock, writable: sock, description: 'stand-in', close: () => sock.destroy(), failureDetail: async () => null };
    },
  };
}

const forwards = (n: number): ListedForward[] => Array.from({ length: n }, (_, i) => ({ hostPort: 30000 + i, containerPort: 80 + i, kind: 'forward' }));

test('announceForwards: listed once the capsule answered; more than 16 go in several announcements; dispose closes every one', async (t) => {
  const c = await standIn(t, { ok: true, listed: 1 });
  const a = announceForwards(c.connect, forwards(20));
  assert.deepEqual(await a.settled, { listed: true });
  assert.deepEqual(c.seen.map((s) => s.request.forwards?.length).sort(), [16, 4]);
  assert.ok(c.seen.every((s) => !s.closed));
  a.dispose();
  await pollUntil('both announcing connections to close', () => c.seen.every((s) => s.closed));
});

test('announceForwards: a capsule without the method (E_UNKNOWN_METHOD) is "unsupported"; any other refusal is a failure; both close', async (t) => {
  const old = await standIn(t, { ok: false, code: 'E_UNKNOWN_METHOD', message: 'unknown control method' });
  const a = announceForwards(old.connect, forwards(1));
  const outcome = await a.settled;
  assert.equal(outcome.listed, false);
  assert.equal(!outcome.listed && outcome.unsupported, true);
  await pollUntil('the connection to close', () => old.seen[0]?.closed === true);

  const full = await standIn(t, { ok: false, code: 'E_FORWARD_LIMIT', message: 'at most 64' });
  const b = announceForwards(full.connect, forwards(1));
  const refused = await b.settled;
  assert.deepEqual(!refused.listed && [refused.unsupported, refused.error.code], [false, 'E_FORWARD_LIMIT']);
  await pollUntil('the connection to close', () => full.seen[0]?.closed === true);
});
