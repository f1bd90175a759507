import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeFeatureSession as FakeSession } from '../../../test/helpers/fake-feature-session.ts';
import type { ServerFrame } from '../../protocol/index.ts';
import { requestResolve } from './resolver.ts';

test('host resolver: sends Resolve and answers with the Resolved carrying its id only', async () => {
  const s = new FakeSession({ resolve: 1 });
  const p = requestResolve(s, 'link', { row: 3, col: 7 });
  const req = s.sent[0];
  assert.ok(req?.type === 'Resolve');
  assert.deepEqual(req.at, { row: 3, col: 7 });
  assert.equal(req.target, 'link');
  s.emitFrame({ type: 'Resolved', requestId: req.requestId + 1n, kind: 'text', text: 'https://wrong.example' } satisfies ServerFrame);
  s.emitFrame({ type: 'Resolved', requestId: req.requestId, kind: 'osc8', text: 'https://right.example' } satisfies ServerFrame);
  assert.deepEqual(await p, { kind: 'osc8', text: 'https://right.example' });
  assert.equal(s.frameEmitter.hasListeners, false, 'the listener is removed');
  const q = requestResolve(s, 'offered-link', null);
  const req2 = s.sent[1];
  assert.ok(req2?.type === 'Resolve' && req2.requestId !== req.requestId && req2.at === null);
  s.emitFrame({ type: 'Resolved', requestId: req2.requestId, kind: 'none', text: '' } satisfies ServerFrame);
  assert.deepEqual(await q, { kind: 'none', text: '' });
});

test('host resolver: times out with E_RESOLVE_TIMEOUT, and refuses a capsule without the extension', async () => {
  const s = new FakeSession({ resolve: 1 });
  await assert.rejects(requestResolve(s, 'path', { row: 0, col: 0 }, 20), { code: 'E_RESOLVE_TIMEOUT' });
  assert.equal(s.frameEmitter.hasListeners, false);
  await assert.rejects(requestResolve(new FakeSession(null), 'link', null), { code: 'E_RESOLVE_UNSUPPORTED' });
});
