/**
 * `jackin forward` end to end without a container: the built CLI against a real `jackin-capsule serve`
 * (real Unix socket, real attach-proxy relay), real TCP servers on the loopback standing in for the
 * container's, and real HTTP clients playing the browser. (test/forward-container-e2e.test.ts does the same
 * across a real container's network namespace.)
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { createServer as createHttpServer, get as httpGet } from 'node:http';
import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { startExportCapsule, type ExportCapsule } from './helpers/export-capsule.ts';
import { CAPSULE_BIN, JACKIN_BIN } from './helpers/jackin-cli.ts';
import { shellQuote } from './helpers/tmux.ts';
import { pollUntil } from './helpers/poll.ts';
import { freePort } from './helpers/free-port.ts';
import { stopChild } from './helpers/stop-child.ts';
import { encodeControlMessage } from '../src/protocol/index.ts';
import { ReplyReader } from '../src/transport/control-call.ts';
import { connectSocket } from '../src/transport/socket.ts';

const MiB = 1024 * 1024;

async function listening(t: TestContext, server: Server, host: string, port = 0): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host, port, ipv6Only: host === '::1' }, () => resolve());
  });
  t.after(() => new Promise<void>((r) => server.close(() => r())));
  return (server.address() as AddressInfo).port;
}

interface Forward {
  readonly child: ChildProcess;
  readonly url: string;
  stdout(): string;
  stderr(): string;
}

/**
 * The `jackin forward` processes of a test, stopped with Ctrl+C (SIGINT) when it ends. Made before the
 * capsule, so that they stop (and write their last log line) before its directories are removed.
 */
function forwardKids(t: TestContext): ChildProcess[] {
  const kids: ChildProcess[] = [];
  t.after(() => Promise.all(kids.map((k) => stopChild(k, 'SIGINT'))));
  return kids;
}

/** Starts `jackin forward` and waits for its URL on stdout. */
async function startForward(kids: ChildProcess[], c: ExportCapsule, args: string[]): Promise<Forward> {
  const child = spawn(process.execPath, [JACKIN_BIN, 'forward', c.name, ...args], { env: c.env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout!.on('data', (b: Buffer) => (out += b.toString()));
  child.stderr!.on('data', (b: Buffer) => (err += b.toString()));
  kids.push(child);
  const url = await pollUntil(
    'jackin forward to print its URL',
    () => {
      if (child.exitCode !== null) throw new Error(`jackin forward exited ${child.exitCode}: ${err}`);
      return /^(http:\/\/localhost:\d+\/)$/m.exec(out)?.[1] ?? /"url":"([^"]+)"/.exec(out)?.[1];
    },
    { timeoutMs: 20_000, last: () => err },
  );
  return { child, url, stdout: () => out, stderr: () => err };
}

/** GET `url`; resolves with the status and the SHA-256 and length of the body. */
function fetchDigest(url: string): Promise<{ status: number; bytes: number; sha256: string }> {
  return new Promise((resolve, reject) => {
    httpGet(url, (res) => {
      const h = createHash('sha256');
      let bytes = 0;
      res.on('data', (b: Buffer) => {
        bytes += b.length;
        h.update(b);
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, bytes, sha256: h.digest('hex') }));
      res.on('error', reject);
    }).on('error', reject);
  });
}

function sha(b: Buffer): string {
  return createHash('sha256').update(b).digest('hex');
}

test('jackin forward: a 64 MiB download from the capsule side arrives intact (SHA-256), and the log records the forward', async (t) => {
  const kids = forwardKids(t);
  const c = await startExportCapsule(t, 'fwd-big-i36');
  const body = randomBytes(64 * MiB);
  const server = createHttpServer((_req, res) => {
    res.writeHead(200, { 'content-length': body.length });
    res.end(body);
  });
  const port = await listening(t, server, '127.0.0.1');
  const hostPort = await freePort();
  const f = await startForward(kids, c, [`${hostPort}:${port}`]);
  assert.equal(f.url, `http://localhost:${hostPort}/`);
  const got = await fetchDigest(`http://127.0.0.1:${hostPort}/big`);
  assert.deepEqual(got, { status: 200, bytes: body.length, sha256: sha(body) });
  const ls = await c.jackin(['ls', '--json']);
  const me = (JSON.parse(ls.stdout) as Array<{ name: string; forwards?: Array<Record<string, unknown>> }>).find((i) => i.name === c.name);
  assert.deepEqual(
    me?.forwards?.map((x) => [x['hostPort'], x['containerPort'], x['kind']]),
    [[hostPort, port, 'forward']],
  );
  const plainLs = await c.jackin(['ls']);
  assert.match(plainLs.stdout, new RegExp(`localhost:${hostPort} -> ${c.name}:${port}`));
  const log = await c.jackin(['log', '--json']);
  assert.match(log.stdout, new RegExp(`"action":"forward","target":"localhost:${hostPort} -> ${c.name}:${port}"`));
  // The forwarded bytes are nowhere in what the host wrote.
  assert.ok(!log.stdout.includes(body.subarray(0, 32).toString('hex')));
  await stopChild(f.child, 'SIGINT');
  assert.equal(f.child.exitCode, 0, f.stderr());
  const after = await c.jackin(['ls', '--json']);
  assert.deepEqual((JSON.parse(after.stdout) as Array<{ name: string; forwards?: unknown[] }>).find((i) => i.name === c.name)?.forwards, []);
});

test('jackin forward reaches a server that listens on ::1 only, over an exec relay (attach-proxy), with one --verbose line per connection', async (t) => {
  const kids = forwardKids(t);
  const c = await startExportCapsule(t, 'fwd-v6-i36');
  const server = createHttpServer((req, res) => res.end(`v6 only: ${req.url}`));
  const port = await listening(t, server, '::1');
  const hostPort = await freePort();
  const relay = [process.execPath, CAPSULE_BIN, 'attach-proxy', '--socket', c.socket].map(shellQuote).join(' ');
  const f = await startForward(kids, c, [`${hostPort}:${port}`, '--exec', relay, '--verbose']);
  for (const path of ['/a', '/b']) {
    const body = await new Promise<string>((resolve, reject) => {
      // A new connection each time (no keep-alive agent), so each gets its own line.
      httpGet({ host: '127.0.0.1', port: hostPort, path, agent: false }, (res) => {
        let s = '';
        res.on('data', (b: Buffer) => (s += b.toString()));
        res.on('end', () => resolve(s));
      }).on('error', reject);
    });
    assert.equal(body, `v6 only: ${path}`);
  }
  await pollUntil('both connections reported', () => (f.stderr().match(/^jackin: connection \d+ /gm) ?? []).length === 2, { last: f.stderr });
  // One line each, when it ends: where it came from, the loopback it reached, how it ended.
  const lines = f
    .stderr()
    .split('\n')
    .filter((l) => /^jackin: connection /.test(l));
  assert.equal(lines.length, 2, f.stderr());
  for (const line of lines) assert.match(line, /^jackin: connection \d+ from 127\.0\.0\.1:\d+ to \[::1\]: closed \(\d+ bytes sent, \d+ received\)$/);
});

test('jackin forward carries a half-close: the client ends its side and still receives the whole answer', async (t) => {
  const kids = forwardKids(t);
  const c = await startExportCapsule(t, 'fwd-half-i36');
  // An echo server that answers only after the client's EOF, then ends.
  const server = createServer({ allowHalfOpen: true }, (s) => {
    const parts: Buffer[] = [];
    s.on('data', (b: Buffer) => parts.push(b));
    s.on('end', () => s.end(Buffer.concat(parts).reverse()));
  });
  const port = await listening(t, server, '127.0.0.1');
  const hostPort = await freePort();
  await startForward(kids, c, [`${hostPort}:${port}`]);
  const sent = randomBytes(3 * MiB + 5);
  const got = await new Promise<Buffer>((resolve, reject) => {
    const s: Socket = connect({ host: '127.0.0.1', port: hostPort, allowHalfOpen: true }, () => s.end(sent));
    const parts: Buffer[] = [];
    s.on('data', (b: Buffer) => parts.push(b));
    s.on('end', () => resolve(Buffer.concat(parts)));
    s.on('error', reject);
  });
  assert.equal(sha(got), sha(Buffer.from(sent).reverse()));
});

test('jackin forward: nothing listening in the capsule resets the connection and says E_FORWARD_REFUSED; a reset server is a reset', async (t) => {
  const kids = forwardKids(t);
  const c = await startExportCapsule(t, 'fwd-refused-i36');
  const closedPort = await freePort();
  const hostPort = await freePort();
  const f = await startForward(kids, c, [`${hostPort}:${closedPort}`]);
  const outcome = await new Promise<string>((resolve) => {
    const s = connect({ host: '127.0.0.1', port: hostPort });
    s.on('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? 'error'));
    s.on('close', () => resolve('closed'));
  });
  assert.ok(outcome === 'ECONNRESET' || outcome === 'closed', outcome);
  await pollUntil('the refusal on stderr', () => /E_FORWARD_REFUSED/.test(f.stderr()), { last: f.stderr });

  // A server that resets its connection: the host's client sees a reset too, not a clean end.
  const resetter = createServer((s) => s.resetAndDestroy());
  const port = await listening(t, resetter, '127.0.0.1');
  const hostPort2 = await freePort();
  await startForward(kids, c, [`${hostPort2}:${port}`]);
  const code = await new Promise<string>((resolve) => {
    const s = connect({ host: '127.0.0.1', port: hostPort2 }, () => s.write('hello'));
    s.on('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? 'error'));
    s.on('end', () => resolve('end'));
  });
  assert.equal(code, 'ECONNRESET');
});

test('jackin forward: a taken host port, a port below 1024 without a host port above it, a bad port: refused with codes, nothing bound', async (t) => {
  const c = await startExportCapsule(t, 'fwd-ports-i36');
  const holder = createServer();
  const taken = await listening(t, holder, '127.0.0.1');
  const r = await c.jackin(['forward', c.name, `${taken}:8080`, '--json']);
  assert.equal(r.code, 1, r.stderr);
  assert.equal((JSON.parse(r.stdout.trim()) as { code: string }).code, 'E_FORWARD_PORT_TAKEN');
  for (const spec of ['80', '80:80', '0', '70000', 'x:1', '8080:']) {
    const bad = await c.jackin(['forward', c.name, spec]);
    assert.equal(bad.code, 2, `${spec}: ${bad.stderr}`);
    assert.match(bad.stderr, /E_FORWARD_PORT|jackin:/);
  }
  const low = await c.jackin(['forward', c.name, '80']);
  assert.match(low.stderr, /name a host port above it/);
});

test('jackin forward holds at most 32 connections at once; the 33rd is reset and reported E_FORWARD_LIMIT', async (t) => {
  const kids = forwardKids(t);
  const c = await startExportCapsule(t, 'fwd-limit-i36');
  const held: Socket[] = [];
  const server = createServer((s) => {
    s.on('error', () => {});
    held.push(s);
  });
  t.after(() => held.forEach((s) => s.destroy()));
  const port = await listening(t, server, '127.0.0.1');
  const hostPort = await freePort();
  const f = await startForward(kids, c, [`${hostPort}:${port}`, '--verbose']);
  const clients: Socket[] = [];
  t.after(() => clients.forEach((s) => s.destroy()));
  for (let i = 0; i < 32; i++) {
    const s = connect({ host: '127.0.0.1', port: hostPort });
    s.on('error', () => {});
    clients.push(s);
  }
  await pollUntil('32 connections reach the server', () => held.length === 32, { timeoutMs: 30_000, last: () => held.length });
  const extra = connect({ host: '127.0.0.1', port: hostPort });
  clients.push(extra);
  const how = await new Promise<string>((resolve) => {
    extra.on('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? 'error'));
    extra.on('close', () => resolve('closed'));
  });
  assert.ok(how === 'ECONNRESET' || how === 'closed', how);
  await pollUntil('the limit on stderr', () => /E_FORWARD_LIMIT/.test(f.stderr()), { last: f.stderr });
  assert.equal(held.length, 32);
});

test('a hostile host cannot make the capsule connect elsewhere: a forward request naming an address is refused, nothing connects', async (t) => {
  const c = await startExportCapsule(t, 'fwd-hostile-host-i36');
  let connections = 0;
  const bait = createServer((s) => {
    connections++;
    s.destroy();
  });
  const port = await listening(t, bait, '127.0.0.1');
  for (const request of [
    { method: 'forward', port, host: '127.0.0.2' },
    { method: 'forward', port, address: '10.0.0.1' },
    { method: 'forward', port: String(port) },
    { method: 'forward', port: 0 },
  ]) {
    const sock = await connectSocket(c.socket);
    const reply = await new Promise<unknown>((resolve, reject) => {
      const reader = new ReplyReader();
      sock.on('data', (b: Buffer) => {
        const got = reader.push(b);
        if (got !== undefined) resolve(got.value);
      });
      sock.on('error', reject);
      sock.write(encodeControlMessage(request));
    });
    sock.destroy();
    assert.equal((reply as { code?: string }).code, 'E_BAD_REQUEST', JSON.stringify(request));
  }
  assert.equal(connections, 0);
});

/** GET `url` with a fresh connection; resolves with the body. */
function getBody(url: string): Promise<string> {
  return new Promise((resolve, reject) => {
    httpGet(url, { agent: false }, (res) => {
      let s = '';
      res.on('data', (b: Buffer) => (s += b.toString()));
      res.on('end', () => resolve(s));
    }).on('error', reject);
  });
}

test('jackin forward --name NAME P1 :P2 --json forwards several ports at once (one JSON object each, :P picks a free host port); text mode prints one URL per port', async (t) => {
  const kids = forwardKids(t);
  const c = await startExportCapsule(t, 'fwd-multi-i45');
  const one = await listening(
    t,
    createHttpServer((req, res) => res.end(`one ${req.url}`)),
    '127.0.0.1',
  );
  const two = await listening(
    t,
    createHttpServer((req, res) => res.end(`two ${req.url}`)),
    '127.0.0.1',
  );
  const hostPort = await freePort();
  const child = spawn(process.execPath, [JACKIN_BIN, 'forward', '--name', c.name, `${hostPort}:${one}`, `:${two}`, '--json'], {
    env: c.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  kids.push(child);
  let out = '';
  let err = '';
  child.stdout!.on('data', (b: Buffer) => (out += b.toString()));
  child.stderr!.on('data', (b: Buffer) => (err += b.toString()));
  const lines = await pollUntil(
    'two JSON objects on stdout',
    () => {
      if (child.exitCode !== null) throw new Error(`jackin forward exited ${child.exitCode}: ${err}`);
      const l = out.split('\n').filter((x) => x !== '');
      return l.length === 2 ? l : undefined;
    },
    { timeoutMs: 20_000, last: () => err },
  );
  const [a, b] = lines.map((l) => JSON.parse(l) as { ok: boolean; instance: string; url: string; hostPort: number; containerPort: number });
  assert.deepEqual([a!.ok, a!.instance, a!.hostPort, a!.containerPort, a!.url], [true, c.name, hostPort, one, `http://localhost:${hostPort}/`]);
  assert.equal(b!.ok, true);
  assert.equal(b!.containerPort, two);
  assert.ok(b!.hostPort >= 1024 && b!.hostPort !== hostPort, `picked ${b!.hostPort}`);
  assert.equal(b!.url, `http://localhost:${b!.hostPort}/`);
  assert.equal(await getBody(`http://127.0.0.1:${hostPort}/x`), 'one /x');
  assert.equal(await getBody(`http://127.0.0.1:${b!.hostPort}/y`), 'two /y');
  const ls = await c.jackin(['ls', '--json']);
  const me = (JSON.parse(ls.stdout) as Array<{ name: string; forwards?: Array<Record<string, unknown>> }>).find((i) => i.name === c.name);
  assert.deepEqual(
    me?.forwards?.map((x) => [x['hostPort'], x['containerPort']]).sort(),
    [
      [hostPort, one],
      [b!.hostPort, two],
    ].sort(),
  );
  await stopChild(child, 'SIGINT');
  assert.equal(child.exitCode, 0, err);
  const log = await c.jackin(['log', '--name', c.name, '--json']);
  for (const [h, p] of [
    [hostPort, one],
    [b!.hostPort, two],
  ])
    assert.match(log.stdout, new RegExp(`"target":"localhost:${h} -> ${c.name}:${p}","result":"ok","detail":"closed"`));

  // Text mode: one URL per port on stdout, the picked one included.
  const text = await startForward(kids, c, [`:${one}`, `:${two}`]);
  await pollUntil(
    'two URLs',
    () =>
      text
        .stdout()
        .split('\n')
        .filter((l) => /^http:\/\/localhost:\d+\/$/.test(l)).length === 2,
    { last: text.stderr },
  );
  const urls = text
    .stdout()
    .split('\n')
    .filter((l) => l !== '');
  assert.equal(await getBody(`${urls[0]!.replace('localhost', '127.0.0.1')}a`), 'one /a');
  assert.equal(await getBody(`${urls[1]!.replace('localhost', '127.0.0.1')}b`), 'two /b');
});

test('jackin forward: a second port that cannot be bound fails the command and keeps none of them', async (t) => {
  const c = await startExportCapsule(t, 'fwd-multi-taken-i45');
  const taken = await listening(t, createServer(), '127.0.0.1');
  const first = await freePort();
  const r = await c.jackin(['forward', c.name, `${first}:80`, `${taken}:81`, '--json']);
  assert.equal(r.code, 1, r.stderr);
  assert.equal((JSON.parse(r.stdout.trim().split('\n').at(-1)!) as { code: string }).code, 'E_FORWARD_PORT_TAKEN');
  // Nothing was announced for the first port, and it is free again.
  assert.equal(r.stdout.trim().split('\n').length, 1, r.stdout);
  const probe = createServer();
  assert.equal(await listening(t, probe, '127.0.0.1', first), first);
});

/** `jackin-capsule ports` as a program in the capsule runs it (its run directory given, as JACKIN_RUN_DIR would). */
function capsulePorts(c: ExportCapsule, json: boolean): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [CAPSULE_BIN, 'ports', '--run-dir', c.runDir, ...(json ? ['--json'] : [])], { env: c.env }, (e, stdout, stderr) =>
      resolve({ code: e === null ? 0 : typeof e.code === 'number' ? e.code : -1, stdout, stderr }),
    );
  });
}

test('jackin-capsule ports in the capsule lists the host URLs of live forwards (text and --json), none before and none once Ctrl+C or SIGKILL ended them', async (t) => {
  const kids = forwardKids(t);
  const c = await startExportCapsule(t, 'fwd-ports-i48');
  const none = await capsulePorts(c, false);
  assert.equal(none.code, 0, none.stderr);
  assert.match(none.stdout, /^no port of the host leads to this container now/);
  assert.equal((await capsulePorts(c, true)).stdout, '[]\n');

  const one = await listening(t, createServer(), '127.0.0.1');
  const two = await listening(t, createServer(), '127.0.0.1');
  const hostPort = await freePort();
  const f = await startForward(kids, c, [`:${one}`, `${hostPort}:${two}`, '--json']);
  const printed = await pollUntil('two JSON objects', () => {
    const l = f
      .stdout()
      .split('\n')
      .filter((x) => x !== '');
    return l.length === 2 ? l.map((x) => JSON.parse(x) as { hostPort: number; containerPort: number; url: string }) : undefined;
  });
  // Listed before the URLs were printed: no poll needed.
  const listed = JSON.parse((await capsulePorts(c, true)).stdout) as Array<Record<string, unknown>>;
  assert.deepEqual(
    listed,
    printed.map((p) => ({ hostPort: p.hostPort, containerPort: p.containerPort, url: p.url, kind: 'forward' })).sort((a, b) => a.hostPort - b.hostPort),
  );
  const text = await capsulePorts(c, false);
  for (const p of printed)
    assert.match(text.stdout, new RegExp(`^http://localhost:${p.hostPort}/ -> container port ${p.containerPort} \\(jackin forward\\)$`, 'm'));
  await stopChild(f.child, 'SIGINT');
  assert.equal(f.child.exitCode, 0, f.stderr());
  assert.equal((await capsulePorts(c, true)).stdout, '[]\n');

  // A jackin that is killed cannot withdraw anything: its closed connection does.
  const killed = await startForward(kids, c, [`:${one}`]);
  assert.equal((JSON.parse((await capsulePorts(c, true)).stdout) as unknown[]).length, 1);
  await stopChild(killed.child, 'SIGKILL');
  await pollUntil('the killed forward to leave the list', async () => (await capsulePorts(c, true)).stdout === '[]\n');
});
