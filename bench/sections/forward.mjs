// Issue 36: `jackin forward` against the same HTTP request made directly on the capsule's loopback, same
// run: a small request's time to first byte (a new connection each time, as a browser's callback makes it)
// and a 64 MiB download's throughput. First with a local capsule (its loopback is the host's), so the direct
// request is exactly the one a program inside would make; the forward adds the host listener, one new
// capsule connection per TCP connection, the forward request and the framed pump on both sides. Then in a
// real Podman container (started as `jackin run --image` starts one): the same requests made inside the
// container, on its own loopback, against the host's through `jackin forward` over the mounted socket, and
// through an offered forward (issue 48): a `jackin attach` session is offered the server's port and the
// bench, as the operator, chooses Forward port N in its palette.
import { execFile, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { get } from 'node:http';
import { createConnection, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { glibcTestImage } from '../../test/helpers/podman-image.mjs';
import { fmt, quantile } from '../lib/stats.mjs';
import { startContainer } from './container.mjs';
import { spawnOnPty } from '../lib/pty-process.mjs';
import { median, startCapsule } from './export.mjs';

export const id = 'forward';
export const title = 'Forward: a forwarded HTTP request against the same request on the capsule side';

const root = fileURLToPath(new URL('../..', import.meta.url));
const JACKIN = join(root, 'bin', 'jackin.js');
const MiB = 1024 * 1024;

// The container side's server, in a process of its own: /small answers 2 bytes, /big 64 MiB.
const SERVER = `
const http = require('node:http');
const big = require('node:crypto').randomBytes(64 * 1024 * 1024);
const s = http.createServer((req, res) => {
  if (req.url.split('?')[0] === '/big') { res.writeHead(200, { 'content-length': big.length }); res.end(big); }
  else { res.writeHead(200, { 'content-length': 2 }); res.end('ok'); }
});
s.listen(0, '127.0.0.1', () => process.stdout.write(String(s.address().port) + '\\n'));
`;

const execFileP = promisify(execFile);
/** The server's port inside the container (its loopback is its own). */
const CONTAINER_PORT = 18080;

// The same server on a fixed port, as the container's program; and a client that makes the requests inside
// the container and prints their times as JSON: node client.cjs PORT SMALL BIG.
const CONTAINER_SERVER = SERVER.replace("s.listen(0, '127.0.0.1'", `s.listen(${CONTAINER_PORT}, '127.0.0.1'`);
const CONTAINER_CLIENT = `
const { get } = require('node:http');
const [port, small, big] = process.argv.slice(2).map(Number);
// The host side's own request() below, so both sides time a request the same way.
${request.toString()}
(async () => {
  const out = { small: [], big: [] };
  await request(port, '/small');
  for (let i = 0; i < small; i++) out.small.push((await request(port, '/small')).ttfb);
  for (let i = 0; i < big; i++) { const r = await request(port, '/big'); if (r.bytes !== 64 * 1024 * 1024) throw new Error('short download ' + r.bytes); out.big.push(r.total); }
  process.stdout.write(JSON.stringify(out));
})();
`;

function freePort() {
  return new Promise((resolve) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

/** One GET on a new connection: seconds to the first body byte, and to the last, and the byte count. */
function request(port, path) {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    let first = 0;
    let bytes = 0;
    get({ host: '127.0.0.1', port, path, agent: false }, (res) => {
      res.on('data', (b) => {
        if (bytes === 0) first = performance.now();
        bytes += b.length;
      });
      res.on('end', () => resolve({ ttfb: (first - t0) / 1000, total: (performance.now() - t0) / 1000, bytes }));
      res.on('error', reject);
    }).on('error', reject);
  });
}

/**
 * One routed login callback (issue 48): the program in the container offers a login link whose redirect_uri
 * is its server's port and whose state is `state`; the attached session opens it from its palette (Open
 * offered link, confirmed), which registers it with the per-port callback router; then the callback, as the
 * browser would send it, goes through the router to the container's server. The link opening is not timed.
 */
async function routedCallback(attached, container, state, path) {
  const callback = `http://localhost:${CONTAINER_PORT}${path}`;
  const link = `https://idp.example/oauth/authorize?client_id=bench&response_type=code&redirect_uri=${encodeURIComponent(callback)}&state=${state}`;
  await execFileP('podman', ['exec', container, 'jackin-capsule', 'open-url', '--', link]);
  const step = async (marker, keys) => {
    let drawn = '';
    const seen = attached.consume(
      (b) => {
        drawn += b.toString('latin1');
        return drawn.includes(marker);
      },
      { timeoutMs: 30_000 },
    );
    attached.write(keys);
    await seen.catch((e) => {
      throw new Error(`${e.message} (${marker}); the session drew ${JSON.stringify(drawn.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, ' ').slice(-800))}`);
    });
  };
  // The entry names the forward once the palette has read the offer back (before that, 'u' does nothing).
  await step(`(forwards port ${CONTAINER_PORT})`, '\x1c');
  await step('jackin: confirm', 'u');
  // The prompt takes no Enter until it is armed (a key typed before it showed never answers it): Enter again
  // every half second until the forward is said.
  let after = '';
  const seen = attached.consume(
    (b) => {
      after += b.toString('latin1');
      return after.includes(`Forwarding localhost:${CONTAINER_PORT}`);
    },
    { timeoutMs: 30_000 },
  );
  let answered = false;
  seen.then(
    () => (answered = true),
    () => (answered = true),
  );
  while (!answered) {
    await new Promise((resolve) => setTimeout(resolve, 500));
    if (!answered) attached.write('\r');
  }
  await seen.catch((e) => {
    throw new Error(`${e.message}; the session drew ${JSON.stringify(after.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, ' ').slice(-600))}`);
  });
  const r = await request(CONTAINER_PORT, `${path}?code=bench&state=${state}`);
  // Its forward closes once this exchange is done and the connection idle: the next link binds the port again.
  for (let i = 0; i < 200 && (await portOpen(CONTAINER_PORT)); i++) await new Promise((resolve) => setTimeout(resolve, 50));
  return r;
}

/** True while something listens on the host's loopback port. */
function portOpen(port) {
  return new Promise((resolve) => {
    const s = createConnection({ host: '127.0.0.1', port }, () => {
      s.destroy();
      resolve(true);
    });
    s.on('error', () => resolve(false));
  });
}

function firstLine(child, what) {
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (b) => {
      out += b.toString();
      const nl = out.indexOf('\n');
      if (nl >= 0) resolve(out.slice(0, nl));
    });
    child.once('exit', (code) => reject(new Error(`${what} exited ${code}`)));
  });
}

export async function run({ quick, log }) {
  const smallRuns = quick ? 20 : 100;
  const bigRuns = quick ? 2 : 5;
  const base = mkdtempSync(join(tmpdir(), 'jackin-bench-forward-'));
  const home = join(base, 'home');
  const ws = join(base, 'ws');
  mkdirSync(ws, { recursive: true });
  const env = { ...process.env, JACKIN_HOME: home };
  const data = { smallRuns, bigRuns, bigMiB: 64 };
  let capsule;
  let server;
  let forward;
  try {
    capsule = await startCapsule(home, 'fwd', ws);
    server = spawn(process.execPath, ['-e', SERVER], { stdio: ['ignore', 'pipe', 'inherit'] });
    const port = Number(await firstLine(server, 'the server'));
    const hostPort = await freePort();
    forward = spawn(process.execPath, [JACKIN, 'forward', 'fwd', `${hostPort}:${port}`], { env, stdio: ['ignore', 'pipe', 'inherit'] });
    await firstLine(forward, 'jackin forward');
    // Direct and forwarded alternate, after a discarded warm-up of each.
    const direct = { small: [], big: [] };
    const forwarded = { small: [], big: [] };
    await request(port, '/small');
    await request(hostPort, '/small');
    for (let i = 0; i < smallRuns; i++) {
      direct.small.push((await request(port, '/small')).ttfb);
      forwarded.small.push((await request(hostPort, '/small')).ttfb);
    }
    await request(hostPort, '/big');
    for (let i = 0; i < bigRuns; i++) {
      const d = await request(port, '/big');
      const f = await request(hostPort, '/big');
      if (d.bytes !== 64 * MiB || f.bytes !== 64 * MiB) throw new Error(`short download: ${d.bytes} / ${f.bytes}`);
      direct.big.push(d.total);
      forwarded.big.push(f.total);
    }
    data.directTtfbMs = median(direct.small) * 1000;
    data.forwardTtfbMs = median(forwarded.small) * 1000;
    data.directTtfbP95Ms = quantile(direct.small, 0.95) * 1000;
    data.forwardTtfbP95Ms = quantile(forwarded.small, 0.95) * 1000;
    data.directBigSeconds = median(direct.big);
    data.forwardBigSeconds = median(forwarded.big);
    log(
      `forward: TTFB direct ${fmt(data.directTtfbMs, 2)} ms, forwarded ${fmt(data.forwardTtfbMs, 2)} ms; 64 MiB direct ${fmt(data.directBigSeconds, 3)} s, forwarded ${fmt(data.forwardBigSeconds, 3)} s`,
    );
  } finally {
    forward?.kill('SIGINT');
    server?.kill('SIGKILL');
    capsule?.kill('SIGKILL');
    await new Promise((r) => setTimeout(r, 200));
    rmSync(base, { recursive: true, force: true });
  }
  try {
    data.container = await inContainer({ quick, log });
  } catch (e) {
    data.container = { error: e instanceof Error ? e.message : String(e) };
    log(`forward: in a container: failed: ${data.container.error}`);
  }
  return { data, markdown: render(data) };
}

/**
 * The container part: the server is the container's program; in each round the client inside the container
 * makes its requests, then the host makes the same through `jackin forward` (after a discarded warm-up).
 */
async function inContainer({ quick, log }) {
  const rounds = quick ? 2 : 5;
  const smallPerRound = quick ? 10 : 20;
  const dataDir = mkdtempSync(join(tmpdir(), 'jackin-bench-forward-ctr-'));
  writeFileSync(join(dataDir, 'server.cjs'), CONTAINER_SERVER);
  writeFileSync(join(dataDir, 'client.cjs'), CONTAINER_CLIENT);
  const image = (await glibcTestImage()).ref;
  let c;
  let forward;
  let attached;
  try {
    c = await startContainer(image, ['/opt/jackin/node', join(dataDir, 'server.cjs')], dataDir);
    const inside = (small, big) =>
      execFileP('podman', ['exec', c.name, '/opt/jackin/node', '/bench-data/client.cjs', String(CONTAINER_PORT), String(small), String(big)], {
        maxBuffer: 1 << 20,
      });
    // The server starts with the container: wait until it answers inside (the client's warm-up request).
    for (let i = 0; ; i++) {
      try {
        await inside(0, 0);
        break;
      } catch (e) {
        if (i > 50) throw e;
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    const hostPort = await freePort();
    forward = spawn(process.execPath, [JACKIN, 'forward', c.name, `${hostPort}:${CONTAINER_PORT}`], {
      env: { ...process.env, JACKIN_HOME: c.home },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    await firstLine(forward, 'jackin forward');
    await request(hostPort, '/small');
    await request(hostPort, '/big');
    // The offered forward: an attached session is told of the server's port (listening before it attached),
    // and the palette entry is chosen; its host port is the one the forward records for `jackin ls`.
    // The opener is `true`: the browser is the bench itself.
    attached = spawnOnPty(process.execPath, [JACKIN, 'attach', c.name], {
      env: { ...process.env, JACKIN_HOME: c.home, JACKIN_PASTE_KEY: 'none', JACKIN_OPENER: '/bin/true' },
    });
    await attached.waitForText(`Forward port ${CONTAINER_PORT}`, { timeoutMs: 30_000 }).catch(() => undefined);
    // Routed login callbacks, before the offered forward takes the port: a warm-up, then one small and one
    // 64 MiB callback per round, each through a link of its own (a state each).
    const routed = { small: [], big: [] };
    await routedCallback(attached, c.name, 'warm', '/small');
    for (let r = 0; r < rounds; r++) {
      routed.small.push((await routedCallback(attached, c.name, `s${r}`, '/small')).ttfb);
      const b = await routedCallback(attached, c.name, `b${r}`, '/big');
      if (b.bytes !== 64 * MiB) throw new Error(`short download through the routed callback: ${b.bytes}`);
      routed.big.push(b.total);
    }
    attached.write('\x1c');
    await attached.waitForText(`Forward port ${CONTAINER_PORT}`, { timeoutMs: 30_000 });
    attached.write(`/forward port ${CONTAINER_PORT}\r`);
    const { liveForwards } = await import('../../dist/host/forward/forward-registry.js');
    let offerPort = 0;
    for (let i = 0; offerPort === 0; i++) {
      if (i > 300) throw new Error('the offered forward was not recorded within 15 s');
      offerPort = (await liveForwards(c.home)).find((f) => f.kind === 'offer' && f.containerPort === CONTAINER_PORT)?.hostPort ?? 0;
      if (offerPort === 0) await new Promise((r) => setTimeout(r, 50));
    }
    let screen = '';
    attached.consume((b) => void (screen += b.toString('latin1')), { timeoutMs: 600_000 }).catch(() => undefined);
    try {
      await request(offerPort, '/small');
    } catch (e) {
      await new Promise((r) => setTimeout(r, 500));
      throw new Error(`${e.message}; screen ${JSON.stringify(screen.slice(-1500))}`);
    }
    await request(offerPort, '/big');
    const measured = { small: [], big: [] };
    const forwarded = { small: [], big: [] };
    const offered = { small: [], big: [] };
    for (let r = 0; r < rounds; r++) {
      const got = JSON.parse((await inside(smallPerRound, 1)).stdout);
      measured.small.push(...got.small);
      measured.big.push(...got.big);
      for (let i = 0; i < smallPerRound; i++) forwarded.small.push((await request(hostPort, '/small')).ttfb);
      const f = await request(hostPort, '/big');
      if (f.bytes !== 64 * MiB) throw new Error(`short download through the forward: ${f.bytes}`);
      forwarded.big.push(f.total);
      for (let i = 0; i < smallPerRound; i++) offered.small.push((await request(offerPort, '/small')).ttfb);
      const o = await request(offerPort, '/big');
      if (o.bytes !== 64 * MiB) throw new Error(`short download through the offered forward: ${o.bytes}`);
      offered.big.push(o.total);
    }
    const d = {
      rounds,
      smallRuns: measured.small.length,
      bigRuns: measured.big.length,
      insideTtfbMs: median(measured.small) * 1000,
      forwardTtfbMs: median(forwarded.small) * 1000,
      insideTtfbP95Ms: quantile(measured.small, 0.95) * 1000,
      forwardTtfbP95Ms: quantile(forwarded.small, 0.95) * 1000,
      insideBigSeconds: median(measured.big),
      forwardBigSeconds: median(forwarded.big),
      offerTtfbMs: median(offered.small) * 1000,
      offerTtfbP95Ms: quantile(offered.small, 0.95) * 1000,
      offerBigSeconds: median(offered.big),
      routedRuns: routed.small.length,
      routedTtfbMs: median(routed.small) * 1000,
      routedBigSeconds: median(routed.big),
    };
    log(
      `forward: in a container: TTFB inside ${fmt(d.insideTtfbMs, 2)} ms, forwarded ${fmt(d.forwardTtfbMs, 2)} ms; 64 MiB inside ${fmt(d.insideBigSeconds, 3)} s, forwarded ${fmt(d.forwardBigSeconds, 3)} s; offered forward: TTFB ${fmt(d.offerTtfbMs, 2)} ms, 64 MiB ${fmt(d.offerBigSeconds, 3)} s; routed callback: TTFB ${fmt(d.routedTtfbMs, 2)} ms, 64 MiB ${fmt(d.routedBigSeconds, 3)} s`,
    );
    return d;
  } finally {
    forward?.kill('SIGINT');
    attached?.kill();
    await new Promise((r) => setTimeout(r, 200));
    await c?.remove();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

function renderContainer(c) {
  if (c === undefined) return [];
  if (c.error !== undefined) return ['', `In a Podman container: failed: ${c.error}`];
  const insideRate = 64 / c.insideBigSeconds;
  const forwardRate = 64 / c.forwardBigSeconds;
  const offerRate = 64 / c.offerBigSeconds;
  return [
    '',
    `In a real Podman container (started as \`jackin run --image\` starts one), the same requests made inside the container on its own loopback (a client run by \`podman exec\`) against the host's through \`jackin forward\` over the mounted socket, and through an offered forward (the port offered to a \`jackin attach\` session and forwarded from its palette, issue 48), in ${c.rounds} alternating rounds:`,
    '',
    `| measure | inside the container | through \`jackin forward\` | ratio | through an offered forward | ratio |`,
    `|---|---:|---:|---:|---:|---:|`,
    `| time to first byte, new connection (ms, median of ${c.smallRuns}) | ${fmt(c.insideTtfbMs, 2)} | ${fmt(c.forwardTtfbMs, 2)} | +${fmt(c.forwardTtfbMs - c.insideTtfbMs, 2)} ms | ${fmt(c.offerTtfbMs, 2)} | +${fmt(c.offerTtfbMs - c.insideTtfbMs, 2)} ms |`,
    `| time to first byte, p95 (ms) | ${fmt(c.insideTtfbP95Ms, 2)} | ${fmt(c.forwardTtfbP95Ms, 2)} | | ${fmt(c.offerTtfbP95Ms, 2)} | |`,
    `| 64 MiB download (s, median of ${c.bigRuns}) | ${fmt(c.insideBigSeconds, 3)} | ${fmt(c.forwardBigSeconds, 3)} | | ${fmt(c.offerBigSeconds, 3)} | |`,
    `| throughput (MiB/s) | ${fmt(insideRate, 0)} | ${fmt(forwardRate, 0)} | ${fmt(forwardRate / insideRate, 2)}× | ${fmt(offerRate, 0)} | ${fmt(offerRate / insideRate, 2)}× |`,
    '',
    `A routed login callback (issue 48): the program offers a login link whose redirect_uri is its server's port, the attached session opens it from its palette, and the callback carrying its state goes through the per-port \`jackin callback-router\` and the session to the container's server; one link per request, its opening not timed (${c.routedRuns} of each):`,
    '',
    `| measure | inside the container | through the callback router | ratio |`,
    `|---|---:|---:|---:|`,
    `| time to first byte, new connection (ms, median) | ${fmt(c.insideTtfbMs, 2)} | ${fmt(c.routedTtfbMs, 2)} | +${fmt(c.routedTtfbMs - c.insideTtfbMs, 2)} ms |`,
    `| 64 MiB callback (s, median) | ${fmt(c.insideBigSeconds, 3)} | ${fmt(c.routedBigSeconds, 3)} | |`,
    `| throughput (MiB/s) | ${fmt(insideRate, 0)} | ${fmt(64 / c.routedBigSeconds, 0)} | ${fmt(64 / c.routedBigSeconds / insideRate, 2)}× |`,
    '',
  ];
}

function render(d) {
  const directRate = d.bigMiB / d.directBigSeconds;
  const forwardRate = d.bigMiB / d.forwardBigSeconds;
  return [
    `| measure | on the capsule side | through \`jackin forward\` | ratio |`,
    `|---|---:|---:|---:|`,
    `| time to first byte, new connection (ms, median of ${d.smallRuns}) | ${fmt(d.directTtfbMs, 2)} | ${fmt(d.forwardTtfbMs, 2)} | +${fmt(d.forwardTtfbMs - d.directTtfbMs, 2)} ms |`,
    `| time to first byte, p95 (ms) | ${fmt(d.directTtfbP95Ms, 2)} | ${fmt(d.forwardTtfbP95Ms, 2)} | |`,
    `| ${d.bigMiB} MiB download (s, median of ${d.bigRuns}) | ${fmt(d.directBigSeconds, 3)} | ${fmt(d.forwardBigSeconds, 3)} | |`,
    `| throughput (MiB/s) | ${fmt(directRate, 0)} | ${fmt(forwardRate, 0)} | ${fmt(forwardRate / directRate, 2)}× |`,
    '',
    "Direct and forwarded requests alternate in the same run, after a discarded warm-up of each; every small request opens a new connection (as a login callback does), so the forward's time to first byte includes its new connection to the capsule and the `forward` request. The capsule is local: the direct request is the one a program in the capsule would make.",
    ...renderContainer(d.container),
    '',
  ].join('\n');
}
