import { test } from 'node:test';
import assert from 'node:assert/strict';
import { hasCode } from '../errors.ts';
import { remoteImageArgs } from './run-command.ts';

test('remoteImageArgs: the container options go to the remote jackin as given, detached, variables by name only', () => {
  assert.deepEqual(
    remoteImageArgs(['claude', '--resume'], {
      image: 'node:24-bookworm-slim',
      name: 'agent',
      engine: 'podman',
      env: ['ANTHROPIC_API_KEY', 'HOME'],
      volume: ['/srv/home:/home/agent', '/srv/bin:/opt/agents:ro'],
      workspace: '/srv/project',
      network: 'none',
      engineArg: ['--cap-add=SYS_PTRACE'],
      capsule: 'runtime',
      verbose: true,
    }),
    [
      'run',
      '--image',
      'node:24-bookworm-slim',
      '-d',
      '--env',
      'ANTHROPIC_API_KEY',
      '--env',
      'HOME',
      '--name',
      'agent',
      '--engine',
      'podman',
      '--capsule',
      'runtime',
      '--workspace',
      '/srv/project',
      '--volume=/srv/home:/home/agent',
      '--volume=/srv/bin:/opt/agents:ro',
      '--network',
      'none',
      '--engine-arg=--cap-add=SYS_PTRACE',
      '--verbose',
      '--',
      'claude',
      '--resume',
    ],
  );
  assert.deepEqual(remoteImageArgs([], { image: 'alpine' }), ['run', '--image', 'alpine', '-d', '--']);
});

test('remoteImageArgs: a value typed here is refused (it would be on the remote command line), naming the variable, never the value', () => {
  assert.throws(
    () => remoteImageArgs([], { image: 'alpine', env: ['OPENAI_API_KEY=sk-secret'] }),
    (e: unknown) => hasCode(e, 'E_USAGE') && /OPENAI_API_KEY/.test((e as Error).message) && !/sk-secret/.test((e as Error).message),
  );
  assert.throws(
    () => remoteImageArgs([], { image: 'alpine', envFile: ['.env'] }),
    (e: unknown) => hasCode(e, 'E_USAGE'),
  );
});
