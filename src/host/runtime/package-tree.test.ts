/**
 * capsulePackageFiles: the one list of the package's own files that the runtime (runtime.ts) and the --ssh
 * copy (remote-capsule.ts) both take, on a package laid out in a temporary directory.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { JackinError } from '../../errors.ts';
import { capsulePackageFiles } from './package-tree.ts';

function fakePackage(t: { after: (f: () => void) => void }, { policies = true, capsuleBundle = true } = {}): string {
  const root = mkdtempSync(join(tmpdir(), 'jackin-pkg-files-'));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  const put = (rel: string): void => {
    mkdirSync(join(root, rel, '..'), { recursive: true });
    writeFileSync(join(root, rel), rel);
  };
  for (const rel of [
    'package.json',
    'bin/jackin.js',
    'bin/jackin-capsule.js',
    'container-bin/xdg-open',
    'dist/jackin.bundle.cjs',
    'dist/jackin.bundle.cache',
    'dist/capsule/serve.js',
    'src/x.ts',
  ])
    put(rel);
  if (capsuleBundle) for (const rel of ['dist/jackin-capsule.bundle.cjs', 'dist/jackin-capsule.bundle.cache']) put(rel);
  if (policies) put('policies/default.json');
  symlinkSync('jackin.js', join(root, 'bin', 'link-to-jackin'));
  return root;
}

test('capsulePackageFiles: package.json, bin/, container-bin/, policies/ and the bundles; code caches only when asked; no symlink, no tsc output, no source', (t) => {
  const root = fakePackage(t);
  const rels = (codeCaches: boolean): string[] => capsulePackageFiles(root, { codeCaches }).map((f) => f.rel);
  const without = [
    'package.json',
    'bin/jackin-capsule.js',
    'bin/jackin.js',
    'container-bin/xdg-open',
    'policies/default.json',
    'dist/jackin-capsule.bundle.cjs',
    'dist/jackin.bundle.cjs',
  ];
  assert.deepEqual(rels(false), without);
  assert.deepEqual(rels(true), [
    ...without.slice(0, 5),
    'dist/jackin-capsule.bundle.cache',
    'dist/jackin-capsule.bundle.cjs',
    'dist/jackin.bundle.cache',
    'dist/jackin.bundle.cjs',
  ]);
  for (const f of capsulePackageFiles(root, { codeCaches: true })) assert.equal(f.abs, join(root, f.rel));
});

test('capsulePackageFiles: a package without policies/ is whole; one without the capsule bundle is refused with the fix', (t) => {
  assert.ok(!capsulePackageFiles(fakePackage(t, { policies: false }), { codeCaches: false }).some((f) => f.rel.startsWith('policies/')));
  const unbuilt = fakePackage(t, { capsuleBundle: false });
  assert.throws(
    () => capsulePackageFiles(unbuilt, { codeCaches: true }),
    (e: unknown) => e instanceof JackinError && e.code === 'E_RUNTIME_PACKAGE' && /npm run build/.test(e.message),
  );
});
