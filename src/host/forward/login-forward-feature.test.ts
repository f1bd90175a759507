import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { FakeFeatureSession } from '../../../test/helpers/fake-feature-session.ts';
import { freePort } from '../../../test/helpers/free-port.ts';
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
    assert.deepEqual(s.log.map((l) => [l.action, l.result, l.detail]), [['login-forward', 'refused', 'E_FORWARD_UNSUPPORTED']]);
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
  assert.ok(s.notices.some((n) => n.text.startsWith(`Forwarding localhost:${port} to agent`)), JSON.stringify(s.notices));
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
