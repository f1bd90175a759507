import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { Agent, createServer as createHttpServer, get as httpGet } from 'node:http';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ControlMessageDecoder, encodeControlMessage } from '../../protocol/index.ts';
import { pumpForward } from '../../transport/forward-pump.ts';
import type { Transport } from '../../transport/transport.ts';
import { FakeFeatureSession } from '../../../test/helpers/fake-feature-session.ts';
import { freePort } from '../../../test/helpers/free-port.ts';
import { pollUntil } from '../../../test/helpers/poll.ts';
import { startRouterInProcess } from './callback-registration.ts';
import { NO_MATCH_TEXT } from './callback-router.ts';
import { installLoginForwardFeature } from './login-forward-feature.ts';

const link = (port: number): string => `https://idp.example/authorize?redirect_uri=${encodeURIComponent(`http://localhost:${port}/callback`)}`;

function probe(port: number): Promise<string> {
  return new Promise((resolve) => {
    const s = connect({ host: '127.0.0.1', port }, () => {
      s.destroy();
      resolve('open');
    });
    s.on('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? 'error'));
  });
}

const never = async (): Promise<never> => {
  throw new Error('no connection may be opened');
};

test('login forward: nothing for links without a loopback callback, nor with JACKIN_LOGIN_FORWARD=off', (t) => {
  const s = new FakeFeatureSession({ forward: 1 });
  t.after(() => off.dispose());
  const off = installLoginForwardFeature(s, { instance: 'agent', connect: never, env: { JACKIN_LOGIN_FORWARD: 'off' } });
  assert.deepEqual(s.urlOpenSteps(link(40001)), []);
  off.dispose();
  const on = installLoginForwardFeature(s, { instance: 'agent', connect: never, env: {} });
  t.after(() => on.dispose());
  assert.deepEqual(s.urlOpenSteps('https://example.com/?redirect_uri=https%3A%2F%2Fapp.example%2F'), []);
  assert.equal(s.urlOpenSteps(link(40001))[0]?.note, '…and forward localhost:40001 to agent');
});

test('login forward: an upstream capsule, or one without the extension, gets nothing new and the notice says why', async (t) => {
  for (const [features, why] of [
    [null, /an upstream capsule has no forwards/],
    [{ notice: 1 }, /this capsule has no forwards/],
  ] as const) {
    const s = new FakeFeatureSession(features);
    const f = installLoginForwardFeature(s, { instance: 'agent', connect: never, env: {} });
    t.after(() => f.dispose());
    const port = await freePort();
    const [step] = s.urlOpenSteps(link(port));
    assert.ok(step !== undefined);
    assert.equal(step.note, undefined, 'the prompt promises no forward');
    await step.run();
    assert.equal(await probe(port), 'ECONNREFUSED');
    assert.match(s.notices.at(-1)?.text ?? '', why);
    assert.deepEqual(
      s.log.map((l) => [l.action, l.result, l.detail]),
      [['login-forward', 'refused', 'E_FORWARD_UNSUPPORTED']],
    );
  }
});

test('login forward: only the step binds (after the gesture); it closes at its deadline and with the session', async (t) => {
  const s = new FakeFeatureSession({ forward: 1 });
  const f = installLoginForwardFeature(s, { instance: 'agent', connect: never, env: {}, maxMs: 300 });
  t.after(() => f.dispose());
  const port = await freePort();
  const [step] = s.urlOpenSteps(link(port));
  // Asked about a link (the prompt is drawn), nothing is bound yet.
  assert.equal(await probe(port), 'ECONNREFUSED');
  await step!.run();
  assert.notEqual(await probe(port), 'ECONNREFUSED', 'bound');
  assert.ok(
    s.notices.some((n) => n.text.startsWith(`Forwarding localhost:${port} to agent`)),
    JSON.stringify(s.notices),
  );
  // While it is open, another link to the same callback keeps it, and says so.
  assert.equal(s.urlOpenSteps(link(port))[0]?.note, `and keep forwarding localhost:${port} to agent`);
  await new Promise<void>((resolve) => {
    const check = (): void => void probe(port).then((r) => (r === 'ECONNREFUSED' ? resolve() : setTimeout(check, 50)));
    check();
  });
  await new Promise<void>((resolve) => {
    const check = (): void => void (s.notices.some((n) => n.text.startsWith(`Stopped forwarding localhost:${port}`)) ? resolve() : setTimeout(check, 20));
    check();
  });

  const port2 = await freePort();
  await s.urlOpenSteps(link(port2))[0]!.run();
  assert.notEqual(await probe(port2), 'ECONNREFUSED', 'bound');
  f.dispose();
  await new Promise<void>((resolve) => {
    const check = (): void => void probe(port2).then((r) => (r === 'ECONNREFUSED' ? resolve() : setTimeout(check, 20)));
    check();
  });
});

/**
 * A stand-in capsule on a TCP port: it answers a `forward` request by connecting to `target` (whatever port
 * was asked: locally, the host's port and the "container's" are the same loopback) and pumps the bytes, as
 * the capsule's forward method does.
 */
async function standInCapsule(t: TestContext, target: number): Promise<() => Promise<Transport>> {
  const server = createServer((sock) => {
    sock.on('error', () => {});
    const reader = new ControlMessageDecoder();
    const onData = (chunk: Buffer): void => {
      const got = reader.push(chunk);
      if (got.length === 0) return;
      sock.off('data', onData);
      sock.pause();
      const tcp = connect({ host: '127.0.0.1', port: target, allowHalfOpen: true }, () => {
        sock.write(encodeControlMessage({ ok: true, address: '127.0.0.1' }));
        void pumpForward({ side: 'server', local: tcp, peer: { readable: sock, writable: sock } });
        sock.resume();
      });
      tcp.on('error', () => sock.destroy());
    };
    sock.on('data', onData);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => server.close());
  const port = (server.address() as AddressInfo).port;
  return async () => {
    const sock = connect({ host: '127.0.0.1', port, allowHalfOpen: true });
    await new Promise<void>((resolve, reject) => sock.once('connect', resolve).once('error', reject));
    return {
      kind: 'socket',
      readable: sock,
      writable: sock,
      description: `stand-in capsule ${port}`,
      close: () => sock.destroy(),
      failureDetail: async () => null,
    };
  };
}

test('login forward: a callback connection kept alive after its exchange closes once idle; none closes before the first exchange', {
  timeout: 20_000,
}, async (t) => {
  // The login helper answers the callback and keeps the connection alive, as a browser's would stay.
  const login = createHttpServer((req, res) => res.end(`signed in: ${req.url}`));
  login.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => login.listen(0, '127.0.0.1', resolve));
  t.after(() => login.closeAllConnections());
  t.after(() => login.close());
  const connectCapsule = await standInCapsule(t, (login.address() as AddressInfo).port);
  const s = new FakeFeatureSession({ forward: 1 });
  const f = installLoginForwardFeature(s, { instance: 'agent', connect: connectCapsule, env: {}, idleMs: 300, maxMs: 60_000 });
  t.after(() => f.dispose());
  const port = await freePort();
  await s.urlOpenSteps(link(port))[0]!.run();
  // Silence before any exchange (the operator is still signing in) closes nothing.
  await new Promise((resolve) => setTimeout(resolve, 900));
  assert.notEqual(await probe(port), 'ECONNREFUSED', 'still bound before the exchange');
  const agent = new Agent({ keepAlive: true });
  t.after(() => agent.destroy());
  const socketClosed = new Promise<void>((resolve) => agent.once('free', (sock: Socket) => sock.once('close', () => resolve())));
  const body = await new Promise<string>((resolve, reject) => {
    httpGet({ host: '127.0.0.1', port, path: '/callback?code=c0de', agent }, (res) => {
      let text = '';
      res.on('data', (b: Buffer) => (text += b.toString()));
      res.on('end', () => resolve(text));
    }).on('error', reject);
  });
  assert.equal(body, 'signed in: /callback?code=c0de');
  // The browser keeps the connection open; the forward ends it once nothing moved for idleMs.
  await socketClosed;
  await new Promise<void>((resolve) => {
    const check = (): void =>
      void (s.notices.some((n) => n.text === `Stopped forwarding localhost:${port} to agent: its exchange is done`) ? resolve() : setTimeout(check, 20));
    check();
  });
  assert.equal(await probe(port), 'ECONNREFUSED');
  assert.deepEqual(s.log.map((l) => [l.action, l.result, l.detail]).at(-1), ['login-forward', 'ok', 'closed: its exchange is done']);
});

test("login forward: with the capsule on the host's own loopback (the embedded default) nothing is asked, bound, said or logged", async (t) => {
  const s = new FakeFeatureSession({ forward: 1 });
  const f = installLoginForwardFeature(s, { instance: 'agent', connect: never, env: {}, sharedLoopback: true });
  t.after(() => f.dispose());
  const port = await freePort();
  assert.deepEqual(s.urlOpenSteps(link(port)), []);
  assert.equal(await probe(port), 'ECONNREFUSED');
  assert.deepEqual([s.notices, s.log], [[], []]);
});

test('login forward: close() returns once each open forward is closed, logged closed and its record removed', async (t) => {
  const home = mkdtempSync(join(tmpdir(), 'jackin-login-fwd-'));
  t.after(() => rmSync(home, { recursive: true, force: true }));
  const s = new FakeFeatureSession({ forward: 1 });
  const f = installLoginForwardFeature(s, { instance: 'agent', connect: never, env: {}, home, startRouter: startRouterInProcess });
  t.after(() => f.dispose());
  const port = await freePort();
  await s.urlOpenSteps(link(port))[0]!.run();
  assert.equal(readdirSync(join(home, 'forwards')).length, 1);
  await f.close();
  assert.equal(await probe(port), 'ECONNREFUSED');
  assert.deepEqual(readdirSync(join(home, 'forwards')), []);
  assert.deepEqual(s.log.map((l) => [l.action, l.result, l.detail]).at(-1), ['login-forward', 'ok', 'closed: the session ended']);
  // After the end, a link is opened with no forward.
  await s.urlOpenSteps(link(port))[0]?.run();
  assert.equal(await probe(port), 'ECONNREFUSED');
});

test("login forward: a capsule that keeps a forward list is told the forward's port while it is open, and no more once it closed", async (t) => {
  // A stand-in capsule that answers announce-forwards and notes when the announcing connection closes.
  const announced: Array<{ request: unknown; closed: boolean }> = [];
  const server = createServer((sock) => {
    sock.on('error', () => {});
    const reader = new ControlMessageDecoder();
    sock.on('data', (chunk: Buffer) => {
      const [request] = reader.push(chunk);
      if (request === undefined) return;
      const entry = { request, closed: false };
      announced.push(entry);
      sock.once('close', () => (entry.closed = true));
      sock.write(encodeControlMessage({ ok: true, listed: 1 }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => server.close());
  const capsulePort = (server.address() as AddressInfo).port;
  const connectCapsule = async (): Promise<Transport> => {
    const sock = connect({ host: '127.0.0.1', port: capsulePort });
    await new Promise<void>((resolve, reject) => sock.once('connect', resolve).once('error', reject));
    return { kind: 'socket', readable: sock, writable: sock, description: 'stand-in', close: () => sock.destroy(), failureDetail: async () => null };
  };
  const s = new FakeFeatureSession({ forward: 1, 'forward-list': 1 });
  const f = installLoginForwardFeature(s, { instance: 'agent', connect: connectCapsule, env: {} });
  t.after(() => f.dispose());
  const port = await freePort();
  await s.urlOpenSteps(link(port))[0]!.run();
  await pollUntil('the announcement', () => announced.length === 1);
  assert.deepEqual(announced[0]!.request, { method: 'announce-forwards', forwards: [{ hostPort: port, containerPort: port, kind: 'login' }] });
  assert.equal(announced[0]!.closed, false);
  await f.close();
  await pollUntil('the announcing connection to close', () => announced[0]!.closed);
});

/** An HTTP GET of the host's loopback port: status and body. */
function fetchText(port: number, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    httpGet({ host: '127.0.0.1', port, path, agent: false }, (res) => {
      let body = '';
      res.on('data', (b: Buffer) => (body += b.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    }).on('error', reject);
  });
}

test('login forward: two sessions on one callback port each get the callback of their own link, by its state, in either order', {
  timeout: 30_000,
}, async (t) => {
  const home = mkdtempSync(join(tmpdir(), 'jackin-login-route-'));
  t.after(() => rmSync(home, { recursive: true, force: true }));
  const port = await freePort();
  const sessions = [];
  for (const name of ['one', 'two']) {
    // Each "container" has its own login helper: the answer says which one the callback reached.
    const login = createHttpServer((req, res) => res.end(`${name} got ${req.url}`));
    await new Promise<void>((resolve) => login.listen(0, '127.0.0.1', resolve));
    t.after(() => login.close());
    const s = new FakeFeatureSession({ forward: 1 });
    const f = installLoginForwardFeature(s, {
      instance: name,
      connect: await standInCapsule(t, (login.address() as AddressInfo).port),
      env: {},
      home,
      idleMs: 60_000,
      startRouter: startRouterInProcess,
    });
    t.after(() => f.dispose());
    sessions.push({ s, f });
  }
  const stated = (state: string): string => `${link(port)}&state=${state}`;
  const [one, two] = sessions as [(typeof sessions)[0], (typeof sessions)[0]];
  assert.equal(one.s.urlOpenSteps(stated('s1'))[0]?.note, `…and forward localhost:${port} to one`);
  await one.s.urlOpenSteps(stated('s1'))[0]!.run();
  await two.s.urlOpenSteps(stated('s2'))[0]!.run();
  // Reversed: the second opened link's callback comes first.
  // Reversed: the second opened link's callback comes first; its exchange done, that session's forward ends.
  assert.deepEqual(await fetchText(port, '/callback?code=x&state=s2'), { status: 200, body: 'two got /callback?code=x&state=s2' });
  const unknown = await fetchText(port, '/callback?code=z&state=nope');
  assert.equal(unknown.status, 404);
  assert.ok(unknown.body.includes(NO_MATCH_TEXT), unknown.body);
  // The sessions hear of it (the notice comes on the router's connection, after the page).
  await new Promise<void>((resolve) => {
    const check = (): void => void (one.s.notices.some((n) => /matched no login link opened in jackin/.test(n.text)) ? resolve() : setTimeout(check, 20));
    check();
  });
  assert.deepEqual(await fetchText(port, '/callback?code=y&state=s1'), { status: 200, body: 'one got /callback?code=y&state=s1' });
  assert.ok(!JSON.stringify(sessions.map(({ s }) => [s.notices, s.log])).includes('s1'), 'no state is shown or logged');
  // The last session's forward ends: the router frees the port and stops.
  for (const { f } of sessions) await f.close();
  assert.equal(await probe(port), 'ECONNREFUSED');
  assert.deepEqual(readdirSync(join(home, 'callbacks')), []);
});

test('login forward: a link without a state says the last link opened for its port gets the callback, and it does', { timeout: 30_000 }, async (t) => {
  const home = mkdtempSync(join(tmpdir(), 'jackin-login-route-'));
  t.after(() => rmSync(home, { recursive: true, force: true }));
  const port = await freePort();
  const sessions = [];
  for (const name of ['one', 'two']) {
    const login = createHttpServer((req, res) => res.end(`${name} got ${req.url}`));
    await new Promise<void>((resolve) => login.listen(0, '127.0.0.1', resolve));
    t.after(() => login.close());
    const s = new FakeFeatureSession({ forward: 1 });
    const f = installLoginForwardFeature(s, {
      instance: name,
      connect: await standInCapsule(t, (login.address() as AddressInfo).port),
      env: {},
      home,
      idleMs: 60_000,
      startRouter: startRouterInProcess,
    });
    t.after(() => f.dispose());
    sessions.push({ s, f });
  }
  for (const { s } of sessions) {
    const [step] = s.urlOpenSteps(link(port));
    assert.match(step?.note ?? '', new RegExp(`no state in this link: the last link opened for port ${port} gets its callback`));
    await step!.run();
  }
  assert.deepEqual(await fetchText(port, '/callback?code=x'), { status: 200, body: 'two got /callback?code=x' });
  for (const { f } of sessions) await f.close();
  assert.equal(await probe(port), 'ECONNREFUSED');
});

test('login forward: with a router, a port another program has still says it is in use, and nothing is left registered', async (t) => {
  const home = mkdtempSync(join(tmpdir(), 'jackin-login-route-'));
  t.after(() => rmSync(home, { recursive: true, force: true }));
  const other = createServer();
  await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
  t.after(() => other.close());
  const port = (other.address() as AddressInfo).port;
  const s = new FakeFeatureSession({ forward: 1 });
  const f = installLoginForwardFeature(s, { instance: 'agent', connect: never, env: {}, home, startRouter: startRouterInProcess });
  t.after(() => f.dispose());
  await s.urlOpenSteps(`${link(port)}&state=q`)[0]!.run();
  assert.match(s.notices.at(-1)?.text ?? '', new RegExp(`Not forwarding localhost:${port} to agent: port ${port} is already in use on this host`));
  assert.deepEqual(readdirSync(join(home, 'callbacks')), []);
});
