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

test('removeContainer: a removal already in progress (Docker) is waited for; another failure while the container exists is not hidden', async (t) => {
  const { mkdtempSync, rmSync, writeFileSync, existsSync, unlinkSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const { removeContainer } = await import('./container-engine.ts');
  const bin = mkdtempSync(join(tmpdir(), 'jackin-rm-'));
  t.after(() => rmSync(bin, { recursive: true, force: true }));
  const exists = join(bin, 'exists');
  // A stand-in docker: `rm` fails as Docker does during another removal; `inspect` answers while `exists` is there.
  writeFileSync(
    join(bin, 'docker'),
    `#!/bin/sh\ncase "$1" in\n  rm) echo "Error response from daemon: removal of container $3 is already in progress" >&2; exit 1 ;;\n  inspect) [ -e '${exists}' ] && { echo running; exit 0; }; echo "Error: No such container: x" >&2; exit 1 ;;\nesac\n`,
    { mode: 0o755 },
  );
  const env = { PATH: `${bin}:/usr/bin:/bin` };
  writeFileSync(exists, '');
  setTimeout(() => unlinkSync(exists), 300);
  await removeContainer('docker', 'agent', env);
  assert.equal(existsSync(exists), false, 'resolved once the other removal was done');
  // rm fails for another reason and the container is still there: the error stands.
  writeFileSync(
    join(bin, 'docker'),
    `#!/bin/sh\ncase "$1" in\n  rm) echo "Error response from daemon: permission denied" >&2; exit 1 ;;\n  inspect) echo running ;;\nesac\n`,
    { mode: 0o755 },
  );
  await assert.rejects(removeContainer('docker', 'agent', env), (e) => hasCode(e, 'E_ENGINE_COMMAND') && /permission denied/.test((e as Error).message));
});

test("engineCommand: a failure carries the engine's reason from stderr, not its usage line, made inert", async (t) => {
  const { mkdtempSync, rmSync, writeFileSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const { engineCommand } = await import('./container-engine.ts');
  const bin = mkdtempSync(join(tmpdir(), 'jackin-reason-'));
  t.after(() => rmSync(bin, { recursive: true, force: true }));
  // A stand-in docker that fails as `docker run` does for an image it cannot pull.
  writeFileSync(
    join(bin, 'docker'),
    `#!/bin/sh\nprintf '%s\\n' "Unable to find image 'nope:1' locally" 'docker: Error response from daemon: pull access denied \x1b[31mfor nope' '' "Run 'docker run --help' for more information" >&2\nexit 125\n`,
    { mode: 0o755 },
  );
  await assert.rejects(engineCommand('docker', ['run', 'nope:1'], undefined, { env: { PATH: `${bin}:/usr/bin:/bin` } }), (e: unknown) => {
    assert.ok(hasCode(e, 'E_ENGINE_COMMAND'));
    assert.equal(
      (e as Error).message,
      "docker run failed: Unable to find image 'nope:1' locally | docker: Error response from daemon: pull access denied \\x1b[31mfor nope",
    );
    return true;
  });
});
