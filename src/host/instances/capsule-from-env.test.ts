import { test } from 'node:test';
import assert from 'node:assert/strict';
import { hasCode } from '../../errors.ts';
import { capsuleFromEnv } from './capsule-choice.ts';

test('capsuleFromEnv: JACKIN_CAPSULE names the default capsule (any case); unset or empty is none; anything else is refused, naming the choices', () => {
  assert.equal(capsuleFromEnv({}), undefined);
  assert.equal(capsuleFromEnv({ JACKIN_CAPSULE: '' }), undefined);
  assert.equal(capsuleFromEnv({ JACKIN_CAPSULE: 'runtime' }), 'runtime');
  assert.equal(capsuleFromEnv({ JACKIN_CAPSULE: 'Host' }), 'host');
  assert.equal(capsuleFromEnv({ JACKIN_CAPSULE: 'image' }), 'image');
  assert.throws(
    () => capsuleFromEnv({ JACKIN_CAPSULE: 'docker\x1b[31m' }),
    (e: unknown) => hasCode(e, 'E_USAGE') && /JACKIN_CAPSULE="docker\\u001b\[31m" is not one of host, runtime, image/.test((e as Error).message),
  );
});
