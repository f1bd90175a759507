import { test } from 'node:test';
import assert from 'node:assert/strict';
import { hasCode } from '../errors.ts';
import { DEFAULT_STAGE_MAX_BYTES, stageMaxBytes } from './stage-limits.ts';

test('JACKIN_STAGE_MAX_BYTES: default 1 GiB; bytes or a size; anything else is E_BAD_STAGE_MAX_BYTES', () => {
  assert.equal(DEFAULT_STAGE_MAX_BYTES, 1024 ** 3);
  assert.equal(stageMaxBytes({}), DEFAULT_STAGE_MAX_BYTES);
  assert.equal(stageMaxBytes({ JACKIN_STAGE_MAX_BYTES: '' }), DEFAULT_STAGE_MAX_BYTES);
  assert.equal(stageMaxBytes({ JACKIN_STAGE_MAX_BYTES: '4096' }), 4096);
  assert.equal(stageMaxBytes({ JACKIN_STAGE_MAX_BYTES: '256 MiB' }), 256 * 1024 * 1024);
  assert.equal(stageMaxBytes({ JACKIN_STAGE_MAX_BYTES: '256m' }), 256 * 1024 * 1024);
  for (const bad of ['0', '-1', 'lots', '1.5', '10 MB']) {
    assert.throws(
      () => stageMaxBytes({ JACKIN_STAGE_MAX_BYTES: bad }),
      (e) => hasCode(e, 'E_BAD_STAGE_MAX_BYTES'),
      bad,
    );
  }
});
