// needs-docker-engine
// End-to-end port offers (issue 48) across a real container's network namespace (Podman, and a real Docker
// engine started by scripts/run-tests.mjs; each test once per engine), tmux as the operator's terminal and
// the recording opener as the browser launcher: a server the program starts after start-up is offered
// (a notice, a palette entry), forwarded only once the operator chose the entry (from another host port
// when its own is taken on the host), listed by `jackin ls`, and a link to it opened from the screen
// opens the forwarded URL. JACKIN_PORT_OFFERS=off offers nothing. A session whose host asked for ports
// does not wake the capsule while the program is quiet (the bound of test/idle-e2e.test.ts).
// Every container is removed by the exact name the test gave it.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { chmodSync, copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { connect, createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { confirmOnScreen, INNER_PROMPT, INNER_SHELL, JACKIN, paneFor, REPO_ROOT, runJackin, typeLabel } from './helpers/jackin-cli.ts';
import { glibcTestImage, type TestEngine, testContainer } from './helpers/podman-image.mjs';
import { pollUntil } from './helpers/poll.ts';
import { freePort } from './helpers/free-port.ts';
import { shellQuote, type TmuxPane } from './helpers/tmux.ts';
import { recordingOpener } from './helpers/recording-opener.ts';
import { readActions } from '../src/host/instances/action-log.ts';
import { liveForwards } from '../src/host/forward/forward-registry.ts';
import { childPids, wakeups } from './helpers/wakeups.ts';
import { httpGetText } from './helpers/http-get.ts';

const execFileP = promisify(execFile);
/** As test/idle-e2e.test.ts: wake-ups allowed per process over WINDOW_MS of idle. */
const WINDOW_MS = 3_000;
const MAX_WAKEUPS = 4;

const CONTAINER_START_MS = 60_000;
const PALETTE_KEY = [0x1c];
const NODE_IN_CONTAINER = '/opt/jackin/node';
const ENGINES: readonly TestEngine[] = ['podman', 'docker'];

/** A workspace the container's user can read, with a small HTTP server in it (the login stand-in). */
function workspace(t: TestContext): string {
  const ws = mkdtempSync(join(tmpdir(), 'jackin-ports-ws-'));
  chmodSync(ws, 0o777);
  copyFileSync(join(REPO_ROOT, 'test', 'fixtures', 'forward', 'login-server.cjs'), join(ws, 'server.cjs'));
  t.after(() => rmSync(ws, { recursive: true, force: true }));
  return ws;
}

function probe(port: number): Promise<string> {
  return new Promise((resolve) => {
    const s = connect({ host: '127.0.0.1', port }, () => {
      s.destroy();
      resolve('open');
    });
    s.on('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? 'error'));
  });
}

async function startContainerSession(t: TestContext, engine: TestEngine, pane: TmuxPane, label: string, ws: string): Promise<string> {
  const name = testContainer(t, `${engine}-${label}`, engine);
  const image = await glibcTestImage(engine);
  await pane.typeLine(
    `clear; ${JACKIN} run --image ${image.ref} --engine ${engine} --name ${name} --workspace ${shellQuote(ws)} -- ${INNER_SHELL}; echo "jackin-rc=$?"`,
  );
  await pane.waitForText(INNER_PROMPT, { timeoutMs: CONTAINER_START_MS });
  return name;
}

/** A TCP listener of the test's own on the host's loopback: its port is taken for jackin. */
async function holdPort(t: TestContext): Promise<number> {
  const holder = createServer((s) => s.end("the host's own server\n"));
  await new Promise<void>((r) => holder.listen({ host: '127.0.0.1', port: 0 }, () => r()));
  t.after(() => new Promise<void>((r) => holder.close(() => r())));
  return (holder.address() as AddressInfo).port;
}

for (const engine of ENGINES) {
  test(`${engine}: a server started in the container is offered, forwarded from a free host port once chosen, listed by jackin ls, and a link to it opens the forwarded URL`, {
    timeout: 300_000,
  }, async (t) => {
    const rec = recordingOpener(t);
    const pane = await paneFor(t, { rows: 30, cols: 160, env: rec.env });
    const ws = workspace(t);
    const name = await startContainerSession(t, engine, pane, 'offer', ws);
    // The same port is taken on the host: the forward must pick another.
    const port = await holdPort(t);
    await pane.typeLine(`${NODE_IN_CONTAINER} /workspace/server.cjs 127.0.0.1 ${port} &`);
    await pane.waitForText('LISTENING-ON-127.0.0.1', { timeoutMs: 30_000 });
    await pane.waitForText(`Port ${port} opened in the container`, { timeoutMs: 15_000 });
    // Offered, not forwarded: nothing of jackin's listens for it.
    assert.deepEqual(await liveForwards(pane.jackinHome), []);

    await pane.sendBytes(PALETTE_KEY);
    await pane.waitForText(`Forward port ${port}`);
    await pane.type(`/forward port ${port}`);
    await pane.sendKeys('Enter');
    const fwd = await pollUntil('the forward to be recorded', async () => (await liveForwards(pane.jackinHome)).find((f) => f.containerPort === port));
    assert.equal(fwd.kind, 'offer');
    assert.equal(fwd.instance, name);
    const hostPort = fwd.hostPort;
    assert.notEqual(hostPort, port);
    await pane.waitForText(`Forwarding http://localhost:${hostPort}/ to port ${port}`);

    // Through the printed URL to the container's server.
    const r = await httpGetText(`http://localhost:${hostPort}/callback?code=c0de-${port}`);
    assert.equal(r.status, 200);
    assert.equal(r.body, 'signed in\n');
    await pane.waitForText(`GOT-CODE=c0de-${port}`);

    // jackin ls lists it, as an offered port.
    const ls = await runJackin(['ls'], { ...process.env, JACKIN_HOME: pane.jackinHome });
    assert.match(ls.stdout, new RegExp(`forward  localhost:${hostPort} -> ${name}:${port}  \\(offered port, pid \\d+\\)`));
    // And the container's own `jackin-capsule ports` lists its host URL, for an agent to print.
    const { stdout: listed } = await execFileP(engine, ['exec', name, NODE_IN_CONTAINER, '/opt/jackin/pkg/bin/jackin-capsule.js', 'ports', '--json'], {
      timeout: 30_000,
    });
    assert.deepEqual(
      (JSON.parse(listed) as Array<Record<string, unknown>>).map((f) => [f['hostPort'], f['containerPort'], f['kind']]),
      [[hostPort, port, 'offered']],
    );

    // A link to the container's port printed by the program, opened by a hint: the prompt shows both URLs,
    // and the browser gets the forwarded one.
    // The image has no clear: the screen is cleared by the escape, so the typed line (a link too) is gone.
    await pane.typeLine(`U=localhost:${port}; printf '\\033[2J\\033[Hhttp://%s/callback?code=link\\n' "$U"`);
    await pane.waitForText(`http://localhost:${port}/callback?code=link`);
    await pane.sendBytes(PALETTE_KEY);
    await pane.waitForText('Open link on screen');
    await pane.sendBytes([...Buffer.from('o')]);
    // The only link on the screen: its label is drawn over its first cell.
    const labelled = await pane.waitForText('type a label to');
    const label = new RegExp(`^([a-z])ttp://localhost:${port}/callback`, 'm').exec(labelled)?.[1] ?? 'a';
    await typeLabel(pane, label);
    const prompt = await pane.waitForText('jackin: confirm').catch(async (e: unknown) => {
      throw new Error(`${String(e)}; label ${label}; log ${JSON.stringify(await readActions(pane.jackinHome, name))}`);
    });
    assert.match(prompt, new RegExp(`http://localhost:${port}/callback\\?code=link`));
    assert.match(prompt, new RegExp(`opens http://localhost:${hostPort}/callback\\?code=link`));
    await confirmOnScreen(pane);
    await pollUntil('the link to reach the opener', () => rec.opened().length === 1, { last: rec.opened });
    assert.deepEqual(rec.opened(), [`http://localhost:${hostPort}/callback?code=link`]);

    // Stop forwarding from the palette: the host port closes, the record goes, both logged.
    await pane.sendBytes(PALETTE_KEY);
    await pane.waitForText(`Stop forwarding port ${port}`);
    await pane.type(`/stop forwarding port ${port}`);
    await pane.sendKeys('Enter');
    await pollUntil('the forward to close', async () => (await probe(hostPort)) === 'ECONNREFUSED');
    await pollUntil('the record to go', async () => (await liveForwards(pane.jackinHome)).length === 0);
    const log = await pollUntil('the close in the host log', async () => {
      const l = (await readActions(pane.jackinHome, name)).filter((a) => a.action === 'port-forward');
      return l.length >= 2 ? l : undefined;
    });
    assert.deepEqual(
      log.map((a) => [a.target, a.result, a.detail?.startsWith('closed') === true]),
      [
        [`localhost:${hostPort} -> ${name}:${port}`, 'ok', false],
        [`localhost:${hostPort} -> ${name}:${port}`, 'ok', true],
      ],
    );
  });

  test(`${engine}: JACKIN_PORT_OFFERS=off: a server started in the container gets no notice and no palette entry`, { timeout: 240_000 }, async (t) => {
    const pane = await paneFor(t, { rows: 30, cols: 160, env: { JACKIN_PORT_OFFERS: 'off' } });
    const ws = workspace(t);
    await startContainerSession(t, engine, pane, 'offer-off', ws);
    const port = await freePort();
    await pane.typeLine(`${NODE_IN_CONTAINER} /workspace/server.cjs 127.0.0.1 ${port} &`);
    await pane.waitForText('LISTENING-ON-127.0.0.1', { timeoutMs: 30_000 });
    // More output after the server listens: the moment a capsule asked for ports would look.
    await pane.typeLine('echo after-listen');
    await pane.waitForText(/^after-listen$/m);
    await new Promise((r) => setTimeout(r, 2_500));
    assert.doesNotMatch(await pane.capture(), /opened in the container/);
    await pane.sendBytes(PALETTE_KEY);
    const palette = await pane.waitForText('Redraw the screen');
    assert.doesNotMatch(palette, /Forward port/);
    await pane.sendKeys('Escape');
  });

  test(`${engine}: a session whose host asked for ports costs nothing while idle: the capsule in the container does not wake`, {
    timeout: 240_000,
  }, async (t) => {
    const pane = await paneFor(t, { rows: 30, cols: 160 });
    const ws = workspace(t);
    const name = await startContainerSession(t, engine, pane, 'offer-idle', ws);
    const port = await freePort();
    await pane.typeLine(`${NODE_IN_CONTAINER} /workspace/server.cjs 127.0.0.1 ${port} &`);
    // The host asked for ports: the server is offered.
    await pane.waitForText(`Port ${port} opened in the container`, { timeoutMs: 30_000 });
    await pane.waitForScreen('the notice to go', (screen) => !screen.includes('opened in the container'), { timeoutMs: 15_000 });
    // --init: the capsule is the child of the container's first process.
    const init = Number((await execFileP(engine, ['inspect', '-f', '{{.State.Pid}}', name])).stdout.trim());
    const capsule = await pollUntil("the capsule under the container's init", () => childPids(init)[0]);
    // Only the capsule looks for ports (the host reacts to its frames and keeps no clock for them). The host
    // of a container session is not measured here: it wakes as often with JACKIN_PORT_OFFERS=off (about 30
    // times a second, measured with Podman), which is no part of port offers.
    await sleep(1_500);
    const before = wakeups(capsule);
    await sleep(WINDOW_MS);
    const woken = wakeups(capsule) - before;
    assert.ok(woken <= MAX_WAKEUPS, `the capsule woke ${woken} times in ${WINDOW_MS} ms of idle`);
  });
}
