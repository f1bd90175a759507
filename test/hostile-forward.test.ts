// Hostile capsule, forwards: a scripted capsule on a real Unix socket answers the host's forward requests
// the way a compromised container could, against the host's real listener and a real TCP client playing
// the browser. Whatever it sends, the host connects nowhere but to it, keeps its memory bounded, resets the
// browser's connection on a broken stream and goes on serving the next one.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect, createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { encodeControlMessage, encodeForwardFrame, ControlMessageDecoder } from '../src/protocol/index.ts';
import { ForwardListener, type ForwardEvent } from '../src/host/forward/forward-listener.ts';
import { FORWARD_QUEUE_BYTES } from '../src/transport/forward-pump.ts';
import { connectSocket, socketTransport } from '../src/transport/socket.ts';
import { freePort } from './helpers/free-port.ts';
import { pollUntil } from './helpers/poll.ts';

type Script = (sock: Socket, request: Record<string, unknown>) => void;

/** A capsule socket whose every control connection is answered by `script`. */
async function hostileCapsule(t: TestContext, script: Script): Promise<{ path: string; requests: Array<Record<string, unknown>> }> {
  const dir = mkdtempSync(join(tmpdir(), 'jackin-hostile-fwd-'));
  const path = join(dir, 'jackin.sock');
  const requests: Array<Record<string, unknown>> = [];
  const sockets = new Set<Socket>();
  const server = createServer({ allowHalfOpen: true }, (sock) => {
    sockets.add(sock);
    sock.on('error', () => {});
    sock.on('close', () => sockets.delete(sock));
    const d = new ControlMessageDecoder();
    let done = false;
    sock.on('data', (b: Buffer) => {
      if (done) return;
      const [m] = d.push(b);
      if (m === undefined) return;
      done = true;
      requests.push(m as Record<string, unknown>);
      script(sock, m as Record<string, unknown>);
    });
  });
  await new Promise<void>((r) => server.listen(path, () => r()));
  t.after(async () => {
    for (const s of sockets) s.destroy();
    await new Promise<void>((r) => server.close(() => r()));
    rmSync(dir, { recursive: true, force: true });
  });
  return { path, requests };
}

async function listenerFor(t: TestContext, path: string, containerPort: number): Promise<{ l: ForwardListener; events: ForwardEvent[] }> {
  const events: ForwardEvent[] = [];
  const l = await ForwardListener.listen({ hostPort: await freePort(), containerPort, connect: async () => socketTransport(await connectSocket(path), path), onEvent: (e) => events.push(e) });
  t.after(() => l.close());
  return { l, events };
}

/** Connects as the browser, writes `send`, and resolves with how the connection ended and what came back. */
function browser(port: number, send = 'GET / HTTP/1.1\r\n\r\n'): Promise<{ how: string; got: number }> {
  return new Promise((resolve) => {
    let got = 0;
    const s = connect({ host: '127.0.0.1', port }, () => s.write(send));
    s.on('data', (b: Buffer) => (got += b.length));
    s.on('error', (e: NodeJS.ErrnoException) => resolve({ how: e.code ?? 'error', got }));
    s.on('close', () => resolve({ how: 'closed', got }));
  });
}

const reply = (v: unknown): Buffer => encodeControlMessage(v);

test('hostile capsule: a reply naming another address than the container loopback is a protocol error, and the browser connection is reset', async (t) => {
  const cap = await hostileCapsule(t, (sock) => sock.write(reply({ ok: true, address: '203.0.113.7' })));
  const { l, events } = await listenerFor(t, cap.path, 8080);
  const r = await browser(l.port);
  assert.notEqual(r.how, 'end');
  assert.equal(r.got, 0);
  await pollUntil('the failure event', () => events.find((e) => e.kind === 'failed'));
  const failed = events.find((e) => e.kind === 'failed');
  assert.ok(failed?.kind === 'failed' && failed.error.code === 'E_FORWARD_PROTOCOL', JSON.stringify(failed));
  // The host asked for a port, and only a port; it chose it, not the capsule.
  assert.deepEqual(cap.requests, [{ method: 'forward', port: 8080 }]);
});

test('hostile capsule: garbage, a frame of the wrong direction, an attach frame, a bad reset reason: each resets the browser connection, the next connection still works', async (t) => {
  const bad = [
    Buffer.from('not a frame at all'),
    encodeForwardFrame('client', { type: 'ForwardData', bytes: Buffer.from('x') }),
    Buffer.from('8200000001ff', 'hex'),
    Buffer.from('b20000000109', 'hex'),
    Buffer.from('b0ffffffff', 'hex'),
  ];
  let i = 0;
  const cap = await hostileCapsule(t, (sock) => {
    const n = i++;
    sock.write(reply({ ok: true, address: '127.0.0.1' }));
    if (n < bad.length) sock.write(bad[n]!);
    else sock.end(Buffer.concat([encodeForwardFrame('server', { type: 'ForwardData', bytes: Buffer.from('HTTP/1.1 204 No Content\r\n\r\n') }), encodeForwardFrame('server', { type: 'ForwardEnd' })]));
  });
  const { l, events } = await listenerFor(t, cap.path, 3000);
  for (let n = 0; n < bad.length; n++) {
    const r = await browser(l.port);
    assert.ok(r.how === 'ECONNRESET' || r.how === 'closed', `${n}: ${r.how}`);
    assert.equal(r.got, 0, `${n}: nothing of a broken stream reaches the browser`);
  }
  await pollUntil('every broken stream reported', () => events.filter((e) => e.kind === 'closed' && !e.outcome.ok).length === bad.length, { last: () => events });
  const good = await browser(l.port);
  assert.equal(good.got, 'HTTP/1.1 204 No Content\r\n\r\n'.length);
});

test('hostile capsule: a flood to a browser that does not read is not buffered by the host (the capsule connection is paused)', async (t) => {
  let capsuleSide: Socket | undefined;
  const chunk = encodeForwardFrame('server', { type: 'ForwardData', bytes: Buffer.alloc(256 * 1024, 0x41) });
  let written = 0;
  const cap = await hostileCapsule(t, (sock) => {
    capsuleSide = sock;
    sock.write(reply({ ok: true, address: '::1' }));
    // Writes as long as the host takes bytes.
    const pump = (): void => {
      let more = true;
      while (more && written < 512 * 1024 * 1024) {
        more = sock.write(chunk);
        written += chunk.length;
      }
      if (written < 512 * 1024 * 1024) sock.once('drain', pump);
    };
    pump();
  });
  const { l } = await listenerFor(t, cap.path, 9000);
  // A browser that connects and never reads.
  const s = connect({ host: '127.0.0.1', port: l.port });
  s.on('error', () => {});
  s.pause();
  t.after(() => s.destroy());
  await pollUntil('the capsule to be connected', () => capsuleSide !== undefined);
  // Once the kernel buffers are full, the capsule can no longer write: the host stopped reading.
  let last = -1;
  await pollUntil('the flood to stall', async () => {
    const now = written;
    const stalled = now === last && now > 0;
    last = now;
    await new Promise((r) => setTimeout(r, 200));
    return stalled;
  }, { timeoutMs: 30_000 });
  // What got through is the socket buffers plus the host's bound, far from the 512 MiB on offer.
  assert.ok(written < 64 * 1024 * 1024 + 8 * FORWARD_QUEUE_BYTES, `${written} bytes were taken`);
});
