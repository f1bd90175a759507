import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));

test('modules resolve package files only through src/package-root.ts (a bundle gives every module its own URL)', () => {
  const offenders = readdirSync(join(root, 'src'), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts') && f !== 'package-root.ts')
    .filter((f) => /new URL\([^)]*import\.meta\.url/.test(readFileSync(join(root, 'src', f), 'utf8')));
  assert.deepEqual(offenders, []);
  assert.match(readFileSync(join(root, 'src', 'package-root.ts'), 'utf8'), /new URL\('\.\.\/', import\.meta\.url\)/);
});

test('each bundle the binaries run loads only Node built-ins at start-up, and only the declared dependencies later', () => {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
  const deps = new Set(Object.keys(pkg.dependencies));
  const bundles = readdirSync(join(root, 'dist')).filter((f) => /\.bundle\.c?js$/.test(f)).sort();
  assert.deepEqual(bundles, ['attach-proxy.bundle.cjs', 'early-relay.bundle.cjs', 'jackin-capsule.bundle.js', 'jackin.bundle.js']);
  for (const bin of ['jackin.js', 'jackin-capsule.js']) {
    const imports = [...readFileSync(join(root, 'bin', bin), 'utf8').matchAll(/['"](\.\.\/dist\/[^'"]+)['"]/g)].map((m) => m[1]);
    assert.ok(imports.length === 2 && imports.every((p) => /\.bundle\.c?js$/.test(p!)), `bin/${bin} runs bundles: ${imports.join(', ')}`);
  }
  for (const file of bundles) {
    const code = readFileSync(join(root, 'dist', file), 'utf8');
    // A static import (or a top-level require in a CommonJS bundle) loads with the binary, whatever command
    // runs: only built-ins may. Packages load where the code needs them (a dynamic import, a require()).
    const eager = [...code.matchAll(/^(?:import\b[^;]*?\bfrom\s*|import\s*|(?:var|const|let)\s+\S+\s*=\s*require\s*\(\s*)["']([^"']+)["']/gm)].map((m) => m[1]!);
    assert.ok(eager.includes('node:child_process') || eager.includes('node:net'), `${file}: the scan finds its imports`);
    assert.deepEqual(eager.filter((s) => !s.startsWith('node:')), [], `${file} loads packages at start-up`);
    const lazy = [...code.matchAll(/(?:\bimport\s*\(\s*|\brequire\w*\s*\(\s*|\)\s*\(\s*)["']([^"']+)["']\s*\)/g)].map((m) => m[1]!);
    const stray = lazy.filter((s) => !s.startsWith('node:') && !deps.has(s.startsWith('@') ? s.split('/').slice(0, 2).join('/') : s.split('/')[0]!));
    assert.deepEqual(stray, [], `${file} loads modules that are not shipped`);
  }
});
