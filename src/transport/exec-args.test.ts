import { test } from 'node:test';
import assert from 'node:assert/strict';
import { hasCode, type ErrorCode } from '../errors.ts';
import { formatArgv, relayArgv } from './exec-args.ts';

test('relayArgv: docker and podman run exactly `<engine> exec -i <target> jackin-capsule attach-proxy`', () => {
  assert.deepEqual(relayArgv({ kind: 'docker', target: 'agent' }), ['docker', 'exec', '-i', 'agent', 'jackin-capsule', 'attach-proxy']);
  assert.deepEqual(relayArgv({ kind: 'podman', target: 'a b' }), ['podman', 'exec', '-i', 'a b', 'jackin-capsule', 'attach-proxy']);
});

test('relayArgv: kubectl puts namespace and container before -- and the relay after it', () => {
  assert.deepEqual(relayArgv({ kind: 'kubectl', pod: 'p0' }), ['kubectl', 'exec', '-i', 'p0', '--', 'jackin-capsule', 'attach-proxy']);
  assert.deepEqual(relayArgv({ kind: 'kubectl', pod: 'p0', namespace: 'dev' }), [
    'kubectl',
    'exec',
    '-i',
    'p0',
    '-n',
    'dev',
    '--',
    'jackin-capsule',
    'attach-proxy',
  ]);
  assert.deepEqual(relayArgv({ kind: 'kubectl', pod: 'p0', container: 'agent' }), [
    'kubectl',
    'exec',
    '-i',
    'p0',
    '-c',
    'agent',
    '--',
    'jackin-capsule',
    'attach-proxy',
  ]);
  assert.deepEqual(relayArgv({ kind: 'kubectl', pod: 'p0', namespace: 'dev', container: 'agent' }), [
    'kubectl',
    'exec',
    '-i',
    'p0',
    '-n',
    'dev',
    '-c',
    'agent',
    '--',
    'jackin-capsule',
    'attach-proxy',
  ]);
});

test('relayArgv: a custom command runs verbatim through sh -c', () => {
  const cmd = `ssh box 'docker exec -i agent jackin-capsule attach-proxy'`;
  assert.deepEqual(relayArgv({ kind: 'custom', command: cmd }), ['sh', '-c', cmd]);
});

test('relayArgv: names that an engine would read as options, empty names and empty commands are refused', () => {
  assert.ok(throwsCode(() => relayArgv({ kind: 'docker', target: '--privileged' }), 'E_BAD_TARGET'));
  assert.ok(throwsCode(() => relayArgv({ kind: 'docker', target: '' }), 'E_BAD_TARGET'));
  assert.ok(throwsCode(() => relayArgv({ kind: 'kubectl', pod: 'p', namespace: '-x' }), 'E_BAD_TARGET'));
  assert.ok(throwsCode(() => relayArgv({ kind: 'kubectl', pod: 'p', container: 'a\nb' }), 'E_BAD_TARGET'));
  assert.ok(throwsCode(() => relayArgv({ kind: 'custom', command: '  ' }), 'E_BAD_TARGET'));
});

test('formatArgv quotes only what a shell would split', () => {
  assert.equal(formatArgv(['docker', 'exec', '-i', 'a b', "it's"]), `docker exec -i 'a b' 'it'\\''s'`);
});

function throwsCode(f: () => unknown, code: ErrorCode): boolean {
  try {
    f();
    return false;
  } catch (e) {
    return hasCode(e, code);
  }
}

test("relayHint: the engines' usual exec failures, said plainly with the fix", async () => {
  const { relayHint } = await import('./exec-relay.ts');
  assert.match(relayHint('Error: No such container: agent')!, /no such container/);
  assert.match(relayHint('Error: no container with name or ID "agent" found: no such container')!, /no such container/);
  assert.match(
    relayHint('Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?')!,
    /docker engine is not reachable/,
  );
  assert.match(relayHint('Error: can only create exec sessions on running containers: container state improper')!, /not running/);
  assert.match(
    relayHint(
      'Error: crun: executable file `jackin-capsule` not found in $PATH: No such file or directory: OCI runtime attempted to invoke a command that was not found',
    )!,
    /jackin-capsule is not on the container's PATH/,
  );
  assert.equal(relayHint('something else'), null);
});
