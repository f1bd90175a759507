// needs-docker-engine
// Any image runs the capsule: a real container built from Debian's busybox-static alone (no C library, no
// loader, no Node, no perl), on Podman and on a real Docker engine, with each capsule that can lend it a
// Node: the host's own (`--capsule host`) and the capsule runtime from jackin's cache (`--capsule runtime`,
// the test run's shared one: helpers/runtime-cache.ts), both with the host's own loader and libraries
// (src/host/instances/host-libraries.ts). Every affordance works as in a Debian image: the prompt, Ctrl+V
// (Xvfb + xclip as the clipboard), `jackin stage`, `jackin export` of a file and a directory, a Ctrl+clicked
// link, and `jackin forward` to busybox's httpd. Every container is removed by the exact name the test gave it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { get as httpGet } from 'node:http';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { confirmOnScreen, INNER_PROMPT, JACKIN, JACKIN_BIN, paneFor, runJackin, waitForJackinExit } from './helpers/jackin-cli.ts';
import { busyboxTestImage, type TestEngine, testContainer } from './helpers/podman-image.mjs';
import { pollUntil } from './helpers/poll.ts';
import { freePort } from './helpers/free-port.ts';
import { stopChild } from './helpers/stop-child.ts';
import { testDir } from './helpers/test-run.ts';
import { shellQuote } from './helpers/tmux.ts';
import { ownClipboard, startXvfb } from './helpers/xvfb.ts';
import { recordingOpener } from './helpers/recording-opener.ts';
import { bigPng } from './helpers/png.mjs';
import { onlyStagedImage } from './helpers/capsules.ts';
import { capsuleEnv, lentNode } from './helpers/runtime-cache.ts';

const execFileP = promisify(execFile);
const CONTAINER_START_MS = 60_000;
const CTRL = 16;
const ENGINES: readonly TestEngine[] = ['podman', 'docker'];
const CAPSULES = ['host', 'runtime'] as const;

function sha256(b: Buffer): string {
  return createHash('sha256').update(b).digest('hex');
}

/** The sha256 of a file in the container, by busybox's own sha256sum. */
async function shaInside(engine: TestEngine, name: string, path: string): Promise<string> {
  return (await execFileP(engine, ['exec', name, 'sha256sum', path], { encoding: 'utf8' })).stdout.split(' ')[0]!;
}

function get(url: string): Promise<{ status: number; body: Buffer }> {
  return new Promise((resolve, reject) => {
    httpGet(url, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    }).on('error', reject);
  });
}

for (const [engine, capsule] of ENGINES.flatMap((e) => CAPSULES.map((c) => [e, c] as const))) {
  test(`${engine}, --capsule ${capsule}: a busybox-static image (no C library, no Node, no perl) runs the capsule: prompt, paste, stage, export, a link, a forward`, {
    timeout: 300_000,
  }, async (t) => {
    const x = await startXvfb();
    t.after(() => x.stop());
    const opener = recordingOpener(t);
    const rec = testDir(t, 'jackin-busybox-rec-');
    const downloads = join(rec, 'downloads');
    const cache = await capsuleEnv(capsule);
    const pane = await paneFor(t, { env: { DISPLAY: x.display, JACKIN_PASTE_KEY: 'ctrl+v', ...opener.env, JACKIN_DOWNLOAD_DIR: downloads, ...cache } });
    const env = { ...process.env, JACKIN_HOME: pane.jackinHome, JACKIN_DOWNLOAD_DIR: downloads };
    const image = await busyboxTestImage(engine);
    const name = testContainer(t, `${engine}-${capsule}-busybox`, engine);
    const ws = testDir(t, 'jackin-busybox-ws-', { shared: true });

    await pane.typeLine(
      `clear; ${JACKIN} run --image ${image.ref} --engine ${engine} --capsule ${capsule} --name ${name} --workspace ${shellQuote(ws)} -- env "PS1=in\\$ " sh; echo "jackin-rc=$?"`,
    );
    await pane.waitForText(INNER_PROMPT, { timeoutMs: CONTAINER_START_MS });
    // The image really has nothing: no C library anywhere, no Node, no perl; sh is busybox.
    await pane.typeLine(
      'echo "libc=$(find / -xdev -name "libc.so*" 2>/dev/null | grep -vc ^/opt/jackin/) node=$(command -v node || echo none) perl=$(command -v perl || echo none) sh=$(readlink /bin/sh)"',
    );
    await pane.waitForText(/^libc=0 node=none perl=none sh=busybox$/m);
    // The Node the capsule runs on is the one asked for: the host's, or the runtime's from the cache.
    const lent = await lentNode(capsule);
    assert.equal(await shaInside(engine, name, '/opt/jackin/node'), sha256(readFileSync(lent)), `/opt/jackin/node is ${lent}`);

    // Ctrl+V: the image is staged in the container and its path typed on the command line.
    const png = bigPng(1024 * 1024);
    const owner = await ownClipboard(x, 'image/png', png);
    try {
      await pane.sendKeys('C-v');
      const staged = await onlyStagedImage(pane.jackinHome, name);
      await pane.waitForText(staged, { timeoutMs: 30_000 });
      assert.equal(await shaInside(engine, name, staged), sha256(png), 'the pasted image inside the container is identical');
    } finally {
      await owner.stop();
    }
    await pane.sendKeys('C-u');

    // jackin stage: a host file lands in the container, verified.
    const hostFile = join(rec, 'notes.txt');
    const notes = Buffer.from('staged from the host\n'.repeat(5000));
    writeFileSync(hostFile, notes);
    const stage = await runJackin(['stage', '--to', name, '--json', hostFile], env, { timeoutMs: 60_000 });
    assert.equal(stage.code, 0, stage.stderr);
    const staged = JSON.parse(stage.stdout) as { destination: string; sha256: string };
    assert.equal(staged.sha256, sha256(notes));
    assert.equal(await shaInside(engine, name, staged.destination), sha256(notes));

    // jackin export: a file and a directory the program made.
    await pane.typeLine('mkdir -p out/sub && echo "made in busybox" > note.txt && head -c 200000 /dev/urandom > out/sub/r.bin && echo made');
    await pane.waitForText(/^made$/m);
    const file = await runJackin(['export', '--from', name, 'note.txt', '--json'], env, { timeoutMs: 60_000 });
    assert.equal(file.code, 0, file.stderr);
    assert.equal(readFileSync((JSON.parse(file.stdout) as { destination: string }).destination, 'utf8'), 'made in busybox\n');
    const dir = await runJackin(['export', '--from', name, 'out', '--json'], env, { timeoutMs: 60_000 });
    assert.equal(dir.code, 0, dir.stderr);
    const extracted = join(rec, 'extracted');
    mkdirSync(extracted);
    await execFileP('tar', ['--zstd', '-xf', (JSON.parse(dir.stdout) as { destination: string }).destination, '-C', extracted]);
    assert.deepEqual(readdirSync(extracted), ['out']);
    assert.deepEqual(readFileSync(join(extracted, 'out', 'sub', 'r.bin')), readFileSync(join(ws, 'out', 'sub', 'r.bin')));

    // A link the program printed, Ctrl+clicked: the host opens it once confirmed.
    await pane.typeLine('clear; echo "see https://example.com/busybox-ok now"');
    const shown = await pane.waitForText(/^see https:\/\/example\.com\/busybox-ok now$/m);
    const row = shown.split('\n').findIndex((l) => l.startsWith('see https://'));
    await pollUntil('the host to capture the mouse', async () => (await pane.modes()).mouseAny, { timeoutMs: 10_000 });
    const at = (press: boolean) => [...Buffer.from(`\x1b[<${CTRL};${'see '.length + 6};${row + 1}${press ? 'M' : 'm'}`, 'latin1')];
    await pane.sendBytes([...at(true), ...at(false)]);
    await pane.waitForText(/│ https:\/\/example\.com\/busybox-ok/, { timeoutMs: 15_000 });
    await confirmOnScreen(pane);
    await pollUntil('the Ctrl+click to reach the opener', () => opener.opened().includes('https://example.com/busybox-ok'), {
      timeoutMs: 15_000,
      last: opener.opened,
    });

    // jackin forward to busybox's httpd on the container's loopback.
    mkdirSync(join(ws, 'www'));
    const page = Buffer.from('served by busybox httpd\n'.repeat(1000));
    writeFileSync(join(ws, 'www', 'page.txt'), page);
    const port = await freePort();
    await pane.typeLine(`clear; httpd -p 127.0.0.1:${port} -h /workspace/www && echo "httpd-up"`);
    // The export's notice may still sit at the right of the first row.
    await pane.waitForText(/^httpd-up(\s|$)/m);
    const hostPort = await freePort();
    const child = spawn(process.execPath, [JACKIN_BIN, 'forward', name, `${hostPort}:${port}`], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (b: Buffer) => (out += b.toString()));
    child.stderr.on('data', (b: Buffer) => (err += b.toString()));
    t.after(() => stopChild(child, 'SIGINT'));
    await pollUntil('jackin forward to print its URL', () => out.includes(`http://localhost:${hostPort}/`), { timeoutMs: 30_000, last: () => err });
    const r = await get(`http://localhost:${hostPort}/page.txt`);
    assert.equal(r.status, 200);
    assert.equal(sha256(r.body), sha256(page));
    await stopChild(child, 'SIGINT');
    assert.equal(child.exitCode, 0, err);

    await pane.typeLine('exit 0');
    assert.equal(await waitForJackinExit(pane, 30_000), 0);
  });
}
