import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect, createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeFeatureSession } from '../../../test/helpers/fake-feature-session.ts';
import { freePort } from '../../../test/helpers/free-port.ts';
import { liveForwards } from './forward-registry.ts';
import { installPortOffersFeature, portOffersWanted } from './port-offers-feature.ts';

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

test('portOffersWanted: not where the loopback is shared, not with JACKIN_PORT_OFFERS=off', () => {
  assert.equal(portOffersWanted({}, false), true);
  assert.equal(portOffersWanted({}, true), false);
  assert.equal(portOffersWanted({ JACKIN_PORT_OFFERS: 'off' }, false), false);
});

test('port offers: a notice and an entry once per opened port; nothing bound before the entry is chosen; a closed port loses its entry', async (t) => {
  const s = new FakeFeatureSession({ ports: 1, forward: 1 });
  const f = installPortOffersFeature(s, { instance: 'agent', connect: never });
  t.after(() => f.dispose());
  const port = await freePort();
  s.frameEmitter.fire({ type: 'Ports', ports: [port] });
  s.frameEmitter.fire({ type: 'Ports', ports: [port] });
  assert.deepEqual(
    s.notices.map((n) => n.text),
    [`Port ${port} opened in the container: forward it from the palette (Forward port ${port})`],
  );
  assert.equal(s.actions.get(`forward-port-${port}`)?.title, `Forward port ${port}`);
  assert.deepEqual(f.offered, [port]);
  assert.equal(await probe(port), 'ECONNREFUSED', 'nothing is bound without the gesture');
  s.frameEmitter.fire({ type: 'Ports', ports: [] });
  assert.equal(s.actions.has(`forward-port-${port}`), false);
  // Opened again: offered again.
  s.frameEmitter.fire({ type: 'Ports', ports: [port] });
  assert.equal(s.notices.length, 2);
});

test('port offers: a capsule that did not agree on `ports`, or a session that cannot reach it, offers nothing', (t) => {
  for (const [features, connectFn] of [
    [{ forward: 1 }, never],
    [null, never],
    [{ ports: 1 }, undefined],
  ] as const) {
    const s = new FakeFeatureSession(features);
    const f = installPortOffersFeature(s, { instance: 'agent', ...(connectFn !== undefined ? { connect: connectFn } : {}) });
    t.after(() => f.dispose());
    s.frameEmitter.fire({ type: 'Ports', ports: [5173] });
    assert.deepEqual(s.notices, []);
    assert.equal(s.actions.size, 0);
  }
});

test('port offers: choosing the entry forwards the same host port when free, else a free one; recorded, logged, stopped from the palette', async (t) => {
  const home = mkdtempSync(join(tmpdir(), 'jackin-offers-'));
  t.after(() => rmSync(home, { recursive: true, force: true }));
  const s = new FakeFeatureSession({ ports: 1, forward: 1 });
  const f = installPortOffersFeature(s, { instance: 'agent', connect: never, home });
  t.after(() => f.dispose());
  const free = await freePort();
  const holder = createServer();
  await new Promise<void>((r) => holder.listen({ host: '127.0.0.1', port: 0 }, () => r()));
  t.after(() => holder.close());
  const taken = (holder.address() as AddressInfo).port;
  s.frameEmitter.fire({ type: 'Ports', ports: [free, taken].sort((a, b) => a - b) });

  await s.actions.get(`forward-port-${free}`)!.run();
  assert.equal(f.forwarded.get(free), free);
  assert.equal(s.notices.at(-1)!.text, `Forwarding http://localhost:${free}/ to port ${free} of agent`);
  assert.notEqual(await probe(free), 'ECONNREFUSED');

  await s.actions.get(`forward-port-${taken}`)!.run();
  const other = f.forwarded.get(taken)!;
  assert.ok(other !== undefined && other !== taken);
  assert.equal(s.notices.at(-1)!.text, `Forwarding http://localhost:${other}/ to port ${taken} of agent (port ${taken} is taken on this host)`);
  assert.deepEqual(
    (await liveForwards(home)).map((r) => [r.hostPort, r.containerPort, r.kind]).sort((a, b) => (a[1]! as number) - (b[1] as number)),
    [
      [free, free, 'offer'],
      [other, taken, 'offer'],
    ].sort((a, b) => (a[1] as number) - (b[1] as number)),
  );

  // A link to the forwarded container port opens through its host port; the prompt's note names both.
  const [step] = s.urlOpenSteps(`http://localhost:${taken}/app?x=1#top`);
  assert.equal(step?.opens, `http://localhost:${other}/app?x=1#top`);
  assert.match(step?.note ?? '', new RegExp(`container port ${taken} is forwarded from host port ${other}`));
  const [same] = s.urlOpenSteps(`http://127.0.0.1:${free}/`);
  assert.equal(same?.opens, `http://127.0.0.1:${free}/`, 'the same port: served as it is');
  assert.deepEqual(s.urlOpenSteps('http://localhost:1/'), [], 'a port not forwarded is left to the other hooks');
  assert.deepEqual(s.urlOpenSteps(`http://example.com:${taken}/`), []);

  await s.actions.get(`stop-forward-port-${taken}`)!.run();
  assert.equal(await probe(other), 'ECONNREFUSED');
  assert.equal(s.actions.get(`forward-port-${taken}`)?.title, `Forward port ${taken}`, 'still listening: offered again');
  assert.deepEqual(s.urlOpenSteps(`http://localhost:${taken}/`), []);
  await f.close();
  assert.equal(await probe(free), 'ECONNREFUSED');
  assert.deepEqual(await liveForwards(home), []);
  assert.deepEqual(
    s.log.map((l) => [l.action, l.result, l.detail?.startsWith('closed') === true]),
    [
      ['port-forward', 'ok', false],
      ['port-forward', 'ok', false],
      ['port-forward', 'ok', true],
      ['port-forward', 'ok', true],
    ],
  );
});

test('port offers: a capsule that opens many ports at once cannot flood the operator with notices; each still gets its entry', (t) => {
  const s = new FakeFeatureSession({ ports: 1, forward: 1 });
  const f = installPortOffersFeature(s, { instance: 'agent', connect: never });
  t.after(() => f.dispose());
  const ports = Array.from({ length: 20 }, (_, i) => 41000 + i);
  s.frameEmitter.fire({ type: 'Ports', ports });
  assert.equal(s.notices.length, 4);
  assert.deepEqual(f.offered, ports);
  for (const p of ports) assert.equal(s.actions.get(`forward-port-${p}`)?.title, `Forward port ${p}`);
});
