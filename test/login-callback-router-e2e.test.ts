// needs-docker-engine
// End-to-end routing of login callbacks by their OAuth state (Podman, and a real Docker engine started by
// scripts/run-tests.mjs): two `jackin run --image` sessions of one user (one JACKIN_HOME), each with a login
// stand-in waiting on the SAME container port; the operator opens each session's login link (different
// `state`s); the test, playing the browser, sends the callbacks to localhost:PORT, in opening order and then
// reversed, and each reaches the container whose link carried its state. A callback with an unknown state
// gets the "no match" page and reaches no container. The detached router is gone once its last link is done
// and once the last session ends. Every container is removed by the exact name the test gave it.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { confirmOnScreen, INNER_PROMPT, INNER_SHELL, JACKIN, paneFor, REPO_ROOT } from './helpers/jackin-cli.ts';
import { glibcTestImage, type TestEngine, testContainer } from './helpers/podman-image.mjs';
import { pollUntil } from './helpers/poll.ts';
import { freePort } from './helpers/free-port.ts';
import { shellQuote, type TmuxPane } from './helpers/tmux.ts';
import { recordingOpener } from './helpers/recording-opener.ts';
import { httpGetText } from './helpers/http-get.ts';
import { NO_MATCH_TEXT, routerPidPath } from '../src/host/forward/callback-router.ts';

const CONTAINER_START_MS = 60_000;
const PALETTE_KEY = [0x1c];
const NODE_IN_CONTAINER = '/opt/jackin/node';
const ENGINES: readonly TestEngine[] = ['podman', 'docker'];

function workspace(t: TestContext): string {
  const ws = mkdtempSync(join(tmpdir(), 'jackin-route-ws-'));
  chmodSync(ws, 0o777);
  copyFileSync(join(REPO_ROOT, 'test', 'fixtures', 'forward', 'login-server.cjs'), join(ws, 'login-server.cjs'));
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

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

interface Side {
  readonly pane: TmuxPane;
  readonly name: string;
  readonly label: string;
}

/** Starts `jackin run --image` in the pane, then the login stand-in on the container's 127.0.0.1:port. */
async function startSide(t: TestContext, engine: TestEngine, pane: TmuxPane, label: string, ws: string, port: number): Promise<Side> {
  const name = testContainer(t, `${engine}-route-${label}`, engine);
  const image = await glibcTestImage(engine);
  await pane.typeLine(
    `clear; ${JACKIN} run --image ${image.ref} --engine ${engine} --name ${name} --workspace ${shellQuote(ws)} -- ${INNER_SHELL}; echo "jackin-rc=$?"`,
  );
  await pane.waitForText(INNER_PROMPT, { timeoutMs: CONTAINER_START_MS });
  await pane.typeLine(`clear; ${NODE_IN_CONTAINER} /workspace/login-server.cjs 127.0.0.1 ${port} &`);
  await pane.waitForText('LISTENING-ON-127.0.0.1', { timeoutMs: 30_000 });
  return { pane, name, label };
}

/** The login link of a side, with its state, as the program offers it. */
function loginLink(port: number, state: string): string {
  const callback = `http://localhost:${port}/callback`;
  return `https://idp.example/oauth/authorize?client_id=agent&response_type=code&redirect_uri=${encodeURIComponent(callback)}&state=${state}`;
}

/** The program offers its link, the operator opens it from the palette and confirms; the prompt names the container. */
async function openLogin(side: Side, port: number, state: string, opened: () => string[]): Promise<void> {
  const { pane, name } = side;
  const link = loginLink(port, state);
  const before = opened().length;
  // The marker names the state: an earlier offer's line may still be on the screen until `clear` runs.
  await pane.typeLine(`clear; jackin-capsule open-url -- ${shellQuote(link)}; echo "offered-$?-${state}"`);
  await pane.waitForText(new RegExp(`^offered-0-${state}$`, 'm'));
  await pane.sendBytes(PALETTE_KEY);
  await pane.waitForText('Open offered link: https://idp.example/');
  await pane.sendKeys('u');
  const screen = await pane.waitForText('jackin: confirm');
  assert.match(screen, new RegExp(`forward localhost:${port} to ${name.slice(0, 24)}`));
  await confirmOnScreen(pane);
  await pollUntil('the link to reach the opener', () => opened().length === before + 1, { last: opened });
  assert.equal(opened().at(-1), link);
  await pane.waitForText(`Forwarding localhost:${port} to ${name.slice(0, 24)}`);
}

/** The router's pid, once it wrote it. */
async function routerPid(home: string, port: number): Promise<number> {
  return pollUntil('the router to write its pid', () => {
    const file = routerPidPath(home, port);
    return existsSync(file) ? Number(readFileSync(file, 'utf8')) || undefined : undefined;
  });
}

async function routerGone(port: number, pid: number): Promise<void> {
  await pollUntil('the router to free the port', async () => (await probe(port)) === 'ECONNREFUSED', { timeoutMs: 30_000 });
  await pollUntil('the router process to exit', () => !alive(pid), { timeoutMs: 30_000 });
}

for (const engine of ENGINES) {
  test(`${engine}: login callbacks of two containers on one port each reach the container whose link carried their state, in either order`, {
    timeout: 420_000,
  }, async (t) => {
    const rec = recordingOpener(t);
    const pane1 = await paneFor(t, { rows: 30, cols: 140, env: rec.env });
    // The second session is the same user's: the same JACKIN_HOME, so the same router.
    const pane2 = await paneFor(t, { rows: 30, cols: 140, env: { ...rec.env, JACKIN_HOME: pane1.jackinHome } });
    const home = pane1.jackinHome;
    const ws = workspace(t);
    const port = await freePort();
    const one = await startSide(t, engine, pane1, 'one', ws, port);
    const two = await startSide(t, engine, pane2, 'two', ws, port);
    const sides = [one, two] as const;

    for (const [round, order] of [
      ['in-order', [one, two]],
      ['reversed', [two, one]],
    ] as const) {
      assert.equal(await probe(port), 'ECONNREFUSED', `${round}: nothing on the port before a link is opened`);
      for (const side of sides) await openLogin(side, port, `st-${round}-${side.label}`, rec.opened);
      const pid = await routerPid(home, port);
      assert.ok(alive(pid), `${round}: the router runs`);
      if (round === 'in-order') {
        // A callback whose state no opened link carries: the page says so, and no container gets it.
        const stray = await httpGetText(`http://localhost:${port}/callback?code=stray&state=st-unknown`, 60_000);
        assert.equal(stray.status, 404);
        assert.ok(stray.body.includes(NO_MATCH_TEXT), stray.body);
      }
      for (const side of order) {
        const code = `c0de-${round}-${side.label}`;
        const r = await httpGetText(`http://localhost:${port}/callback?code=${code}&state=st-${round}-${side.label}`, 60_000);
        assert.deepEqual(r, { status: 200, body: 'signed in\n' }, `${round}: ${side.label}`);
        await side.pane.waitForText(`GOT-CODE=${code}`);
      }
      for (const side of sides) {
        const other = side === one ? two : one;
        assert.ok(!(await side.pane.capture()).includes(`GOT-CODE=c0de-${round}-${other.label}`), `${round}: ${side.label} got only its own`);
        assert.ok(!(await side.pane.capture()).includes('GOT-CODE=stray'), `${round}: ${side.label} got no stray callback`);
      }
      // Both exchanges done: both forwards end, and with them the router.
      await routerGone(port, pid);
      assert.ok(!existsSync(routerPidPath(home, port)));
    }

    // A link left open when its session ends: the router goes with the session.
    await openLogin(one, port, 'st-left-open', rec.opened);
    const pid = await routerPid(home, port);
    await pane1.typeLine('exit');
    await pane1.waitForText(/^jackin-rc=\d+$/m, { timeoutMs: 30_000 });
    await routerGone(port, pid);
  });
}
