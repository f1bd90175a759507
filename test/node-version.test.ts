/**
 * On a Node older than `engines` admits, both binaries stop before loading anything, with one line naming
 * the version needed and how to get it, status 1 (bin/node-version.js). Run under a real older Node from the
 * registry, the newest one below the floor (18), and checked against package.json's range on the boundaries.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { BELOW_ENGINES, installedNode, NODE_LINES } from './helpers/node-lines.ts';
import { REPO_ROOT, CAPSULE_BIN, JACKIN_BIN } from './helpers/jackin-cli.ts';
import { glibcTestImage, testContainer } from './helpers/podman-image.mjs';

const execFileP = promisify(execFile);
const NEEDED = /needs Node\.js 20 or newer; this is v(\d+\.\d+\.\d+) at .*Install Node 24 LTS: https:\/\/nodejs\.org\/en\/download/;

function checkRefusal(r: { status: number | null; stdout: string; stderr: string }, program: string, version: string): void {
  assert.equal(r.status, 1, r.stderr);
  assert.equal(r.stdout, '');
  const lines = r.stderr.split('\n');
  assert.equal(lines.length, 2, `one line: ${r.stderr}`);
  assert.equal(lines[1], '');
  assert.match(lines[0]!, NEEDED);
  assert.equal(NEEDED.exec(lines[0]!)![1], version);
  if (program === 'jackin') assert.match(lines[0]!, /^jackin: .* \(E_NODE_VERSION\)$/);
  else assert.match(lines[0]!, /^jackin-capsule: E_NODE_VERSION: /);
}

test(`under Node ${BELOW_ENGINES}, jackin and jackin-capsule (its relay too) stop at once with the version needed`, () => {
  const old = installedNode(BELOW_ENGINES);
  for (const [program, args] of [
    ['jackin', [JACKIN_BIN, '--version']],
    ['jackin', [JACKIN_BIN, 'attach', 'agent', '--via', 'podman']],
    ['jackin-capsule', [CAPSULE_BIN, 'serve', '--', 'true']],
    ['jackin-capsule', [CAPSULE_BIN, 'attach-proxy', '--socket', '/nonexistent/jackin.sock']],
  ] as const) {
    const r = spawnSync(old, [...args], { encoding: 'utf8', timeout: 30_000 });
    checkRefusal(r, program, BELOW_ENGINES);
  }
});

test("the container's jackin-capsule shim, with an older Node mounted as the host's, stops with the same line", async (t) => {
  const old = installedNode(BELOW_ENGINES);
  const { ref } = await glibcTestImage();
  const name = testContainer(t, 'old-node');
  const r = await execFileP(
    'podman',
    [
      'run',
      '--rm',
      '--name',
      name,
      '-v',
      `${old}:/opt/jackin/node:ro`,
      '-v',
      `${REPO_ROOT}:/opt/jackin/pkg:ro`,
      '--entrypoint',
      '/opt/jackin/pkg/container-bin/jackin-capsule',
      ref,
      'serve',
      '--',
      'true',
    ],
    { encoding: 'utf8', timeout: 60_000 },
  ).then(
    (ok) => ({ status: 0, stdout: ok.stdout, stderr: ok.stderr }),
    (e: { code?: number; stdout?: string; stderr?: string }) => ({ status: e.code ?? null, stdout: e.stdout ?? '', stderr: e.stderr ?? '' }),
  );
  checkRefusal(r, 'jackin-capsule', BELOW_ENGINES);
});

test("the check admits exactly package.json's engines range (>=20) on its boundaries", () => {
  const engines = (JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { engines: { node: string } }).engines.node;
  assert.equal(engines, '>=20');
  // The check reads process.version only: each version is pretended in this Node, the check alone is run.
  const check = join(REPO_ROOT, 'bin', 'node-version.js');
  const admitted = (v: string): boolean => {
    const r = spawnSync(
      process.execPath,
      ['-e', `Object.defineProperty(process, 'version', { value: ${JSON.stringify(v)} }); require(${JSON.stringify(check)})('jackin'); console.log('ran')`],
      { encoding: 'utf8' },
    );
    if (r.status === 0 && r.stdout === 'ran\n' && r.stderr === '') return true;
    checkRefusal(r, 'jackin', v.slice(1));
    return false;
  };
  for (const v of ['v0.12.18', 'v16.20.2', 'v18.20.8', 'v19.9.0']) assert.equal(admitted(v), false, v);
  // 22.0-22.14 and 23.0-23.7 have no zstd in node:zlib, and are admitted all the same (the WebAssembly fallback).
  for (const v of ['v20.0.0', 'v20.20.2', 'v22.0.0', 'v22.14.0', 'v22.15.0', 'v23.0.0', 'v24.0.0', 'v24.22.3', 'v26.12.1', 'v100.0.0'])
    assert.equal(admitted(v), true, v);
  // And the lines CI tests are all admitted.
  for (const v of NODE_LINES) assert.equal(admitted(`v${v}`), true, v);
});
