import { test } from 'node:test';
import assert from 'node:assert/strict';
import { confirmCapsuleTargets, upstreamRequestsAllowed } from './host-request-policy.ts';

test('upstream requests are refused unless the flag or JACKIN_UPSTREAM_REQUESTS=allow (an on-word) says otherwise', () => {
  assert.equal(upstreamRequestsAllowed({}), false);
  assert.equal(upstreamRequestsAllowed({ JACKIN_UPSTREAM_REQUESTS: 'sure' }), false);
  assert.equal(upstreamRequestsAllowed({ JACKIN_UPSTREAM_REQUESTS: 'deny' }), false);
  assert.equal(upstreamRequestsAllowed({ JACKIN_UPSTREAM_REQUESTS: ' Allow ' }), true);
  assert.equal(upstreamRequestsAllowed({ JACKIN_UPSTREAM_REQUESTS: 'yes' }), true);
  assert.equal(upstreamRequestsAllowed({}, true), true);
});

test('capsule-resolved targets are confirmed unless JACKIN_CONFIRM=never (an off-word)', () => {
  assert.equal(confirmCapsuleTargets({}), true);
  assert.equal(confirmCapsuleTargets({ JACKIN_CONFIRM: 'sometimes' }), true);
  assert.equal(confirmCapsuleTargets({ JACKIN_CONFIRM: 'always' }), true);
  assert.equal(confirmCapsuleTargets({ JACKIN_CONFIRM: 'NEVER' }), false);
  assert.equal(confirmCapsuleTargets({ JACKIN_CONFIRM: 'no' }), false);
});
