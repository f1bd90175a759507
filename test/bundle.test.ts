import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CAPSULE_NODE_FLAGS } from '../src/host/instances/container-run-argv.ts';

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
  const bundles = readdirSync(join(root, 'dist'))
    .filter((f) => /\.bundle\.c?js$/.test(f))
    .sort();
  assert.deepEqual(bundles, ['attach-proxy.bundle.cjs', 'code-cache.bundle.cjs', 'early-relay.bundle.cjs', 'jackin-capsule.bundle.cjs', 'jackin.bundle.cjs']);
  for (const bin of ['jackin.js', 'jackin-capsule.js']) {
    const imports = [...readFileSync(join(root, 'bin', bin), 'utf8').matchAll(/['"](\.\.\/dist\/[^'"]+)['"]/g)].map((m) => m[1]);
    assert.ok(imports.length === 2 && imports.every((p) => /\.bundle\.c?js$/.test(p!)), `bin/${bin} runs bundles: ${imports.join(', ')}`);
  }
  for (const file of bundles) {
    const code = readFileSync(join(root, 'dist', file), 'utf8');
    // A static import (or a top-level require in a CommonJS bundle) loads with the binary, whatever command
    // runs: only built-ins may. Packages load where the code needs them (a dynamic import, a require()).
    const eager = [...code.matchAll(/^(?:import\b[^;]*?\bfrom\s*|import\s*|(?:var|const|let)\s+\S+\s*=\s*require\s*\(\s*)["']([^"']+)["']/gm)].map(
      (m) => m[1]!,
    );
    assert.ok(
      eager.some((s) => s.startsWith('node:')),
      `${file}: the scan finds its imports`,
    );
    assert.deepEqual(
      eager.filter((s) => !s.startsWith('node:')),
      [],
      `${file} loads packages at start-up`,
    );
    // import('x'), require('x') / requireCjs('x'), and createRequire(url)('x') (in a CommonJS bundle:
    // `(0, import_node_module.createRequire)(url)('x')`).
    const lazy = [...code.matchAll(/(?:\bimport\s*\(\s*|\brequire\w*\s*\(\s*|\bcreateRequire\w*\)?\s*\([^()]*\)\s*\(\s*)["']([^"']+)["']\s*\)/g)].map(
      (m) => m[1]!,
    );
    if (file === 'jackin-capsule.bundle.cjs') assert.ok(lazy.includes('@lydell/node-pty'), `${file}: the scan finds createRequire(url)('@lydell/node-pty')`);
    // commander (both CLIs) and xterm (the capsule) are in the bundles, so they load with the code cache.
    if (file === 'jackin.bundle.cjs' || file === 'jackin-capsule.bundle.cjs') {
      assert.deepEqual(
        lazy.filter((s) => s === 'commander' || s.startsWith('@xterm/')),
        [],
        `${file} loads commander or xterm from node_modules`,
      );
      assert.match(code, /__name\(this, "CommanderError"\)/, `${file} holds commander`);
    }
    const stray = lazy.filter((s) => !s.startsWith('node:') && !deps.has(s.startsWith('@') ? s.split('/').slice(0, 2).join('/') : s.split('/')[0]!));
    assert.deepEqual(stray, [], `${file} loads modules that are not shipped`);
  }
});

test('both CLIs run their bundle with the code cache the build made, which this Node accepts; the bundles have no import()', () => {
  // Code compiled through vm.Script cannot import() (src/cli/code-cache.ts): an import() in a bundle would
  // fail only when that line runs (the ES-only `open` package comes through bin/esm-import.js).
  const dist = join(root, 'dist');
  for (const [name, bin] of [
    ['jackin', 'jackin.js'],
    ['jackin-capsule', 'jackin-capsule.js'],
  ] as const) {
    const code = readFileSync(join(dist, `${name}.bundle.cjs`), 'utf8');
    assert.deepEqual(
      [...code.matchAll(/\bimport\s*\(/g)].map((m) => code.slice(m.index, m.index + 40)),
      [],
      `${name}.bundle.cjs`,
    );
    assert.match(code, /require\("node:url"\)\.pathToFileURL\(__filename\)/, `import.meta.url is defined in ${name}.bundle.cjs`);
    assert.ok(
      readFileSync(join(root, 'bin', bin), 'utf8').includes(`loadWithCodeCache(join(dist, '${name}.bundle.cjs'), join(dist, '${name}.bundle.cache'))`),
      `bin/${bin} loads ${name}.bundle.cjs with its cache`,
    );
    // With the flags the binary runs with: none for jackin, CAPSULE_NODE_FLAGS for every capsule jackin
    // starts (jackin run, jackin run --image, the container's shim). V8 refuses a cache made under others.
    const flags = name === 'jackin-capsule' ? CAPSULE_NODE_FLAGS : [];
    const probe = `const r = require(process.argv[1]).loadWithCodeCache(process.argv[2], process.argv[3]); process.stdout.write(r.cache + ' ' + typeof r.exports.main);`;
    const out = execFileSync(
      process.execPath,
      [...flags, '-e', probe, join(dist, 'code-cache.bundle.cjs'), join(dist, `${name}.bundle.cjs`), join(dist, `${name}.bundle.cache`)],
      { encoding: 'utf8' },
    );
    assert.equal(out, 'accepted function', name);
  }
  // xterm is in the capsule's bundle (and so in its cache), not loaded from node_modules.
  const capsule = readFileSync(join(dist, 'jackin-capsule.bundle.cjs'), 'utf8');
  assert.doesNotMatch(capsule, /require\w*\)?\(\s*["']@xterm\//);
  assert.match(capsule, /SerializeAddon/);
});

test("the container's jackin-capsule shim runs Node with the capsule's flags, those its code cache was made with", () => {
  const shim = readFileSync(join(root, 'container-bin', 'jackin-capsule'), 'utf8');
  assert.ok(shim.includes(`exec /opt/jackin/node ${CAPSULE_NODE_FLAGS.join(' ')} /opt/jackin/pkg/bin/jackin-capsule.js "$@"`), shim);
  // Through the host's loader when its libraries are mounted (an image without glibc).
  assert.ok(
    shim.includes(
      `exec /opt/jackin/lib/ld.so --library-path /opt/jackin/lib /opt/jackin/node ${CAPSULE_NODE_FLAGS.join(' ')} /opt/jackin/pkg/bin/jackin-capsule.js "$@"`,
    ),
    shim,
  );
});

test('every bundle is Latin-1 text: V8 keeps a script whose source has any character above U+00FF two bytes a character', () => {
  // The host holds its bundle's source for lazy compiles: one → in a comment once doubled that string to 1.6 MB
  // (+0.9 MiB of an idle attached host's memory, bench/RESULTS.md). esbuild escapes strings, not comments.
  for (const file of readdirSync(join(root, 'dist')).filter((f) => /\.bundle\.c?js$/.test(f))) {
    const code = readFileSync(join(root, 'dist', file), 'utf8');
    const at = [...code].findIndex((c) => c.codePointAt(0)! > 0xff);
    assert.equal(at, -1, `${file}: a character above U+00FF near ${JSON.stringify(code.slice(Math.max(0, at - 60), at + 20))}`);
  }
});
