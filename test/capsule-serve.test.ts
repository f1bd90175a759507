/** `jackin-capsule serve` and `attach-proxy` as processes: the real built binary, a real PTY and socket. */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, statSync, watch } from 'node:fs';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createServerFrameDecoder, encodeClientFrame, encodeControlMessage, ControlMessageDecoder, type ServerFrame } from '../src/protocol/index.ts';
import { helloFrame, TestClient } from './helpers/capsule-client.ts';
import { pollUntil } from './helpers/poll.ts';
import { CAPSULE_BIN } from './helpers/jackin-cli.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const START_TIMEOUT_MS = 20_000;

interface Capsule {
  child: ChildProcess;
  runDir: string;
  socketPath: string;
  stderr: () => string;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

function startCapsule(t: TestContext, program: string[], extra: string[] = [], runDir?: string): Capsule {
  const base = mkdtempSync(join(tmpdir(), 'capsule-proc-'));
  const dir = runDir ?? join(base, 'run');
  const child = spawn(process.execPath, [CAPSULE_BIN, 'serve', '--run-dir', dir, '--workspace', base, '--name', 'proc', ...extra, '--', ...program], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let err = '';
  child.stderr!.on('data', (b: Buffer) => (err += b.toString()));
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  t.after(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    rmSync(base, { recursive: true, force: true });
  });
  return { child, runDir: dir, socketPath: join(dir, 'jackin.sock'), stderr: () => err, exit };
}

async function waitListening(c: Capsule): Promise<void> {
  await pollUntil('the capsule socket', () => existsSync(c.socketPath) && existsSync(join(c.runDir, 'capsule.json')), {
    timeoutMs: START_TIMEOUT_MS,
    last: c.stderr,
  });
}

test('jackin-capsule serve: run dir 0700, socket 0600, capsule.json, and everything removed on exit', async (t) => {
  const c = startCapsule(t, ['sh', '-c', 'read x; exit $x']);
  await waitListening(c);
  assert.equal(statSync(c.runDir).mode & 0o777, 0o700);
  assert.equal(statSync(c.socketPath).mode & 0o777, 0o600);
  assert.ok(statSync(c.socketPath).isSocket());
  const infoPath = join(c.runDir, 'capsule.json');
  assert.equal(statSync(infoPath).mode & 0o777, 0o600);
  const info = JSON.parse(readFileSync(infoPath, 'utf8')) as Record<string, unknown>;
  assert.equal(info['pid'], c.child.pid);
  assert.equal(info['name'], 'proc');
  assert.deepEqual(info['program'], ['sh', '-c', 'read x; exit $x']);
  assert.equal(typeof info['startedAt'], 'string');

  // The program's exit status reaches a client that negotiated exit-status, and becomes the capsule's.
  const client = await TestClient.connect(c.socketPath);
  t.after(() => client.close());
  client.send(helloFrame());
  await client.waitForFrame('Welcome');
  client.send({ type: 'ExtHello', features: { 'exit-status': 1 } });
  client.send({ type: 'Input', bytes: Buffer.from('7\r') });
  await client.waitForFrame('Shutdown');
  const types = client.types();
  assert.deepEqual(types.slice(-2), ['ExitStatus', 'Shutdown']);
  assert.deepEqual(
    client.frames.find((f) => f.type === 'ExitStatus'),
    { type: 'ExitStatus', status: 7 },
  );
  // The capsule half-closed and waits for the host's end: a frame the host sends after Shutdown (it may not
  // have read it yet) is taken, not refused with EPIPE.
  const wrote = await new Promise<Error | null | undefined>((resolve) =>
    client.socket.write(encodeClientFrame({ type: 'Resize', rows: 30, cols: 100 }), resolve),
  );
  assert.equal(wrote ?? null, null, `a write after Shutdown failed: ${String(wrote)}`);
  assert.equal(client.closed, false);
  client.socket.end();
  assert.deepEqual(await c.exit, { code: 7, signal: null });
  assert.equal(existsSync(c.socketPath), false);
  assert.equal(existsSync(infoPath), false);
});

test('jackin-capsule serve: a program that ended before any host attached: the first host still gets its status', async (t) => {
  // `jackin run -- bash -c 'exit 7'`: the program can end before the host that started the capsule
  // connects. The capsule keeps its socket for that host (HELLO_GRACE_MS) instead of resetting it.
  const c = startCapsule(t, ['sh', '-c', 'exit 7']);
  await pollUntil('the capsule to see the program end', () => /program exited with status 7/.test(c.stderr()), { timeoutMs: START_TIMEOUT_MS, last: c.stderr });
  const client = await TestClient.connect(c.socketPath);
  t.after(() => client.close());
  client.send(helloFrame());
  await client.waitForFrame('Welcome');
  client.send({ type: 'ExtHello', features: { 'exit-status': 1 } });
  await client.waitForFrame('Shutdown');
  assert.deepEqual(
    client.frames.find((f) => f.type === 'ExitStatus'),
    { type: 'ExitStatus', status: 7 },
  );
  client.socket.end();
  assert.deepEqual(await c.exit, { code: 7, signal: null });
  assert.equal(existsSync(c.socketPath), false);
});

test('jackin-capsule serve: with no host at all, the capsule of an ended program exits after the wait for one', async (t) => {
  const c = startCapsule(t, ['sh', '-c', 'exit 3']);
  assert.deepEqual(await c.exit, { code: 3, signal: null });
  assert.equal(existsSync(c.socketPath), false);
  assert.equal(existsSync(join(c.runDir, 'capsule.json')), false);
});

test('jackin-capsule serve: a control request sent the moment the socket appears finds export and stage', async (t) => {
  // A client that connects as soon as the socket exists (`jackin export` right after `podman run -d`)
  // must not get E_UNKNOWN_METHOD: the methods are registered before the socket is created.
  const askOnce = (socketPath: string, request: object): Promise<Record<string, unknown>> =>
    new Promise((resolve, reject) => {
      const s = connect(socketPath);
      const decoder = new ControlMessageDecoder();
      s.on('error', reject);
      s.on('connect', () => s.write(encodeControlMessage(request)));
      s.on('data', (b: Buffer) => {
        const [reply] = decoder.push(b);
        if (reply !== undefined) {
          s.destroy();
          resolve(reply as Record<string, unknown>);
        }
      });
    });
  // bind() makes the file a moment before listen(): ECONNREFUSED then means "not yet", as for any client.
  const ask = async (socketPath: string, request: object): Promise<Record<string, unknown>> => {
    for (let tries = 0; ; tries++) {
      try {
        return await askOnce(socketPath, request);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'ECONNREFUSED' || tries > 200) throw e;
        await new Promise((r) => setTimeout(r, 1));
      }
    }
  };
  for (let i = 0; i < 16; i++) {
    const dir = mkdtempSync(join(tmpdir(), 'capsule-early-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const runDir = join(dir, 'run');
    mkdirSync(runDir, { mode: 0o700 });
    const socketPath = join(runDir, 'jackin.sock');
    // inotify sees the socket file the moment bind() makes it.
    const appeared = new Promise<void>((resolve) => {
      const w = watch(runDir, (_event, file) => {
        if (file === 'jackin.sock') {
          w.close();
          resolve();
        }
      });
    });
    const c = startCapsule(t, ['sh', '-c', 'read x'], [], runDir);
    await appeared;
    const [stage, exp] = await Promise.all([ask(socketPath, { method: 'stage', name: '../x', size: 1 }), ask(socketPath, { method: 'export', path: '' })]);
    assert.equal(stage['code'], 'E_BAD_STAGE_NAME', JSON.stringify(stage));
    assert.notEqual(exp['code'], 'E_UNKNOWN_METHOD', JSON.stringify(exp));
    c.child.kill('SIGTERM');
    await c.exit;
  }
});

test('jackin-capsule serve: the program starts at 80x24, or at --rows/--cols; a bad size is refused', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'capsule-size-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const sizeOf = async (name: string, extra: string[]): Promise<string> => {
    const out = join(dir, name);
    startCapsule(t, ['sh', '-c', `stty size > ${out}.tmp && mv ${out}.tmp ${out}; exec sleep 60`], extra);
    await pollUntil(`the program's size (${name})`, () => existsSync(out), { timeoutMs: START_TIMEOUT_MS });
    return readFileSync(out, 'utf8').trim();
  };
  assert.equal(await sizeOf('default', []), '24 80');
  assert.equal(await sizeOf('given', ['--rows', '41', '--cols', '133']), '41 133');
  for (const bad of [
    ['--rows', '0'],
    ['--cols', '70000'],
    ['--rows', 'x'],
  ]) {
    const c = startCapsule(t, ['true'], bad);
    const { code } = await c.exit;
    assert.notEqual(code, 0, `${bad.join(' ')} refused`);
    assert.match(c.stderr(), /expected/);
  }
});

test('jackin-capsule serve: a client without the extension gets only Shutdown; a signal-killed program exits 128+n', async (t) => {
  const c = startCapsule(t, ['sh', '-c', 'read x; kill -TERM $$']);
  await waitListening(c);
  const client = await TestClient.connect(c.socketPath);
  t.after(() => client.close());
  client.send(helloFrame());
  await client.waitForFrame('Welcome');
  client.send({ type: 'Input', bytes: Buffer.from('go\r') });
  await client.waitForFrame('Shutdown');
  assert.ok(!client.types().includes('ExitStatus'));
  assert.deepEqual(await c.exit, { code: 128 + 15, signal: null });
});

test('jackin-capsule serve: SIGTERM ends the program and removes the socket', async (t) => {
  const c = startCapsule(t, ['sleep', '1000']);
  await waitListening(c);
  c.child.kill('SIGTERM');
  const r = await c.exit;
  assert.equal(r.code, 128 + 1, `the program got SIGHUP: ${c.stderr()}`);
  assert.equal(existsSync(c.socketPath), false);
});

test('jackin-capsule serve: a stale socket is replaced, a live one is refused with E_CAPSULE_RUNNING', async (t) => {
  const first = startCapsule(t, ['sleep', '1000']);
  await waitListening(first);
  const second = startCapsule(t, ['sleep', '1000'], [], first.runDir);
  const r = await second.exit;
  assert.equal(r.code, 1);
  assert.match(second.stderr(), /E_CAPSULE_RUNNING/);
  assert.equal(second.stderr().trim().split('\n').length, 1, 'one line on stderr');
  first.child.kill('SIGKILL');
  await first.exit;
  assert.ok(existsSync(first.socketPath), 'SIGKILL leaves the socket file behind');
  // Nothing answers on it any more: the next capsule replaces it.
  const third = startCapsule(t, ['sh', '-c', 'exit 0'], [], first.runDir);
  assert.deepEqual(await third.exit, { code: 0, signal: null });
  assert.doesNotMatch(third.stderr(), /E_CAPSULE_RUNNING/);
});

test('jackin-capsule serve: a socket path that is a live non-capsule listener is not stolen', async (t) => {
  const base = mkdtempSync(join(tmpdir(), 'capsule-live-'));
  t.after(() => rmSync(base, { recursive: true, force: true }));
  const other = createServer(() => undefined);
  await new Promise<void>((r) => other.listen(join(base, 'jackin.sock'), r));
  t.after(() => other.close());
  const c = startCapsule(t, ['sleep', '1000'], [], base);
  assert.equal((await c.exit).code, 1);
  assert.match(c.stderr(), /E_CAPSULE_RUNNING/);
});

/** The two relays `attach-proxy` can run on: Node (bin/jackin-capsule.js), and perl where the image has it
 * (container-bin/attach-proxy.pl, which hands what it does not handle to the Node relay). */
const PERL_RELAY = join(ROOT, 'container-bin', 'attach-proxy.pl');
const RELAYS = {
  node: (args: string[]): string[] => [process.execPath, CAPSULE_BIN, ...args],
  perl: (args: string[]): string[] => ['perl', PERL_RELAY, process.execPath, CAPSULE_BIN, ...args],
} as const;
type Relay = keyof typeof RELAYS;

function spawnRelay(relay: Relay, args: string[], env?: NodeJS.ProcessEnv): ChildProcess {
  const [cmd, ...rest] = RELAYS[relay](args);
  return spawn(cmd!, rest, { stdio: ['pipe', 'pipe', 'pipe'], env: env ?? process.env });
}

/**
 * Starts a relay to `socketPath`; with `decode` (a capsule on the other end) its output is also read as
 * frames. Node gives a child socket pairs for stdio; `pipeOut` puts a pipe on the relay's stdout instead, as
 * `podman exec -i` does, read 4 KiB at a time (`dd bs=4096`): a pipe with one page free is writable, and a
 * blocking write of more than that would wait there.
 */
function runProxy(
  socketPath: string,
  relay: Relay,
  decode = true,
  pipeOut = false,
): { child: ChildProcess; frames: ServerFrame[]; raw: Buffer[]; stdoutEnded: Promise<void>; exit: Promise<number | null> } {
  const args = ['attach-proxy', '--socket', socketPath];
  const child = pipeOut
    ? spawn('sh', ['-c', '"$@" | dd bs=4096 status=none', 'sh', ...RELAYS[relay](args)], { stdio: ['pipe', 'pipe', 'pipe'], detached: true })
    : spawnRelay(relay, args);
  const frames: ServerFrame[] = [];
  const raw: Buffer[] = [];
  const decoder = createServerFrameDecoder();
  child.stdout!.on('data', (b: Buffer) => {
    raw.push(b);
    if (decode) for (const item of decoder.push(b)) if (item.ok) frames.push(item.frame);
  });
  const stdoutEnded = new Promise<void>((r) => child.stdout!.once('end', () => r()));
  const exit = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  return { child, frames, raw, stdoutEnded, exit };
}

for (const relay of Object.keys(RELAYS) as Relay[]) {
  test(`jackin-capsule attach-proxy (${relay}): relays a whole session byte for byte and ends when the capsule closes`, async (t) => {
    const c = startCapsule(t, ['bash', '--norc', '--noprofile', '-i']);
    await waitListening(c);
    const p = runProxy(c.socketPath, relay);
    t.after(() => p.child.kill('SIGKILL'));
    const output = (): string => Buffer.concat(p.frames.flatMap((f) => (f.type === 'Output' ? [f.bytes] : []))).toString('latin1');
    p.child.stdin!.write(encodeClientFrame(helloFrame()));
    await pollUntil('Welcome through the proxy', () => p.frames[0]?.type === 'Welcome', { timeoutMs: START_TIMEOUT_MS });
    // The relay that answered is the one named: the perl relay did not hand this session to Node. By its
    // executable, not /proc/PID/comm: Node 24 names its main thread, so its comm is `MainThread`.
    assert.equal(basename(realpathSync(`/proc/${p.child.pid}/exe`)).replace(/[\d.]+$/, ''), relay);
    p.child.stdin!.write(encodeClientFrame({ type: 'Input', bytes: Buffer.from('echo via-$((40+2))\r') }));
    await pollUntil('echo through the proxy', () => output().includes('via-42'), { last: output });
    p.child.stdin!.write(encodeClientFrame({ type: 'Detach' }));
    await pollUntil('Shutdown through the proxy', () => p.frames.some((f) => f.type === 'Shutdown'));
    // The capsule closed its side: the proxy closes stdout even though our stdin is still open...
    await p.stdoutEnded;
    // ...and exits once stdin ends too.
    p.child.stdin!.end();
    assert.equal(await p.exit, 0);
    assert.equal(c.child.exitCode, null, 'the program keeps running after the detach');
  });

  test(`jackin-capsule attach-proxy (${relay}): stdin EOF half-closes, and the reply still comes back`, async (t) => {
    const c = startCapsule(t, ['sleep', '1000']);
    await waitListening(c);
    const p = runProxy(c.socketPath, relay);
    t.after(() => p.child.kill('SIGKILL'));
    // Write the request and end stdin at once: the reply must still arrive after our EOF.
    p.child.stdin!.end(encodeControlMessage({ method: 'status' }));
    await p.stdoutEnded;
    assert.equal(await p.exit, 0);
    const [reply] = new ControlMessageDecoder().push(Buffer.concat(p.raw));
    assert.equal((reply as Record<string, unknown>)['ok'], true);
    assert.equal((reply as Record<string, unknown>)['name'], 'proc');
  });

  test(`jackin-capsule attach-proxy (${relay}): a missing socket is one line on stderr and a non-zero exit`, async (t) => {
    const base = mkdtempSync(join(tmpdir(), 'capsule-none-'));
    t.after(() => rmSync(base, { recursive: true, force: true }));
    const child = spawnRelay(relay, ['attach-proxy', '--socket', join(base, 'nope.sock')]);
    let err = '';
    child.stderr!.on('data', (b: Buffer) => (err += b.toString()));
    const code = await new Promise<number | null>((r) => child.once('exit', (c) => r(c)));
    assert.equal(code, 1);
    assert.match(err, /^jackin-capsule: E_SOCKET_CONNECT: cannot connect to .*nope\.sock: ENOENT/);
    assert.equal(err.trim().split('\n').length, 1);
  });

  test(`jackin-capsule attach-proxy (${relay}): 4 MiB each way at once, byte for byte, through an echoing socket`, async (t) => {
    const base = mkdtempSync(join(tmpdir(), 'capsule-relay-'));
    const socketPath = join(base, 'echo.sock');
    let received = 0;
    const server = createServer({ allowHalfOpen: true }, (s) => {
      s.on('data', (b: Buffer) => (received += b.length));
      s.pipe(s); // echoes, and ends its side when ours ends
    });
    await new Promise<void>((r) => server.listen(socketPath, r));
    t.after(() => {
      server.close();
      rmSync(base, { recursive: true, force: true });
    });
    const sent = randomBytes(4 << 20);
    const p = runProxy(socketPath, relay, false);
    t.after(() => p.child.kill('SIGKILL'));
    // Written in one go: the relay must keep reading stdin while its stdout backs up, and the reverse.
    p.child.stdin!.end(sent);
    await p.stdoutEnded;
    assert.equal(await p.exit, 0);
    assert.equal(received, sent.length);
    assert.ok(Buffer.concat(p.raw).equals(sent), 'what came back is what went in');
  });

  test(`jackin-capsule attach-proxy (${relay}): keys still go up while the way down is stalled (a flood the reader has not taken yet)`, async (t) => {
    const base = mkdtempSync(join(tmpdir(), 'capsule-relay-'));
    const socketPath = join(base, 'flood.sock');
    let upstream = '';
    const server = createServer((s) => {
      // More than the socket's and the pipes' buffers hold together: the relay's writes to stdout back up.
      s.write(Buffer.alloc(8 << 20, 0x61));
      s.on('data', (b: Buffer) => (upstream += b.toString()));
      s.on('error', () => undefined);
    });
    await new Promise<void>((r) => server.listen(socketPath, r));
    t.after(() => {
      server.close();
      rmSync(base, { recursive: true, force: true });
    });
    const p = runProxy(socketPath, relay, false, true);
    t.after(() => {
      // The shell, the relay and `dd`: their own process group, started detached for this.
      if (p.child.exitCode === null) process.kill(-p.child.pid!, 'SIGKILL');
    });
    p.child.stdout!.pause(); // the operator's side is slow: nothing more is read from the relay for now
    // Stalled: our side's buffer stays full for five polls, so `dd` and then the relay's pipe back up.
    let full = 0;
    await pollUntil(
      'the flood to stall',
      () => {
        full = p.child.stdout!.readableLength >= p.child.stdout!.readableHighWaterMark ? full + 1 : 0;
        return full >= 5;
      },
      { last: () => p.child.stdout!.readableLength },
    );
    p.child.stdin!.write('\x03'); // Ctrl+C
    await pollUntil('the key to reach the capsule while the flood waits', () => upstream === '\x03', { timeoutMs: 5000, last: () => JSON.stringify(upstream) });
    assert.ok(Buffer.concat(p.raw).length < 8 << 20, 'the flood was still waiting when the key went up');
    // The reader catches up: the whole flood arrives, and the relay (and its `dd`) end with the input.
    p.child.stdout!.resume();
    await pollUntil('the whole flood', () => Buffer.concat(p.raw).length === 8 << 20, { last: () => Buffer.concat(p.raw).length });
    p.child.stdin!.end();
    assert.equal(await p.exit, 0);
  });

  test(`jackin-capsule attach-proxy (${relay}): a reader that goes away stops only the way down; stdin still reaches the capsule`, async (t) => {
    const base = mkdtempSync(join(tmpdir(), 'capsule-relay-'));
    const socketPath = join(base, 'talk.sock');
    let upstream = '';
    let upstreamEnded!: () => void;
    const ended = new Promise<void>((r) => (upstreamEnded = r));
    const server = createServer({ allowHalfOpen: true }, (s) => {
      s.on('data', (b: Buffer) => {
        upstream += b.toString();
        // Only the first write is echoed: a reply nobody reads would make the relay's close a reset.
        if (upstream === 'first;') s.write(b);
      });
      s.on('end', () => {
        upstreamEnded();
        s.end();
      });
      s.on('error', () => undefined);
    });
    await new Promise<void>((r) => server.listen(socketPath, r));
    t.after(() => {
      server.close();
      rmSync(base, { recursive: true, force: true });
    });
    const p = runProxy(socketPath, relay, false);
    t.after(() => p.child.kill('SIGKILL'));
    p.child.stdin!.write('first;');
    await pollUntil('the first echo', () => Buffer.concat(p.raw).toString() === 'first;');
    p.child.stdout!.destroy(); // our reading end of the relay's stdout is gone
    p.child.stdin!.write('second;');
    await pollUntil('the second write upstream', () => upstream === 'first;second;', { last: () => upstream });
    p.child.stdin!.end('third;');
    await ended;
    assert.equal(upstream, 'first;second;third;');
    assert.equal(await p.exit, 0);
  });

  test(`jackin-capsule attach-proxy (${relay}): with no --socket, the socket is $JACKIN_RUN_DIR/jackin.sock`, async (t) => {
    const base = mkdtempSync(join(tmpdir(), 'capsule-relay-'));
    const server = createServer((s) => s.end('hello from the run dir'));
    await new Promise<void>((r) => server.listen(join(base, 'jackin.sock'), r));
    t.after(() => {
      server.close();
      rmSync(base, { recursive: true, force: true });
    });
    const child = spawnRelay(relay, ['attach-proxy'], { ...process.env, JACKIN_RUN_DIR: base });
    t.after(() => child.kill('SIGKILL'));
    let out = '';
    child.stdout!.on('data', (b: Buffer) => (out += b.toString()));
    const exit = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
    await new Promise<void>((r) => child.stdout!.once('end', () => r()));
    child.stdin!.end();
    assert.equal(await exit, 0);
    assert.equal(out, 'hello from the run dir');
  });
}

test('jackin-capsule attach-proxy (perl): what it does not handle itself goes to the Node relay', async () => {
  // --help is the full CLI's; a terminal or file on stdio is left to Node's streams.
  const help = spawnSync('perl', [PERL_RELAY, process.execPath, CAPSULE_BIN, 'attach-proxy', '--help'], { encoding: 'utf8' });
  assert.equal(help.status, 0);
  assert.match(help.stdout, /Usage: jackin-capsule attach-proxy/);
  const notPipe = spawnSync('perl', [PERL_RELAY, process.execPath, CAPSULE_BIN, 'attach-proxy', '--socket', '/nonexistent/x.sock'], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  assert.equal(notPipe.status, 1);
  assert.match(notPipe.stderr, /^jackin-capsule: E_SOCKET_CONNECT: cannot connect to \/nonexistent\/x\.sock/);
  // A path too long for sun_path: Node's relay reports it (perl would have connected to a cut-off path).
  const long = `/tmp/${'x'.repeat(120)}/jackin.sock`;
  const tooLong = spawnSync('perl', [PERL_RELAY, process.execPath, CAPSULE_BIN, 'attach-proxy', '--socket', long], { encoding: 'utf8' });
  assert.equal(tooLong.status, 1);
  assert.match(tooLong.stderr, /^jackin-capsule: E_SOCKET_CONNECT: cannot connect to \/tmp\/x{120}\/jackin\.sock/);
  // A Node that cannot start is one line naming it.
  const noNode = spawnSync('perl', [PERL_RELAY, '/nonexistent/node', CAPSULE_BIN, 'attach-proxy', '--bogus'], { encoding: 'utf8' });
  assert.equal(noNode.status, 1);
  assert.match(noNode.stderr, /^jackin-capsule: E_INTERNAL: cannot start \/nonexistent\/node: No such file or directory\n$/);
});
