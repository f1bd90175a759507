import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  version: string;
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
};

/** The package a bare module specifier names (`@scope/name/sub` -> `@scope/name`), or null for node: and relative ones. */
function packageOf(specifier: string): string | null {
  if (specifier.startsWith('.') || specifier.startsWith('node:')) return null;
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]!;
}

test('production dependencies are exactly the packages shipped code imports; test-only ones are devDependencies', () => {
  const shipped = readdirSync(join(root, 'src'), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts'))
    .map((f) => readFileSync(join(root, 'src', f), 'utf8'));
  const imported = new Set<string>();
  for (const code of shipped) {
    for (const m of code.matchAll(/(?:^(?:import|export)\b[^;'"]*?\bfrom\s*|\bimport\s*\(?\s*)['"]([^'"]+)['"]/gm)) {
      const name = packageOf(m[1]!);
      if (name !== null) imported.add(name);
    }
  }
  assert.ok(imported.has('commander'), 'the scan finds imports');
  assert.deepEqual([...imported].sort(), Object.keys(pkg.dependencies).sort());
  for (const name of Object.keys(pkg.devDependencies)) assert.ok(!imported.has(name), `${name} is imported by shipped code`);
});

test('npm pack contains only what the package needs', () => {
  const out = execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: root, encoding: 'utf8' });
  const files = (JSON.parse(out) as Array<{ files: Array<{ path: string }> }>)[0]!.files.map((f) => f.path);
  assert.ok(files.includes('bin/jackin.js'));
  assert.ok(files.includes('bin/jackin-capsule.js'));
  // Makes the two binaries CommonJS (the package is ESM).
  assert.ok(files.includes('bin/package.json'));
  // The binaries run one bundle each (scripts/bundle.mjs); tsc's module tree is not shipped.
  assert.deepEqual(files.filter((f) => f.startsWith('dist/')).sort(), [
    'dist/attach-proxy.bundle.cjs',
    'dist/code-cache.bundle.cjs',
    'dist/early-relay.bundle.cjs',
    'dist/jackin-capsule.bundle.cache',
    'dist/jackin-capsule.bundle.cjs',
    'dist/jackin.bundle.cache',
    'dist/jackin.bundle.cjs',
  ]);
  // Loaded by the CLI's bundle for import() (src/host/platform/opener.ts).
  assert.ok(files.includes('bin/esm-import.js'));
  assert.ok(files.includes('policies/default.json'));
  assert.ok(files.includes('LICENSE'));
  // The shim `jackin run --image` puts on the container's PATH.
  assert.ok(files.includes('container-bin/jackin-capsule'));
  // The relay that shim runs on the image's perl.
  assert.ok(files.includes('container-bin/attach-proxy.pl'));
  // The container's browser: BROWSER and the xdg-open family, each a link offer (run --image, serve --browser).
  for (const shim of ['jackin-browser', 'xdg-open', 'sensible-browser', 'www-browser']) assert.ok(files.includes(`container-bin/browser/${shim}`), shim);
  // The container's clipboard tools: a write is a copy offer, a read answers the image last pasted (run --image, serve --clipboard).
  for (const shim of ['xclip', 'xsel', 'wl-copy', 'wl-paste', 'pbcopy', 'pbpaste']) assert.ok(files.includes(`container-bin/clipboard/${shim}`), shim);
  // Source maps would point at src/, which is not shipped; so would a reference to one in the code.
  assert.deepEqual(
    files.filter((f) => f.endsWith('.map')),
    [],
  );
  const mapped = files.filter((f) => f.endsWith('.js') && readFileSync(join(root, f), 'utf8').includes('//# sourceMappingURL='));
  assert.deepEqual(mapped, []);
  const unwanted = files.filter((f) => /(^|\/)(test|bench|scripts|node_modules|\.ci)\//.test(f) || /\.test\.(js|ts)$/.test(f) || /^src\//.test(f));
  assert.deepEqual(unwanted, []);
});

test('the packed tarball installs into an empty prefix and both commands run', { timeout: 180_000 }, () => {
  const work = mkdtempSync(join(tmpdir(), 'jackin-pack-'));
  try {
    // --ignore-scripts: `prepare` would rebuild dist/ in place while other test files run jackin from it (one
    // was seen loading a module tsc had half written); the test runner has just built it.
    const packed = execFileSync('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', work], { cwd: root, encoding: 'utf8' });
    const tarball = join(work, (JSON.parse(packed.slice(packed.indexOf('['))) as Array<{ filename: string }>)[0]!.filename);
    const prefix = join(work, 'prefix');
    const install = spawnSync('npm', ['install', '--global', '--prefix', prefix, '--no-audit', '--no-fund', tarball], {
      encoding: 'utf8',
    });
    assert.equal(install.status, 0, install.stderr);
    for (const bin of ['jackin', 'jackin-capsule']) {
      const v = spawnSync(join(prefix, 'bin', bin), ['--version'], { encoding: 'utf8' });
      assert.equal(v.status, 0, `${bin} --version: ${v.stderr}`);
      assert.equal(v.stdout.trim(), pkg.version);
      const h = spawnSync(join(prefix, 'bin', bin), ['--help'], { encoding: 'utf8' });
      assert.equal(h.status, 0, `${bin} --help: ${h.stderr}`);
      assert.match(h.stdout, new RegExp(`Usage: ${bin}`));
    }
    // The installed capsule runs a program on a PTY (node-pty loads from the installed package).
    const runDir = join(work, 'run');
    const serve = spawnSync(join(prefix, 'bin', 'jackin-capsule'), ['serve', '--run-dir', runDir, '--', 'sh', '-c', 'exit 3'], {
      encoding: 'utf8',
      timeout: 60_000,
    });
    assert.equal(serve.status, 3, serve.stderr);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
});
