// Only `serve` loads node-pty: with its native module unloadable (an image without libutil.so.1, a musl
// image), every other jackin-capsule subcommand still works. A module hook makes node-pty fail to load.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { CAPSULE_BIN } from './helpers/jackin-cli.ts';
import { fastProxySocket } from '../src/cli/attach-proxy-main.ts';

test('jackin-capsule: --help, attach-proxy, open-url and offer never load node-pty; serve does', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'jackin-lazy-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const hooks = join(dir, 'hooks.mjs');
  writeFileSync(
    hooks,
    `export async function resolve(specifier, context, next) {
  if (specifier.includes('node-pty')) throw new Error('node-pty blocked by the test');
  return next(specifier, context);
}\n`,
  );
  const register = join(dir, 'register.mjs');
  // The capsule requires node-pty (CommonJS): block require() too, which the ES module hooks do not see here.
  writeFileSync(
    register,
    `import { register, createRequire } from 'node:module';
register(${JSON.stringify(pathToFileURL(hooks).href)});
const Module = createRequire(import.meta.url)('node:module');
const resolve = Module._resolveFilename;
Module._resolveFilename = function (request, ...rest) {
  if (request.includes('node-pty')) throw new Error('node-pty blocked by the test');
  return resolve.call(this, request, ...rest);
};\n`,
  );
  const capsule = (...args: string[]) =>
    spawnSync(process.execPath, ['--import', pathToFileURL(register).href, CAPSULE_BIN, ...args], { encoding: 'utf8', timeout: 30_000 });

  const help = capsule('--help');
  assert.equal(help.status, 0, help.stderr);
  assert.match(help.stdout, /Usage: jackin-capsule/);
  const run = join(dir, 'run');
  for (const [args, own] of [
    [['attach-proxy', '--socket', join(dir, 'none.sock')], /E_SOCKET_CONNECT/],
    [['attach-proxy', '--help'], null],
    [['open-url', '--run-dir', run, 'https://example.com/'], /jackin-capsule: E_/],
    [['offer', '--run-dir', run, 'x.txt'], /jackin-capsule: E_/],
  ] as const) {
    const r = capsule(...args);
    assert.doesNotMatch(r.stderr, /node-pty blocked/, `${args.join(' ')}: ${r.stderr}`);
    if (own !== null) assert.match(r.stderr, own, `${args.join(' ')} fails with its own error`);
    else assert.equal(r.status, 0, r.stderr);
  }
  // The hook does bite: serve needs the PTY.
  const serve = capsule('serve', '--run-dir', run, '--', 'true');
  assert.notEqual(serve.status, 0);
  assert.match(serve.stderr, /node-pty blocked/);
});

test('attach-proxy fast path: only its own option is parsed by hand, anything else goes to the full CLI', () => {
  const env = { JACKIN_RUN_DIR: '/r' };
  assert.equal(fastProxySocket(['attach-proxy'], env), '/r/jackin.sock');
  assert.equal(fastProxySocket(['attach-proxy'], {}), '/jackin/run/jackin.sock');
  assert.equal(fastProxySocket(['attach-proxy', '--socket', '/s.sock'], env), '/s.sock');
  assert.equal(fastProxySocket(['attach-proxy', '--socket=/s.sock'], env), '/s.sock');
  for (const args of [
    ['serve'],
    [],
    ['attach-proxy', '--help'],
    ['attach-proxy', '--socket'],
    ['attach-proxy', '--socket', '--help'],
    ['attach-proxy', '--socket=', 'x'],
    ['attach-proxy', 'extra'],
  ]) {
    assert.equal(fastProxySocket(args, env), null, JSON.stringify(args));
  }
});
