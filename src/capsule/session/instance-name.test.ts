import { test } from 'node:test';
import assert from 'node:assert/strict';
import { defaultCapsuleName, inContainer, type NameProbe } from './instance-name.ts';

function probe(files: string[], host: string, env: NodeJS.ProcessEnv = {}): NameProbe {
  return { exists: (p) => files.includes(p), hostname: () => host, env };
}

test('a capsule outside any container is named after its program', () => {
  const p = probe([], 'devbox');
  assert.equal(inContainer(p), false);
  assert.equal(defaultCapsuleName('/usr/bin/bash', p), 'bash');
});

test('in a Docker or Podman container, or a Kubernetes pod, the capsule takes the host name', () => {
  assert.equal(defaultCapsuleName('/bin/bash', probe(['/.dockerenv'], '8dc9c260b4dd')), '8dc9c260b4dd');
  assert.equal(defaultCapsuleName('bash', probe(['/run/.containerenv'], 'agent')), 'agent');
  assert.equal(defaultCapsuleName('claude', probe([], 'agent-7d9f-xk2', { KUBERNETES_SERVICE_HOST: '10.0.0.1' })), 'agent-7d9f-xk2');
});

test('a host name that is not a usable instance name falls back to the program', () => {
  for (const bad of ['', '-x', 'a/b', 'x'.repeat(129), 'a b', 'é']) {
    assert.equal(defaultCapsuleName('/bin/zsh', probe(['/.dockerenv'], bad)), 'zsh', JSON.stringify(bad));
  }
});
