import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CAPSULE_NODE_FLAGS } from './container-run-argv.ts';
import { expectedUname, programBin, remoteInstanceList, remoteRuntimeArch, runtimeFiles, runtimeManifest } from './remote-capsule.ts';

/** A package tree like the real one: what a capsule needs, and what it does not (sources, dev packages). */
function fakePackage(t: { after: (f: () => void) => void }): string {
  const root = mkdtempSync(join(tmpdir(), 'jackin-runtime-'));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  const write = (path: string, text: string): void => {
    mkdirSync(join(root, path, '..'), { recursive: true });
    writeFileSync(join(root, path), text);
  };
  write('package.json', JSON.stringify({ name: 'jackin-bridge', dependencies: { a: '1' }, devDependencies: { dev: '1' } }));
  for (const f of ['bin/jackin.js', 'bin/jackin-capsule.js', 'container-bin/browser', 'policies/default.json', 'src/x.ts', 'docs/guide.md']) write(f, f);
  write('dist/jackin-capsule.bundle.cjs', 'b');
  write('dist/jackin-capsule.bundle.cache', 'c');
  write('dist/cli/jackin.js', 'tsc output');
  write('node_modules/a/package.json', JSON.stringify({ dependencies: { b: '1' }, optionalDependencies: { missing: '1', c: '1' } }));
  write('node_modules/a/index.js', 'a');
  // b nested under a (another version than a hoisted one), c hoisted.
  write('node_modules/a/node_modules/b/package.json', '{}');
  write('node_modules/b/package.json', '{"version": "other"}');
  write('node_modules/c/package.json', '{}');
  write('node_modules/dev/package.json', '{}');
  write('node', 'the node binary');
  return root;
}

test('runtimeFiles: the Node binary, package.json, bin, container-bin, policies, the bundles and the production packages only', (t) => {
  const root = fakePackage(t);
  const files = runtimeFiles(root, join(root, 'node'));
  const names = files.map((f) => f.name);
  // a's own b (not the other version installed at the top, which nothing here needs) goes where Node
  // finds it from a in the copy: the top, free there (src/host/runtime/package-tree.ts lays it out).
  assert.equal(
    files.find((f) => f.name === 'package/node_modules/b/package.json')?.path,
    join(realpathSync(root), 'node_modules/a/node_modules/b/package.json'),
  );
  assert.deepEqual(names.sort(), [
    'node',
    'package/bin/jackin-capsule.js',
    'package/bin/jackin.js',
    'package/container-bin/browser',
    'package/dist/jackin-capsule.bundle.cache',
    'package/dist/jackin-capsule.bundle.cjs',
    'package/node_modules/a/index.js',
    'package/node_modules/a/package.json',
    'package/node_modules/b/package.json',
    'package/node_modules/c/package.json',
    'package/package.json',
    'package/policies/default.json',
  ]);
});

test("runtimeManifest: sha256sum's format, and its hash is the hash of that text (the cache key)", async (t) => {
  const root = fakePackage(t);
  const m = await runtimeManifest(runtimeFiles(root, join(root, 'node')));
  const first = m.text.split('\n')[0]!;
  assert.equal(first, `${createHash('sha256').update('the node binary').digest('hex')}  node`);
  assert.equal(m.hash, createHash('sha256').update(m.text).digest('hex'));
  writeFileSync(join(root, 'bin/jackin.js'), 'changed');
  assert.notEqual((await runtimeManifest(runtimeFiles(root, join(root, 'node')))).hash, m.hash, 'a changed file is another runtime');
});

test('runtimeManifest keeps its text in a cache file and hashes again once a file changes', async (t) => {
  const root = fakePackage(t);
  const cache = join(root, 'manifest-cache.json');
  const files = (): ReturnType<typeof runtimeFiles> => runtimeFiles(root, join(root, 'node'));
  const first = await runtimeManifest(files(), cache);
  assert.equal((await runtimeManifest(files(), cache)).hash, first.hash);
  // The cache is what a reuse reads: a planted text with the same key is taken as is.
  const kept = JSON.parse(readFileSync(cache, 'utf8')) as { key: string; text: string };
  writeFileSync(cache, JSON.stringify({ key: kept.key, text: 'planted' }));
  assert.equal((await runtimeManifest(files(), cache)).text, 'planted');
  // A changed file has another stamp: hashed again, and the cache rewritten.
  writeFileSync(join(root, 'bin/jackin.js'), 'changed, and longer');
  const changed = await runtimeManifest(files(), cache);
  assert.notEqual(changed.text, 'planted');
  assert.equal(changed.hash, (await runtimeManifest(files())).hash);
});

test('expectedUname: only a Linux host has a runtime to copy, named as uname -sm says it', () => {
  assert.equal(expectedUname('linux', 'x64'), 'Linux x86_64');
  assert.equal(expectedUname('linux', 'arm64'), 'Linux aarch64');
  assert.equal(expectedUname('darwin', 'arm64'), null);
});

test("remoteInstanceList keeps a well-formed list's fields and refuses anything else", () => {
  const one = {
    name: 'a',
    state: 'live',
    socket: '/s',
    runDir: '/r',
    program: ['sh'],
    pid: 3,
    containerPid: null,
    workspace: '/w',
    startedAt: null,
    attached: false,
    owner: null,
    forwards: [{ extra: true }],
  };
  const { forwards: _dropped, ...kept } = one;
  assert.deepEqual(remoteInstanceList(JSON.stringify([one])), [kept]);
  assert.equal(remoteInstanceList('not json'), null);
  assert.equal(remoteInstanceList('{}'), null);
  assert.equal(remoteInstanceList(JSON.stringify([{ ...one, state: 'evil' }])), null);
  assert.equal(remoteInstanceList(JSON.stringify([{ ...one, program: [1] }])), null);
  assert.equal(remoteInstanceList(JSON.stringify([{ ...one, pid: 1.5 }])), null);
});

test("remoteRuntimeArch: a Linux remote's uname -sm gets the capsule runtime of its architecture; anything else none", () => {
  assert.equal(remoteRuntimeArch('Linux x86_64'), 'x64');
  assert.equal(remoteRuntimeArch('Linux aarch64\n'), 'arm64');
  assert.equal(remoteRuntimeArch('Linux riscv64'), null);
  assert.equal(remoteRuntimeArch('Darwin arm64'), null);
  assert.equal(remoteRuntimeArch(''), null);
});

test("programBin: the program's jackin-capsule runs the copied runtime's, with the capsule's flags, from a runtime path with a quote and a blank", (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'jackin-program-bin-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const rt = join(dir, "cache/it's here");
  const run = join(dir, 'run');
  mkdirSync(rt, { recursive: true });
  // A stand-in Node: prints its arguments, one a line.
  writeFileSync(join(rt, 'node'), '#!/bin/sh\nprintf "%s\\n" "$@"\n', { mode: 0o755 });
  const out = execFileSync('sh', ['-c', `rt=$1; run=$2\n${programBin()}\njackin-capsule open-url -- "a b"`, 'sh', rt, run], {
    encoding: 'utf8',
    env: { PATH: '/usr/bin:/bin' },
  });
  assert.deepEqual(out.split('\n').slice(0, -1), [...CAPSULE_NODE_FLAGS, join(rt, 'package/bin/jackin-capsule.js'), 'open-url', '--', 'a b']);
});
