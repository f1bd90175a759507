import { test } from 'node:test';
import assert from 'node:assert/strict';
import { hasCode } from '../errors.ts';
import { chooseEngine } from './container-engine.ts';

test('chooseEngine: the one installed, saying so; with both, docker unless its engine does not answer', async () => {
  const never = async () => assert.fail('docker need not be asked');
  assert.deepEqual(await chooseEngine(['podman'], never), { engine: 'podman', reason: 'podman is installed (docker is not)' });
  assert.deepEqual(await chooseEngine(['docker'], never), { engine: 'docker', reason: 'docker is installed (podman is not)' });
  assert.equal((await chooseEngine(['docker', 'podman'], async () => true)).engine, 'docker');
  const fallback = await chooseEngine(['docker', 'podman'], async () => false);
  assert.equal(fallback.engine, 'podman');
  assert.match(fallback.reason, /docker .* does not answer/);
  await assert.rejects(chooseEngine([], never), (e) => hasCode(e, 'E_ENGINE_MISSING'));
});
