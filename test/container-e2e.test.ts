// needs-docker-engine
// End-to-end with real container engines: `jackin run --image` under Podman (scripts/setup-podman.sh) and
// under a real Docker engine (scripts/docker-engine.sh, started by scripts/run-tests.mjs), each test once
// per engine and passing `--engine`, on an image built here from host binaries with no jackin and no Node
// inside (helpers/podman-image.mjs), tmux as the operator's terminal; the first test also with the capsule
// runtime (`--capsule runtime`). Every container is removed by the exact name the test gave it.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import {
  confirmOnScreen,
  INNER_PROMPT,
  INNER_SHELL,
  JACKIN,
  paneFor,
  waitForInnerShell,
  waitForJackinExit,
  runJackin,
  JACKIN_BIN,
  type JackinResult,
} from './helpers/jackin-cli.ts';
import { glibcPerlTestImage, glibcTestImage, type TestEngine, testContainer } from './helpers/podman-image.mjs';
import { pollUntil } from './helpers/poll.ts';
import { shellQuote, type TmuxPane } from './helpers/tmux.ts';
import { ownClipboard, startXvfb } from './helpers/xvfb.ts';
import { recordingOpener } from './helpers/recording-opener.ts';
import { bigPng } from './helpers/png.mjs';
import { onlyStagedImage } from './helpers/capsules.ts';
import { capsuleEnv, lentNode } from './helpers/runtime-cache.ts';

const execFileP = promisify(execFile);
/** Creating the container, then Node and the PTY inside it, on a loaded 2-core machine. */
const CONTAINER_START_MS = 60_000;
const PALETTE_KEY = [0x1c];
const CTRL = 16;

const ENGINES: readonly TestEngine[] = ['podman', 'docker'];
/** What the engine mounts as PID 1 for `--init`: catatonit (podman-init) or tini (docker-init). */
const INIT_COMM = /(catatonit|podman-init|docker-init|tini)/.source;

/** A container name for this test, removed when the test ends (whatever happened). */
function named(t: TestContext, engine: TestEngine, label: string): string {
  return testContainer(t, `${engine}-${label}`, engine);
}

function workspace(t: TestContext): string {
  const ws = mkdtempSync(join(tmpdir(), 'jackin-ctr-ws-'));
  chmodSync(ws, 0o777);
  t.after(() => rmSync(ws, { recursive: true, force: true }));
  return ws;
}

async function runImageLine(engine: TestEngine, name: string, ws: string, extra = '', image: { ref: string } | null = null): Promise<string> {
  image ??= await glibcTestImage(engine);
  return `clear; ${JACKIN} run --image ${image.ref} --engine ${engine} --name ${name} --workspace ${shellQuote(ws)} ${extra} -- ${INNER_SHELL}; echo "jackin-rc=$?"`;
}

function jackin(pane: TmuxPane, args: string[], env: Record<string, string> = {}): Promise<JackinResult> {
  return runJackin(args, { ...process.env, JACKIN_HOME: pane.jackinHome, ...env });
}

async function run(engine: TestEngine, ...args: string[]): Promise<string> {
  return (await execFileP(engine, args, { encoding: 'utf8' })).stdout;
}

async function containerExists(engine: TestEngine, name: string): Promise<boolean> {
  return execFileP(engine, ['inspect', '--type', 'container', '--format', '{{.Id}}', name]).then(
    () => true,
    () => false,
  );
}

// The first test runs with the host's Node and with the capsule runtime (the run's shared one): the --via
// relay in the container runs on the Node lent, whichever it is.
for (const [engine, capsule] of ENGINES.flatMap((e) => (['host', 'runtime'] as const).map((c) => [e, c] as const))) {
  test(`${engine}, --capsule ${capsule}: ` +
    'jackin run --image: no jackin in the image; init as PID 1 reaps orphans; detach, reattach by socket and --via ENGINE; exit status; container removed', {
    timeout: 240_000,
  }, async (t) => {
    const pane = await paneFor(t, { rows: 30, cols: 120, env: await capsuleEnv(capsule) });
    const name = named(t, engine, `basic-${capsule}`);
    const ws = workspace(t);
    await pane.typeLine(await runImageLine(engine, name, ws, `--capsule ${capsule}`));
    await pane.waitForText(INNER_PROMPT, { timeoutMs: CONTAINER_START_MS });
    // In the container: PID 1 is the init (catatonit from --init), the program starts at the pane's size.
    // (podman mounts catatonit as podman-init, docker its tini as docker-init.)
    await pane.typeLine('echo "pid1=$(cat /proc/1/comm) size=$(stty size) node=$(command -v node || echo none)"');
    await pane.waitForText(new RegExp(`^pid1=${INIT_COMM} size=30 120 node=none$`, 'm'));
    const lent = createHash('sha256')
      .update(readFileSync(await lentNode(capsule)))
      .digest('hex');
    assert.equal((await run(engine, 'exec', name, 'sha256sum', '/opt/jackin/node')).split(' ')[0], lent, 'the Node asked for is lent');
    // Five orphans that exit: the init reaps them (a capsule as PID 1 would leave five zombies).
    await pane.typeLine('for i in 1 2 3 4 5; do (sleep 0.2 &); done; echo spawned');
    await pane.waitForText(/^spawned$/m);
    await pollUntil(
      'the orphaned sleeps to be reaped',
      async () => {
        const ps = await run(engine, 'exec', name, 'ps', '-eo', 'stat=,comm=');
        return !/sleep/.test(ps) && !/^Z/m.test(ps) ? ps : undefined;
      },
      { timeoutMs: 20_000 },
    );

    await pane.sendBytes([...PALETTE_KEY, ...Buffer.from('d')]);
    assert.equal(await waitForJackinExit(pane), 0);
    await pane.waitForText(`jackin: detached from ${name}`);

    const ls = await jackin(pane, ['ls', '--json']);
    assert.equal(ls.code, 0, ls.stderr);
    const [entry] = (JSON.parse(ls.stdout) as Array<{ name: string; state: string; pid: number | null; containerPid: number | null }>).filter(
      (i) => i.name === name,
    );
    assert.equal(entry?.state, 'live');
    assert.equal(entry?.pid, null, 'a container pid is not reported as a host pid');
    assert.equal(typeof entry?.containerPid, 'number');

    // The verbose lines go to a file: the reattach repaint would draw over them on the screen.
    const verboseLog = join(ws, 'attach-verbose.log');
    await pane.typeLine(`clear; ${JACKIN} attach ${name} --verbose 2>${shellQuote(verboseLog)}; printf '\\njackin-rc=%s\\n' "$?"`);
    await waitForInnerShell(pane);
    await pane.typeLine('echo again-$((6*7))');
    await pane.waitForText(/^again-42$/m);
    await pane.sendBytes([...PALETTE_KEY, ...Buffer.from('d')]);
    assert.equal(await waitForJackinExit(pane), 0);
    assert.match(readFileSync(verboseLog, 'utf8'), /transport: socket/);

    // Through the engine: `ENGINE exec -i NAME jackin-capsule attach-proxy` finds the capsule on PATH.
    await pane.typeLine(`clear; ${JACKIN} attach ${name} --via ${engine}; echo "jackin-rc=$?"`);
    // The detached session's screen (its prompt) is up until `clear` runs: wait for the inner shell's answer.
    await waitForInnerShell(pane, 30_000);
    await pane.typeLine('echo via-$((2*21)); exit 7');
    await pane.waitForText(/^via-42$/m);
    assert.equal(await waitForJackinExit(pane, 30_000), 7);
    await pollUntil(
      'the container to stop after its program exited',
      async () => (await run(engine, 'inspect', '--format', '{{.State.Status}}', name)).trim() !== 'running',
      { timeoutMs: 20_000 },
    );
  });
}

for (const engine of ENGINES) {
  test(`${engine}: an image with perl: --via ENGINE attaches and exports through the perl relay, with no Node relay in the container`, {
    timeout: 240_000,
  }, async (t) => {
    const rec = mkdtempSync(join(tmpdir(), 'jackin-ctr-rec-'));
    t.after(() => rmSync(rec, { recursive: true, force: true }));
    const downloads = join(rec, 'downloads');
    const pane = await paneFor(t, { rows: 30, cols: 120 });
    const name = named(t, engine, 'perl');
    const ws = workspace(t);
    await pane.typeLine(await runImageLine(engine, name, ws, '', await glibcPerlTestImage(engine)));
    await pane.waitForText(INNER_PROMPT, { timeoutMs: CONTAINER_START_MS });
    await pane.typeLine('printf "exported through perl\\n" > note.txt; echo written');
    await pane.waitForText(/^written$/m);
    await pane.sendBytes([...PALETTE_KEY, ...Buffer.from('d')]);
    assert.equal(await waitForJackinExit(pane), 0);

    await pane.typeLine(`clear; ${JACKIN} attach ${name} --via ${engine}; echo "jackin-rc=$?"`);
    // The detached session's screen (its prompt) is up until `clear` runs: wait for the inner shell's answer.
    await waitForInnerShell(pane, 30_000);
    // The relay `ENGINE exec` started is perl running the package's script; no Node relay is running.
    const relays = (await run(engine, 'exec', name, 'ps', '-eo', 'args=')).split('\n').filter((l) => l.includes('attach-proxy'));
    assert.equal(relays.length, 1, relays.join('\n'));
    assert.match(relays[0]!, /^perl \/opt\/jackin\/pkg\/container-bin\/attach-proxy\.pl \/opt\/jackin\/node \S+ attach-proxy$/);
    // An export through the same kind of relay, while the session is attached.
    const file = await jackin(pane, ['export', '--via', engine, '--from', name, 'note.txt', '--json'], { JACKIN_DOWNLOAD_DIR: downloads });
    assert.equal(file.code, 0, file.stderr);
    assert.equal(readFileSync((JSON.parse(file.stdout) as { destination: string }).destination, 'utf8'), 'exported through perl\n');
    await pane.typeLine('echo perl-$((6*7)); exit 5');
    await pane.waitForText(/^perl-42$/m);
    assert.equal(await waitForJackinExit(pane, 30_000), 5);
  });

  test(`${engine}: jackin run --image: paste an image (Xvfb + xclip), export a file and a directory, Ctrl+click a link`, {
    timeout: 240_000,
  }, async (t) => {
    const x = await startXvfb();
    t.after(() => x.stop());
    const rec = mkdtempSync(join(tmpdir(), 'jackin-ctr-rec-'));
    t.after(() => rmSync(rec, { recursive: true, force: true }));
    const opener = recordingOpener(t);
    const downloads = join(rec, 'downloads');
    const pane = await paneFor(t, { env: { DISPLAY: x.display, JACKIN_PASTE_KEY: 'ctrl+v', ...opener.env, JACKIN_DOWNLOAD_DIR: downloads } });
    const name = named(t, engine, 'affordances');
    const ws = workspace(t);
    await pane.typeLine(await runImageLine(engine, name, ws));
    await pane.waitForText(INNER_PROMPT, { timeoutMs: CONTAINER_START_MS });

    // Ctrl+V: the image is staged in the container and its container path typed on the command line.
    const png = bigPng(2 * 1024 * 1024);
    const owner = await ownClipboard(x, 'image/png', png);
    try {
      await pane.sendKeys('C-v');
      // The run directory is the host's, bind-mounted: the staged file's name is read there, its bytes inside.
      const staged = await onlyStagedImage(pane.jackinHome, name);
      await pane.waitForText(staged, { timeoutMs: 30_000 });
      const inside = await run(engine, 'exec', name, 'sha256sum', staged);
      assert.equal(inside.split(' ')[0], createHash('sha256').update(png).digest('hex'), 'the file inside the container is identical');
    } finally {
      await owner.stop();
    }
    await pane.sendKeys('C-u');

    // Files made by the program in the container, exported to the host.
    await pane.typeLine('mkdir -p out/sub && printf "made in the container\\n" > note.txt && head -c 300000 /dev/urandom > out/sub/r.bin && echo made');
    await pane.waitForText(/^made$/m);
    const file = await jackin(pane, ['export', '--from', name, 'note.txt', '--json'], { JACKIN_DOWNLOAD_DIR: downloads });
    assert.equal(file.code, 0, file.stderr);
    const fileLine = JSON.parse(file.stdout) as { destination: string };
    assert.equal(readFileSync(fileLine.destination, 'utf8'), 'made in the container\n');
    const dir = await jackin(pane, ['export', '--from', name, 'out', '--json'], { JACKIN_DOWNLOAD_DIR: downloads });
    assert.equal(dir.code, 0, dir.stderr);
    const archive = (JSON.parse(dir.stdout) as { destination: string }).destination;
    const extracted = join(rec, 'extracted');
    mkdirSync(extracted);
    await execFileP('tar', ['--zstd', '-xf', archive, '-C', extracted]);
    assert.deepEqual(readdirSync(extracted), ['out'], 'one top-level folder');
    assert.deepEqual(readFileSync(join(extracted, 'out', 'sub', 'r.bin')), readFileSync(join(ws, 'out', 'sub', 'r.bin')));

    // Ctrl+click on a URL the program printed: the host opener gets it.
    await pane.typeLine('echo "see https://example.com/container-ok now"');
    const shown = await pane.waitForText(/^see https:\/\/example\.com\/container-ok now$/m);
    const row = shown.split('\n').findIndex((l) => l.startsWith('see https://'));
    await pollUntil('the host to capture the mouse', async () => (await pane.modes()).mouseAny, { timeoutMs: 10_000 });
    const at = (press: boolean) => [...Buffer.from(`\x1b[<${CTRL};${'see '.length + 6};${row + 1}${press ? 'M' : 'm'}`, 'latin1')];
    await pane.sendBytes([...at(true), ...at(false)]);
    // The capsule resolved the link: the host shows it in its prompt, and opens it only on Enter.
    await pane.waitForText(/│ https:\/\/example\.com\/container-ok/, { timeoutMs: 15_000 });
    assert.deepEqual(opener.opened(), [], 'nothing opens before the confirmation');
    await confirmOnScreen(pane);
    await pollUntil('the Ctrl+click to reach the opener', () => opener.opened().includes('https://example.com/container-ok'), {
      timeoutMs: 15_000,
      last: opener.opened,
    });

    await pane.typeLine('exit 0');
    assert.equal(await waitForJackinExit(pane, 30_000), 0);
    await pollUntil('jackin run to remove the container whose program exited', async () => !(await containerExists(engine, name)), { timeoutMs: 20_000 });
  });

  test(`${engine}: ` +
    'jackin run --image as root with a non-root container user; kill -9 of the container, a restart over its stale socket, and jackin stop says why the program ended', {
    timeout: 240_000,
  }, async (t) => {
    const pane = await paneFor(t);
    const name = named(t, engine, 'restart');
    const ws = workspace(t);
    const line = await runImageLine(engine, name, ws, '--user 1000:1000');
    await pane.typeLine(line);
    await pane.waitForText(INNER_PROMPT, { timeoutMs: CONTAINER_START_MS });
    await pane.typeLine('echo "uid=$(id -u)"');
    await pane.waitForText(/^uid=1000$/m);
    const socket = join(pane.jackinHome, 'sockets', name, 'jackin.sock');
    assert.equal(statSync(socket).uid, 1000);

    await run(engine, 'kill', '--signal', 'KILL', name);
    const status = await waitForJackinExit(pane, 30_000);
    assert.notEqual(status, 0);
    const killed = await pane.waitForText(new RegExp(`^jackin: container ${name} stopped \\(${engine}: (exited|stopped), exit code 137\\)$`, 'm'));
    assert.doesNotMatch(killed, /lost connection/, 'one line says the container stopped, in place of the lost connection');
    assert.ok(existsSync(socket), 'the killed capsule left its socket behind');

    // The same command again: the leftover container and socket are replaced, nothing blocks.
    await pane.typeLine(line);
    // The killed session's screen (its prompt) is up until `clear` runs: wait for the new inner shell's answer.
    await waitForInnerShell(pane, CONTAINER_START_MS);
    await pane.typeLine('echo second-start');
    await pane.waitForText(/^second-start$/m);

    const stop = await jackin(pane, ['stop', name]);
    assert.equal(stop.code, 0, stop.stderr);
    assert.match(stop.stdout, new RegExp(`stopped ${name}`));
    const screen = await pane.waitForText(/^jackin-rc=\d+$/m, { timeoutMs: 30_000 });
    assert.match(screen, new RegExp(`jackin: ${name}: the capsule received SIGTERM`), 'one line says the container was stopped');
    assert.equal(await containerExists(engine, name), false);
  });

  test(`${engine}: ` +
    "an operator who is not root attaches to a capsule running as root in a container (started from --dry-run's command); export waits for the socket", {
    timeout: 240_000,
  }, async (t) => {
    // The operator's home must be reachable by uid 1000.
    const opRoot = mkdtempSync(join(tmpdir(), 'jackin-ctr-op-'));
    t.after(() => rmSync(opRoot, { recursive: true, force: true }));
    chmodSync(opRoot, 0o755);
    const home = join(opRoot, 'home');
    const jackinHome = join(home, '.jackin');
    const ws = join(home, 'ws');
    mkdirSync(ws, { recursive: true });
    writeFileSync(join(ws, 'hello.txt'), 'hello\n');
    await execFileP('chown', ['-R', '1000:1000', home]);
    const name = named(t, engine, 'rootcapsule');
    const image = await glibcTestImage(engine);
    const dry = await execFileP(
      process.execPath,
      [JACKIN_BIN, 'run', '--image', image.ref, '--engine', engine, '--name', name, '--workspace', ws, '--user', '0:0', '--dry-run', '--', 'sleep', '600'],
      {
        env: { ...process.env, JACKIN_HOME: jackinHome },
        encoding: 'utf8',
      },
    );
    const [mkdirLine, runLine] = dry.stdout.trim().split('\n');
    assert.match(runLine!, new RegExp(`^${engine} run -d --init --name `));
    const asOperator = (cmd: string) =>
      execFileP('setpriv', ['--reuid=1000', '--regid=1000', '--clear-groups', 'env', `HOME=${home}`, `JACKIN_HOME=${jackinHome}`, 'sh', '-c', cmd], {
        encoding: 'utf8',
      }).catch((e: { stderr?: string; message: string }) => {
        throw new Error(`${e.message}\n${e.stderr ?? ''}`);
      });
    await asOperator(mkdirLine!);
    // Root starts the container (as a compose file or a script would), then the operator exports at once.
    await execFileP('sh', ['-c', runLine!]);
    const jackinAsOperator = JACKIN;
    const exported = await asOperator(`${jackinAsOperator} export --from ${name} hello.txt --to ${shellQuote(join(home, 'dl'))} --json`);
    assert.equal(readFileSync((JSON.parse(exported.stdout) as { destination: string }).destination, 'utf8'), 'hello\n');
    // The capsule ran as root and handed its socket to the owner of the run directory.
    const socket = join(jackinHome, 'sockets', name, 'jackin.sock');
    assert.equal(statSync(socket).uid, 1000);
    const ls = await asOperator(`${jackinAsOperator} ls --json`);
    assert.equal((JSON.parse(ls.stdout) as Array<{ name: string; state: string }>).find((i) => i.name === name)?.state, 'live');
  });

  test(`${engine}: jackin run --image: --capsule image on an image without jackin-capsule fails with one line naming the fix`, {
    timeout: 120_000,
  }, async (t) => {
    const pane = await paneFor(t);
    const ws = workspace(t);
    const glibc = await glibcTestImage(engine);
    const b = named(t, engine, 'nocapsule');
    const r2 = await jackin(pane, ['run', '--image', glibc.ref, '--engine', engine, '--capsule', 'image', '--name', b, '--workspace', ws, '--', 'sh']);
    assert.equal(r2.code, 1, r2.stderr);
    assert.match(r2.stderr, /has no jackin-capsule on its PATH.*npm install -g.* \(E_IMAGE_NO_CAPSULE\)$/m);
    assert.equal(
      r2.stderr
        .trim()
        .split('\n')
        .filter((l) => l.startsWith('jackin: ') && !l.startsWith('jackin: using')).length,
      1,
    );
    assert.equal(await containerExists(engine, b), false);
  });

  test(`${engine}: a capsule that is PID 1 without an init says so once, with the fix`, { timeout: 120_000 }, async (t) => {
    const name = named(t, engine, 'pid1');
    const image = await glibcTestImage(engine);
    const pkg = join(import.meta.dirname, '..');
    await run(
      engine,
      'run',
      '-d',
      '--name',
      name,
      '--network=none',
      '-v',
      `${process.execPath}:/opt/jackin/node:ro`,
      '-v',
      `${pkg}:/opt/jackin/pkg:ro`,
      '--entrypoint',
      '/opt/jackin/node',
      image.ref,
      '/opt/jackin/pkg/bin/jackin-capsule.js',
      'serve',
      '--run-dir',
      '/tmp/run',
      '--',
      'sleep',
      '600',
    );
    const logs = await pollUntil(
      'the capsule to warn about PID 1',
      async () => {
        const out = await execFileP(engine, ['logs', name], { encoding: 'utf8' });
        const l = out.stdout + out.stderr;
        return /running as PID 1 without an init.*--init/.test(l) ? l : undefined;
      },
      { timeoutMs: 30_000 },
    );
    assert.equal(logs.split('running as PID 1').length - 1, 1, 'said once');
  });
}
