// needs-docker-engine
// End-to-end forwards across a real container's network namespace (Podman, and a real Docker engine started
// by scripts/run-tests.mjs; each test once per engine): login callbacks forwarded on the
// operator's open gesture (tmux as the terminal, the recording opener as the browser launcher, the test
// playing the browser), one kept alive by the browser and closed once idle, a taken host port, and
// `jackin forward --via ENGINE` carrying a 64 MiB download.
// Every container is removed by the exact name the test gave it.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { chmodSync, copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, get as httpGet } from 'node:http';
import { connect, createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { confirmOnScreen, INNER_PROMPT, INNER_SHELL, JACKIN, paneFor, REPO_ROOT, JACKIN_BIN } from './helpers/jackin-cli.ts';
import { glibcTestImage, type TestEngine, testContainer } from './helpers/podman-image.mjs';
import { pollUntil } from './helpers/poll.ts';
import { freePort } from './helpers/free-port.ts';
import { stopChild } from './helpers/stop-child.ts';
import { shellQuote, type TmuxPane } from './helpers/tmux.ts';
import { recordingOpener } from './helpers/recording-opener.ts';
import { readActions } from '../src/host/instances/action-log.ts';

const execFileP = promisify(execFile);
const CONTAINER_START_MS = 60_000;
const PALETTE_KEY = [0x1c];
const NODE_IN_CONTAINER = '/opt/jackin/node';
const ENGINES: readonly TestEngine[] = ['podman', 'docker'];

function named(t: TestContext, engine: TestEngine, label: string): string {
  return testContainer(t, `${engine}-${label}`, engine);
}

/** A workspace the container's user can read, with the stand-in login server in it. */
function workspace(t: TestContext): string {
  const ws = mkdtempSync(join(tmpdir(), 'jackin-fwd-ws-'));
  chmodSync(ws, 0o777);
  copyFileSync(join(REPO_ROOT, 'test', 'fixtures', 'forward', 'login-server.cjs'), join(ws, 'login-server.cjs'));
  t.after(() => rmSync(ws, { recursive: true, force: true }));
  return ws;
}

/** How a TCP connect to the host's loopback port ends: 'open' or the error code. */
function probe(port: number, host = '127.0.0.1'): Promise<string> {
  return new Promise((resolve) => {
    const s = connect({ host, port }, () => {
      s.destroy();
      resolve('open');
    });
    s.on('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? 'error'));
  });
}

/** An HTTP GET; a transfer with no byte for `idleMs` fails, saying how far it got (a stalled forward shows, not a test timeout). */
function get(url: string, idleMs = 60_000): Promise<{ status: number; body: Buffer }> {
  return new Promise((resolve, reject) => {
    let got = 0;
    const req = httpGet(url, { agent: false }, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (b: Buffer) => {
        got += b.length;
        parts.push(b);
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(parts) }));
      res.on('error', reject);
    });
    req.setTimeout(idleMs, () => req.destroy(new Error(`GET ${url}: no data for ${idleMs} ms after ${got} bytes`)));
    req.on('error', reject);
  });
}

async function startContainerSession(t: TestContext, engine: TestEngine, pane: TmuxPane, label: string, ws: string): Promise<string> {
  const name = named(t, engine, label);
  const image = await glibcTestImage(engine);
  await pane.typeLine(
    `clear; ${JACKIN} run --image ${image.ref} --engine ${engine} --name ${name} --workspace ${shellQuote(ws)} -- ${INNER_SHELL}; echo "jackin-rc=$?"`,
  );
  await pane.waitForText(INNER_PROMPT, { timeoutMs: CONTAINER_START_MS });
  return name;
}

/** Starts the login server in the container on `host`:`port` and offers its login link (state `s`, calling back to `path`). */
async function offerLogin(pane: TmuxPane, host: string, port: number, path = '/callback'): Promise<string> {
  await pane.typeLine(`clear; ${NODE_IN_CONTAINER} /workspace/login-server.cjs ${host} ${port} &`);
  await pane.waitForText(`LISTENING-ON-${host}`, { timeoutMs: 30_000 });
  const callback = `http://localhost:${port}${path}`;
  const link = `https://idp.example/oauth/authorize?client_id=agent&response_type=code&redirect_uri=${encodeURIComponent(callback)}&state=s`;
  await pane.typeLine(`jackin-capsule open-url -- ${shellQuote(link)}; echo "offer-rc=$?"`);
  await pane.waitForText(/^offer-rc=0\b/m);
  return link;
}

/** Opens the offered link from the palette and confirms the host's prompt, which names the forward. */
async function openOffered(pane: TmuxPane, note: RegExp | null): Promise<string> {
  await pane.sendBytes(PALETTE_KEY);
  await pane.waitForText('Open offered link: https://idp.example/');
  await pane.sendKeys('u');
  const screen = await pane.waitForText('jackin: confirm');
  if (note !== null) assert.match(screen, note);
  await confirmOnScreen(pane);
  return screen;
}

/** `jackin forward ARGS` under the pane's JACKIN_HOME, its output gathered; stopped with Ctrl+C when the test ends. */
function spawnForward(t: TestContext, pane: TmuxPane, args: string[]): { child: ReturnType<typeof spawn>; out: () => string; err: () => string } {
  const child = spawn(process.execPath, [JACKIN_BIN, 'forward', ...args], {
    env: { ...process.env, JACKIN_HOME: pane.jackinHome },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (b: Buffer) => (out += b.toString()));
  child.stderr.on('data', (b: Buffer) => (err += b.toString()));
  t.after(() => stopChild(child, 'SIGINT'));
  return { child, out: () => out, err: () => err };
}

/** Ctrl+C, and the exit status 0 it must give, within 20 s. */
async function interrupt(f: ReturnType<typeof spawnForward>): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await new Promise<void>((resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`jackin forward did not exit within 20 s of SIGINT; it said: ${f.err()}`)), 20_000);
    void stopChild(f.child, 'SIGINT').then(resolve);
  }).finally(() => clearTimeout(timer));
  assert.equal(f.child.exitCode, 0, f.err());
}

/** `jackin-capsule ports --json` run in the container by the engine, as an agent in it would. */
async function portsInContainer(engine: TestEngine, name: string): Promise<Array<Record<string, unknown>>> {
  const { stdout } = await execFileP(engine, ['exec', name, NODE_IN_CONTAINER, '/opt/jackin/pkg/bin/jackin-capsule.js', 'ports', '--json'], {
    timeout: 30_000,
  });
  return JSON.parse(stdout) as Array<Record<string, unknown>>;
}

/** `jackin ls` and `jackin ls --json` under the pane's JACKIN_HOME: the text, and this instance's forwards as [host, container] pairs. */
async function lsForwards(pane: TmuxPane, name: string): Promise<{ text: string; pairs: number[][] }> {
  const env = { ...process.env, JACKIN_HOME: pane.jackinHome };
  const text = (await execFileP(process.execPath, [JACKIN_BIN, 'ls'], { env, timeout: 30_000 })).stdout;
  const json = JSON.parse((await execFileP(process.execPath, [JACKIN_BIN, 'ls', '--json'], { env, timeout: 30_000 })).stdout) as Array<{
    name: string;
    forwards: Array<{ hostPort: number; containerPort: number }>;
  }>;
  const pairs = (json.find((i) => i.name === name)?.forwards ?? []).map((f) => [f.hostPort, f.containerPort]).sort((a, b) => a[0]! - b[0]!);
  return { text, pairs };
}

for (const engine of ENGINES) {
  for (const host of ['127.0.0.1', '::1']) {
    test(`${engine}: login callback: a login server on the container's ${host} gets its code once the operator opened its link; nothing is bound before, and it closes after`, {
      timeout: 240_000,
    }, async (t) => {
      const rec = recordingOpener(t);
      const pane = await paneFor(t, { rows: 30, cols: 120, env: rec.env });
      const ws = workspace(t);
      const name = await startContainerSession(t, engine, pane, host === '::1' ? 'login6' : 'login4', ws);
      const port = await freePort();
      const link = await offerLogin(pane, host, port);
      // Printed and offered, not opened: nothing is bound on the host.
      assert.equal(await probe(port), 'ECONNREFUSED');
      assert.deepEqual(rec.opened(), []);

      await openOffered(pane, new RegExp(`…and forward localhost:${port} to ${name.slice(0, 24)}`));
      await pollUntil('the link to reach the opener', () => rec.opened().length === 1, { last: rec.opened });
      assert.deepEqual(rec.opened(), [link]);
      // Listed in the container while it is open, for an agent that wants to say where its callback is.
      assert.deepEqual(await portsInContainer(engine, name), [{ hostPort: port, containerPort: port, url: `http://localhost:${port}/`, kind: 'login' }]);
      // The browser's redirect: the host's localhost:PORT now leads to the container's.
      // The IdP sends the link's state back: the router hands the callback to this session.
      const r = await get(`http://localhost:${port}/callback?code=c0de-${port}&state=s`);
      assert.equal(r.status, 200);
      assert.equal(r.body.toString(), 'signed in\n');
      await pane.waitForText(`GOT-CODE=c0de-${port}`);
      // Its exchange done and the connection idle: the host port closes again, with a notice and a log line.
      await pollUntil('the login forward to close', async () => (await probe(port)) === 'ECONNREFUSED', { timeoutMs: 30_000 });
      const log = await pollUntil('the close in the host log', async () => {
        const l = (await readActions(pane.jackinHome, name)).filter((a) => a.action === 'login-forward');
        return l.length >= 2 ? l : undefined;
      });
      await pane.waitForText(`Stopped forwarding localhost:${port}`);
      assert.deepEqual(await portsInContainer(engine, name), []);
      assert.deepEqual(
        log.map((a) => [a.target, a.result, a.detail?.startsWith('closed') ? 'closed' : 'opened']),
        [
          [`localhost:${port} -> ${name}:${port}`, 'ok', 'opened'],
          [`localhost:${port} -> ${name}:${port}`, 'ok', 'closed'],
        ],
      );
    });
  }

  test(`${engine}: login callback: a callback connection the browser keeps open is closed once its exchange is done and it is idle`, {
    timeout: 240_000,
  }, async (t) => {
    const rec = recordingOpener(t);
    const pane = await paneFor(t, { rows: 30, cols: 120, env: rec.env });
    const ws = workspace(t);
    const name = await startContainerSession(t, engine, pane, 'login-idle', ws);
    const port = await freePort();
    await offerLogin(pane, '127.0.0.1', port, '/callback-kept');
    await openOffered(pane, new RegExp(`…and forward localhost:${port} to ${name.slice(0, 24)}`));
    await pollUntil('the link to reach the opener', () => rec.opened().length === 1, { last: rec.opened });
    // A browser keeps the connection alive after the callback's answer; so does the login server (120 s).
    const agent = new Agent({ keepAlive: true });
    t.after(() => agent.destroy());
    let closedAt = 0;
    const body = await new Promise<string>((resolve, reject) => {
      const req = httpGet({ host: '127.0.0.1', port, path: `/callback-kept?code=k33p-${port}&state=s`, agent }, (res) => {
        let text = '';
        res.on('data', (b: Buffer) => (text += b.toString()));
        res.on('end', () => resolve(text));
        res.on('error', reject);
      });
      req.on('socket', (s) => s.once('close', () => (closedAt = Date.now())));
      req.on('error', reject);
    });
    const answeredAt = Date.now();
    assert.equal(body, 'signed in\n');
    await pane.waitForText(`GOT-CODE=k33p-${port}`);
    // The forward ends the idle connection itself, long before either side's keep-alive would.
    await pollUntil('the forward to close the kept-alive connection', () => closedAt > 0, { timeoutMs: 30_000 });
    assert.ok(closedAt - answeredAt < 30_000, `closed ${closedAt - answeredAt} ms after the answer`);
    await pollUntil('the login forward to close', async () => (await probe(port)) === 'ECONNREFUSED', { timeoutMs: 30_000 });
    const log = await pollUntil('the close in the host log', async () => {
      const l = (await readActions(pane.jackinHome, name)).filter((a) => a.action === 'login-forward');
      return l.length >= 2 ? l : undefined;
    });
    assert.equal(log.at(-1)?.detail, 'closed: its exchange is done');
  });

  test(`${engine}: login callback: a host port already taken still opens the link, and a notice says why nothing was forwarded`, {
    timeout: 240_000,
  }, async (t) => {
    const rec = recordingOpener(t);
    const pane = await paneFor(t, { rows: 30, cols: 120, env: rec.env });
    const ws = workspace(t);
    const name = await startContainerSession(t, engine, pane, 'login-taken', ws);
    const holder = createServer((s) => s.end("the host's own server\n"));
    await new Promise<void>((r) => holder.listen({ host: '127.0.0.1', port: 0 }, () => r()));
    t.after(() => new Promise<void>((r) => holder.close(() => r())));
    const port = (holder.address() as AddressInfo).port;
    await offerLogin(pane, '127.0.0.1', port);
    await openOffered(pane, new RegExp(`…and forward localhost:${port} to ${name.slice(0, 24)}`));
    await pollUntil('the link to reach the opener', () => rec.opened().length === 1, { last: rec.opened });
    await pane.waitForText(`Not forwarding localhost:${port}`);
    // The log line is written after the notice is drawn.
    const log = await pollUntil('the failure in the host log', async () => {
      const l = (await readActions(pane.jackinHome, name)).filter((a) => a.action === 'login-forward');
      return l.length >= 1 ? l : undefined;
    });
    assert.deepEqual(
      log.map((a) => a.result),
      ['failed'],
    );
  });

  test(`${engine}: login callback: JACKIN_LOGIN_FORWARD=off opens the link and forwards nothing`, { timeout: 240_000 }, async (t) => {
    const rec = recordingOpener(t);
    const pane = await paneFor(t, { rows: 30, cols: 120, env: { ...rec.env, JACKIN_LOGIN_FORWARD: 'off' } });
    const ws = workspace(t);
    const name = await startContainerSession(t, engine, pane, 'login-off', ws);
    const port = await freePort();
    await offerLogin(pane, '127.0.0.1', port);
    const screen = await openOffered(pane, null);
    assert.doesNotMatch(screen, /forward localhost/);
    await pollUntil('the link to reach the opener', () => rec.opened().length === 1, { last: rec.opened });
    assert.equal(await probe(port), 'ECONNREFUSED');
    assert.deepEqual(
      (await readActions(pane.jackinHome, name)).filter((a) => a.action === 'login-forward'),
      [],
    );
  });

  test(`${engine}: jackin forward --via ${engine}: a 64 MiB download from the container's loopback arrives intact (SHA-256)`, {
    timeout: 240_000,
  }, async (t) => {
    // Each step is said as a diagnostic with its time, so a run that hits the test's timeout shows where it was.
    const started = Date.now();
    const step = (what: string): void => t.diagnostic(`${((Date.now() - started) / 1000).toFixed(1)} s: ${what}`);
    const pane = await paneFor(t, { rows: 30, cols: 120 });
    const ws = workspace(t);
    const data = randomBytes(64 * 1024 * 1024);
    writeFileSync(join(ws, 'big.bin'), data);
    chmodSync(join(ws, 'big.bin'), 0o644);
    step('starting the container session');
    const name = await startContainerSession(t, engine, pane, 'fwd-via', ws);
    step('starting the server in the container');
    const port = await freePort();
    await pane.typeLine(`clear; ${NODE_IN_CONTAINER} /workspace/login-server.cjs 127.0.0.1 ${port} /workspace/big.bin &`);
    await pane.waitForText('LISTENING-ON-127.0.0.1', { timeoutMs: 30_000 });
    const hostPort = await freePort();
    step('starting jackin forward');
    const child = spawn(process.execPath, [JACKIN_BIN, 'forward', name, `${hostPort}:${port}`, '--via', engine], {
      env: { ...process.env, JACKIN_HOME: pane.jackinHome },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (b: Buffer) => (out += b.toString()));
    child.stderr.on('data', (b: Buffer) => (err += b.toString()));
    t.after(() => stopChild(child, 'SIGINT'));
    await pollUntil('jackin forward to print its URL', () => out.includes(`http://localhost:${hostPort}/`), { timeoutMs: 30_000, last: () => err });
    step('GET through the forward');
    const r = await get(`http://localhost:${hostPort}/file`).catch((e: unknown) => {
      throw new Error(`${(e as Error).message}; jackin forward said: ${err}`, { cause: e });
    });
    assert.equal(r.status, 200);
    assert.equal(r.body.length, data.length);
    assert.equal(createHash('sha256').update(r.body).digest('hex'), createHash('sha256').update(data).digest('hex'));
    step('stopping jackin forward (SIGINT)');
    let timer: NodeJS.Timeout | undefined;
    await new Promise<void>((resolve, reject) => {
      timer = setTimeout(() => reject(new Error(`jackin forward did not exit within 20 s of SIGINT; it said: ${err}`)), 20_000);
      void stopChild(child, 'SIGINT').then(resolve);
    }).finally(() => clearTimeout(timer));
    assert.equal(child.exitCode, 0, err);
    step('checking the container');
    // Nothing else on the container side ever listens on the host.
    assert.equal(await probe(port), 'ECONNREFUSED');
    assert.ok(
      await execFileP(engine, ['inspect', '--type', 'container', '--format', '{{.Id}}', name], { timeout: 30_000 }).then(
        () => true,
        () => false,
      ),
    );
  });
}

for (const engine of ENGINES) {
  test(`${engine}: jackin forward NAME :PORT prints the host port it picked; several ports with --json; jackin ls and jackin-capsule ports in the container list each while it runs, none after Ctrl+C`, {
    timeout: 300_000,
  }, async (t) => {
    const pane = await paneFor(t, { rows: 30, cols: 120 });
    const ws = workspace(t);
    for (const [file, text] of [
      ['one.txt', 'served by the first\n'],
      ['two.txt', 'served by the second\n'],
    ] as const) {
      writeFileSync(join(ws, file), text);
      chmodSync(join(ws, file), 0o644);
    }
    const name = await startContainerSession(t, engine, pane, 'fwd-ports', ws);
    const [one, two] = [await freePort(), await freePort()];
    await pane.typeLine(
      `clear; ${NODE_IN_CONTAINER} /workspace/login-server.cjs 127.0.0.1 ${one} /workspace/one.txt & ${NODE_IN_CONTAINER} /workspace/login-server.cjs 127.0.0.1 ${two} /workspace/two.txt &`,
    );
    await pollUntil('both servers in the container', async () => ((await pane.capture()).match(/LISTENING-ON-127\.0\.0\.1/g) ?? []).length === 2, {
      timeoutMs: 30_000,
    });
    assert.deepEqual(await portsInContainer(engine, name), []);

    // :PORT, text: the one URL printed names the host port jackin picked.
    const single = spawnForward(t, pane, [name, `:${one}`]);
    const url = await pollUntil('jackin forward to print its URL', () => /^http:\/\/localhost:(\d+)\/$/m.exec(single.out())?.[0], {
      timeoutMs: 30_000,
      last: single.err,
    });
    const picked = Number(/:(\d+)\//.exec(url)![1]);
    assert.ok(picked >= 1024, url);
    assert.equal(single.out(), `${url}\n`);
    assert.equal((await get(`http://127.0.0.1:${picked}/file`)).body.toString(), 'served by the first\n');
    let ls = await lsForwards(pane, name);
    assert.deepEqual(ls.pairs, [[picked, one]]);
    assert.match(ls.text, new RegExp(`^forward  localhost:${picked} -> ${name}:${one} `, 'm'));
    assert.deepEqual(await portsInContainer(engine, name), [{ hostPort: picked, containerPort: one, url: `http://localhost:${picked}/`, kind: 'forward' }]);
    await interrupt(single);
    ls = await lsForwards(pane, name);
    assert.deepEqual(ls.pairs, []);
    assert.doesNotMatch(ls.text, /^forward /m);
    assert.deepEqual(await portsInContainer(engine, name), []);

    // Several at once, --json: one object per port, in the order given.
    const hostPort = await freePort();
    const several = spawnForward(t, pane, [name, `:${one}`, `${hostPort}:${two}`, '--json']);
    const objects = await pollUntil(
      'two JSON objects',
      () => {
        const l = several
          .out()
          .split('\n')
          .filter((x) => x !== '');
        return l.length === 2 ? l.map((x) => JSON.parse(x) as { ok: boolean; hostPort: number; containerPort: number; url: string }) : undefined;
      },
      { timeoutMs: 30_000, last: several.err },
    );
    assert.deepEqual(
      objects.map((o) => [o.ok, o.containerPort]),
      [
        [true, one],
        [true, two],
      ],
    );
    assert.equal(objects[1]!.hostPort, hostPort);
    const first = objects[0]!.hostPort;
    assert.ok(first >= 1024 && first !== hostPort, `picked ${first}`);
    assert.equal((await get(`http://127.0.0.1:${first}/file`)).body.toString(), 'served by the first\n');
    assert.equal((await get(`http://127.0.0.1:${hostPort}/file`)).body.toString(), 'served by the second\n');
    const expected = [
      [first, one],
      [hostPort, two],
    ].sort((a, b) => a[0]! - b[0]!);
    ls = await lsForwards(pane, name);
    assert.deepEqual(ls.pairs, expected);
    for (const [h, c] of expected) assert.match(ls.text, new RegExp(`^forward  localhost:${h} -> ${name}:${c} `, 'm'));
    assert.deepEqual(
      await portsInContainer(engine, name),
      expected.map(([h, c]) => ({ hostPort: h, containerPort: c, url: `http://localhost:${h}/`, kind: 'forward' })),
    );
    await interrupt(several);
    ls = await lsForwards(pane, name);
    assert.deepEqual(ls.pairs, []);
    assert.doesNotMatch(ls.text, /^forward /m);
    assert.deepEqual(await portsInContainer(engine, name), []);
  });
}
