import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ControlMessageDecoder, encodeControlMessage } from '../../protocol/index.ts';
import { helloFrame, TestClient } from '../../../test/helpers/capsule-client.ts';
import { pollUntil } from '../../../test/helpers/poll.ts';
import { CAPSULE_FEATURES, CapsuleServer, type CapsuleServerOptions } from './server.ts';
import { Session } from './session.ts';

/** The upstream `hello-minimal` vector (24x80, nothing set, context null), as raw bytes. */
const HELLO_MINIMAL = Buffer.from('010000001e00180050000000000000000000000000000000000000000000046e756c6c', 'hex');

interface Fixture {
  dir: string;
  socketPath: string;
  session: Session;
  server: CapsuleServer;
  clients: TestClient[];
  connect(size?: { rows: number; cols: number }, mirror?: boolean): Promise<TestClient>;
  attach(size?: { rows: number; cols: number }): Promise<TestClient>;
}

async function start(t: TestContext, program: string[], options: Partial<CapsuleServerOptions> = {}): Promise<Fixture> {
  const dir = mkdtempSync(join(tmpdir(), 'capsule-test-'));
  const socketPath = join(dir, 'jackin.sock');
  const [file, ...args] = program;
  const session = Session.spawn({ file: file!, args, env: { ...process.env, PS1: '$ ', TERM: 'xterm-256color' } });
  const server = await CapsuleServer.listen({
    socketPath,
    session,
    info: { name: 'test', program, workspace: dir, pid: process.pid },
    ...options,
  });
  const f: Fixture = {
    dir,
    socketPath,
    session,
    server,
    clients: [],
    async connect(size, mirror = true) {
      const c = await TestClient.connect(socketPath, size, mirror);
      f.clients.push(c);
      return c;
    },
    async attach(size = { rows: 24, cols: 80 }) {
      const c = await f.connect(size);
      c.send(helloFrame(size.rows, size.cols));
      await c.waitForFrame('Welcome');
      return c;
    },
  };
  t.after(async () => {
    for (const c of f.clients) c.close();
    await server.shutdown(null, 'test over');
    session.kill('SIGKILL');
    await session.exited;
    session.dispose();
    rmSync(dir, { recursive: true, force: true });
  });
  return f;
}

async function controlRequest(socketPath: string, request: unknown): Promise<unknown> {
  const s = connect(socketPath);
  const decoder = new ControlMessageDecoder();
  return new Promise((resolve, reject) => {
    s.on('data', (chunk: Buffer) => {
      const [m] = decoder.push(chunk);
      if (m !== undefined) {
        s.destroy();
        resolve(m);
      }
    });
    s.on('error', reject);
    s.write(encodeControlMessage(request));
  });
}

const BASH = ['bash', '--norc', '--noprofile', '-i'];

test('capsule server: the raw hello-minimal vector gets Welcome (with our features) then Output', async (t) => {
  const f = await start(t, BASH);
  const c = await f.connect();
  c.sendRaw(HELLO_MINIMAL);
  await pollUntil('Welcome and an Output frame', () => c.frames.length >= 2, { last: () => c.types() });
  assert.equal(c.frames[0]?.type, 'Welcome');
  assert.deepEqual(c.frames[0], { type: 'Welcome', sessions: 1, features: CAPSULE_FEATURES });
  assert.equal(c.frames[1]?.type, 'Output');
});

test('capsule server: input reaches bash and its output comes back; resize changes stty size', async (t) => {
  const f = await start(t, BASH);
  const c = await f.attach();
  c.send({ type: 'Input', bytes: Buffer.from('echo $((6*7))XY\r') });
  await c.waitForOutput('42XY');
  c.send({ type: 'Resize', rows: 31, cols: 101 });
  c.send({ type: 'Input', bytes: Buffer.from('stty size\r') });
  await c.waitForOutput('31 101');
  assert.equal(f.session.rows, 31);
  assert.equal(f.session.cols, 101);
});

test('capsule server: a reattach repaints the same screen the program shows', async (t) => {
  const f = await start(t, BASH);
  const a = await f.attach({ rows: 12, cols: 60 });
  a.send({ type: 'Input', bytes: Buffer.from('for i in 1 2 3; do echo row-$i; done\r') });
  await a.waitForOutput('row-3\r\n');
  await pollUntil('the prompt after row-3', () => /row-3\r\n.*\$ /s.test(a.output()));
  await f.session.settle();
  const before = f.session.screenLines();
  a.close();
  await pollUntil('the capsule to see the detach', () => !f.server.attached);
  const b = await f.attach({ rows: 12, cols: 60 });
  await pollUntil('the repaint to arrive', () => b.frames.some((x) => x.type === 'Output'));
  await f.session.settle();
  assert.deepEqual(await b.screenLines(), before);
  assert.deepEqual(await b.screenLines(), f.session.screenLines());
  assert.deepEqual(b.screen.cursor, f.session.cursor);
  assert.ok(
    before.some((l) => l === 'row-2'),
    `the screen shows the output: ${JSON.stringify(before)}`,
  );
});

test('capsule server: a second attach takes over and the first client gets Shutdown', async (t) => {
  const f = await start(t, BASH);
  const a = await f.attach();
  const b = await f.attach();
  await a.waitForFrame('Shutdown');
  await a.waitClosed();
  assert.equal(f.server.clients, 1);
  b.send({ type: 'Input', bytes: Buffer.from('echo still-$((1+1))\r') });
  await b.waitForOutput('still-2');
  assert.ok(!a.output().includes('still-2'), 'the old client gets nothing after the takeover');
});

test('capsule server: AttachControl Detach answers success then Shutdown, and the program keeps running', async (t) => {
  const f = await start(t, BASH);
  const a = await f.attach();
  a.send({ type: 'Input', bytes: Buffer.from('n=5\r') });
  a.send({ type: 'AttachControl', requestId: 77n, context: { v: 1 }, body: { kind: 'Detach' } });
  await a.waitForFrame('Shutdown');
  const types = a.types();
  assert.deepEqual(types.slice(types.indexOf('AttachControlResponse')), ['AttachControlResponse', 'Shutdown']);
  assert.deepEqual(
    a.frames.find((x) => x.type === 'AttachControlResponse'),
    { type: 'AttachControlResponse', requestId: 77n, result: 'success' },
  );
  await a.waitClosed();
  assert.equal(f.session.status, null);
  const b = await f.attach();
  b.send({ type: 'Input', bytes: Buffer.from('echo n=$n!\r') });
  await b.waitForOutput('n=5!');
});

test('capsule server: legacy Detach closes with Shutdown and a closed connection is a detach', async (t) => {
  const f = await start(t, BASH);
  const a = await f.attach();
  a.send({ type: 'Detach' });
  await a.waitForFrame('Shutdown');
  await a.waitClosed();
  const b = await f.attach();
  b.socket.end();
  await pollUntil('the capsule to see the closed connection', () => f.server.clients === 0);
  assert.equal(f.session.status, null, 'the program keeps running');
});

// Prints every input chunk as hex on its own line; 'f' enables focus reporting.
const FOCUS_PROBE = [
  process.execPath,
  '-e',
  `process.stdin.setRawMode(true);
   process.stdout.write('ready\\r\\n');
   process.stdin.on('data', (b) => {
     process.stdout.write('got:' + b.toString('hex') + '\\r\\n');
     if (b.includes(0x66)) process.stdout.write('\\x1b[?1004hfocus-on\\r\\n');
   });`,
];

test('capsule server: focus events reach the program only after it enabled ?1004', async (t) => {
  const f = await start(t, FOCUS_PROBE);
  const c = await f.attach();
  await pollUntil('the probe to start', async () => {
    await f.session.settle();
    return f.session.screenLines().some((l) => l.includes('ready'));
  });
  c.send({ type: 'FocusIn' });
  c.send({ type: 'AttachControl', requestId: 1n, context: { v: 1 }, body: { kind: 'FocusOut' } });
  c.send({ type: 'Input', bytes: Buffer.from('x') });
  await c.waitForOutput('got:78');
  assert.ok(!c.output().includes('got:1b5b'), `no focus bytes before ?1004h: ${c.output()}`);
  assert.deepEqual(
    c.frames.find((x) => x.type === 'AttachControlResponse'),
    { type: 'AttachControlResponse', requestId: 1n, result: 'success' },
  );
  c.send({ type: 'Input', bytes: Buffer.from('f') });
  await c.waitForOutput('focus-on');
  await pollUntil('the model to see ?1004h', () => f.session.modes.focusReporting);
  c.send({ type: 'FocusIn' });
  await c.waitForOutput('got:1b5b49');
  c.send({ type: 'AttachControl', requestId: 2n, context: { v: 1 }, body: { kind: 'FocusOut' } });
  await c.waitForOutput('got:1b5b4f');
});

test('capsule server: a framing error drops only that connection', async (t) => {
  const f = await start(t, BASH);
  const a = await f.attach();
  // Input declaring 4 GiB: over the 4 MiB cap, so the stream is lost.
  a.sendRaw(Buffer.from([0x03, 0xff, 0xff, 0xff, 0xff]));
  await a.waitClosed();
  assert.equal(f.session.status, null);
  const status = (await controlRequest(f.socketPath, { method: 'status' })) as Record<string, unknown>;
  assert.equal(status['ok'], true);
  const b = await f.attach();
  b.send({ type: 'Input', bytes: Buffer.from('echo alive-$((3*3))\r') });
  await b.waitForOutput('alive-9');
});

test('capsule server: payload errors are answered and skipped without dropping the client', async (t) => {
  const f = await start(t, BASH);
  const c = await f.attach();
  // AttachControl Detach with context {"v":2}: a bad context answers invalid-correlation and does nothing.
  const ctx = Buffer.from('{"v":2}');
  const payload = Buffer.alloc(1 + 8 + 2 + ctx.length);
  payload[0] = 1;
  payload.writeBigUInt64BE(9n, 1);
  payload.writeUInt16BE(ctx.length, 9);
  ctx.copy(payload, 11);
  const header = Buffer.alloc(5);
  header[0] = 0x0e;
  header.writeUInt32BE(payload.length, 1);
  c.sendRaw(Buffer.concat([header, payload]));
  // An image: the default sink rejects it.
  c.send({ type: 'AttachControl', requestId: 10n, context: { v: 1 }, body: { kind: 'ClipboardImage', format: 'png', bytes: Buffer.from('x') } });
  await pollUntil('two responses', () => c.frames.filter((x) => x.type === 'AttachControlResponse').length === 2, { last: () => c.types() });
  assert.deepEqual(
    c.frames.filter((x) => x.type === 'AttachControlResponse'),
    [
      { type: 'AttachControlResponse', requestId: 9n, result: 'invalid-correlation' },
      { type: 'AttachControlResponse', requestId: 10n, result: 'rejected' },
    ],
  );
  c.send({ type: 'Input', bytes: Buffer.from('echo ok-$((2+2))\r') });
  await c.waitForOutput('ok-4');
  assert.ok(!c.types().includes('Shutdown'));
});

test('capsule server: a connection that sends no complete first frame in time is closed', async (t) => {
  const f = await start(t, BASH, { handshakeTimeoutMs: 300 });
  // Connected at the same moment: the one that completes its Hello must outlive the others' deadline.
  const ok = await f.connect();
  const silent = await f.connect();
  const partial = await f.connect();
  ok.send(helloFrame());
  partial.sendRaw(HELLO_MINIMAL.subarray(0, 10));
  await silent.waitClosed(5000);
  await partial.waitClosed(5000);
  assert.deepEqual(silent.types(), []);
  assert.deepEqual(partial.types(), []);
  assert.equal(ok.closed, false);
  assert.equal(ok.frames[0]?.type, 'Welcome');
});

test('capsule server: a first frame that is not Hello closes the connection', async (t) => {
  const f = await start(t, BASH);
  const c = await f.connect();
  c.send({ type: 'Input', bytes: Buffer.from('echo nope\r') });
  await c.waitClosed();
  assert.deepEqual(c.types(), []);
});

test('capsule server: connections beyond the bound are refused', async (t) => {
  const f = await start(t, BASH, { maxConnections: 2 });
  const a = await f.connect();
  const b = await f.connect();
  await pollUntil('two pending connections', () => f.server.connections === 2);
  const c = await f.connect();
  await c.waitClosed();
  assert.equal(a.closed, false);
  assert.equal(b.closed, false);
});

test('capsule server: control channel answers status and rejects unknown methods', async (t) => {
  const f = await start(t, BASH);
  assert.deepEqual(await controlRequest(f.socketPath, { method: 'status' }), {
    ok: true,
    name: 'test',
    program: BASH,
    pid: process.pid,
    workspace: f.dir,
    attached: false,
    clients: 0,
  });
  await f.attach();
  const s = (await controlRequest(f.socketPath, { method: 'status' })) as Record<string, unknown>;
  assert.equal(s['attached'], true);
  assert.equal(s['clients'], 1);
  const u = (await controlRequest(f.socketPath, { method: 'nope' })) as Record<string, unknown>;
  assert.equal(u['ok'], false);
  assert.equal(u['code'], 'E_UNKNOWN_METHOD');
});

test('capsule server: a HostNotice is drawn for the operator; Repaint resends the screen', async (t) => {
  const f = await start(t, BASH);
  const c = await f.attach();
  c.send({ type: 'HostNotice', text: 'hello from the host' });
  await pollUntil('the notice drawn', () => c.output().includes('hello from the host'), { last: () => c.output().slice(-300) });
  c.send({ type: 'ExtHello', features: { repaint: 1 } });
  const outputs = c.frames.filter((x) => x.type === 'Output').length;
  c.send({ type: 'Repaint' });
  await pollUntil('a repaint', () => c.output().split('\x1b[?1049l\x1b[!p').length === 3 && c.frames.filter((x) => x.type === 'Output').length > outputs);
});

test('capsule server: 1 MiB of every byte value reaches a raw-mode program unchanged', async (t) => {
  const f = await start(t, ['sh', '-c', 'stty raw -echo; echo ready; head -c 1048576 | sha256sum']);
  const c = await f.attach();
  await c.waitForOutput('ready');
  const data = Buffer.alloc(1024 * 1024);
  for (let i = 0; i < data.length; i++) data[i] = (i * 7 + (i >> 8)) & 0xff;
  const { createHash } = await import('node:crypto');
  const expected = createHash('sha256').update(data).digest('hex');
  for (let off = 0; off < data.length; off += 65536) c.send({ type: 'Input', bytes: data.subarray(off, off + 65536) });
  await c.waitForOutput(expected, 30_000);
});

test('capsule server: a flood is gathered into frames larger than one PTY read, complete and in order', async (t) => {
  const lines = 100_000;
  // Through cat, which writes what it reads in large writes: seq alone, on a terminal, writes line by line, and
  // on a loaded machine (the suite runs two files at once) wrote too slowly to be a flood at all.
  const f = await start(t, ['sh', '-c', `read x; seq 1 ${lines} | cat; echo END-$x; read y; echo AFTER-$y`]);
  const c = await f.attach();
  c.send({ type: 'Input', bytes: Buffer.from('go\r') });
  await pollUntil('END-go', () => c.output().includes('END-go'), { timeoutMs: 30_000, last: () => c.output().length });
  const out = c.output();
  const body = out
    .slice(out.indexOf('go\r\n') + 4, out.indexOf('END-go'))
    .split('\r\n')
    .filter((l) => l !== '');
  assert.equal(body.length, lines);
  assert.ok(
    body.every((l, i) => l === String(i + 1)),
    'every line once, in order',
  );
  // A PTY read hands over about 4 KiB (measured: 4.4 KiB on average for this flood, one frame each, before
  // reads were gathered); gathered, the frames of a flood are several times larger.
  const sizes = c.frames.flatMap((fr) => (fr.type === 'Output' ? [fr.bytes.length] : []));
  const average = sizes.reduce((a, b) => a + b, 0) / sizes.length;
  assert.ok(average > 12 * 1024, `average Output frame ${Math.round(average)} bytes over ${sizes.length} frames`);
  // Nothing is left pending after the flood: what the program prints next arrives after it.
  c.send({ type: 'Input', bytes: Buffer.from('z\r') });
  await pollUntil('AFTER-z', () => c.output().includes('AFTER-z'), { timeoutMs: 10_000, last: () => c.output().slice(-80) });
  assert.ok(c.output().indexOf('END-go') < c.output().indexOf('AFTER-z'));
});

test('capsule server: output that is not a flood is sent read by read, never held back to be gathered', async (t) => {
  // A line every millisecond or two, as an agent streaming its answer: each read is small, so each goes out at once.
  const f = await start(t, ['sh', '-c', 'read x; i=0; while [ $i -lt 60 ]; do printf "line-%03d-$x\\n" $i; sleep 0.001; i=$((i+1)); done; echo DONE-$x']);
  const c = await f.attach();
  const before = c.frames.length;
  c.send({ type: 'Input', bytes: Buffer.from('go\r') });
  await pollUntil('DONE-go', () => c.output().includes('DONE-go'), { timeoutMs: 20_000, last: () => c.output().slice(-80) });
  const sizes = c.frames
    .slice(before)
    .flatMap((fr) => (fr.type === 'Output' ? [fr.bytes.length] : []))
    .sort((a, b) => a - b);
  const median = sizes[Math.floor(sizes.length / 2)] ?? 0;
  // One line is 13 bytes and its CR LF; gathered output would put several lines in most frames.
  assert.ok(median <= 16, `median Output frame ${median} bytes over ${sizes.length} frames`);
});

/**
 * Waits until `server.shutdown()` has told the connections (what a late Hello or ExtHello must arrive after):
 * it removes the socket first and tells them in the same turn, so: the socket gone, then one more turn.
 */
async function shutdownBegun(f: Fixture): Promise<void> {
  await pollUntil('the shutdown to remove the socket', () => !existsSync(f.socketPath));
  await new Promise((r) => setImmediate(r));
}

test("capsule server: a program that exits before the host's ExtHello still gets its status to the host", async (t) => {
  const f = await start(t, ['sh', '-c', 'read x; exit 5']);
  // Welcomed, but the host's ExtHello is late: the program exits first.
  const c = await f.attach();
  c.send({ type: 'Input', bytes: Buffer.from('go\r') });
  // What serve does when the program ends.
  const status = await f.session.exited;
  const shutdown = f.server.shutdown(status, `program exited with status ${status}`);
  await shutdownBegun(f);
  c.send({ type: 'ExtHello', features: { 'exit-status': 1 } });
  await c.waitForFrame('Shutdown');
  await shutdown;
  const kinds = c.frames.map((fr) => fr.type);
  assert.ok(kinds.includes('ExitStatus'), kinds.join(' '));
  assert.deepEqual(
    c.frames.find((fr) => fr.type === 'ExitStatus'),
    { type: 'ExitStatus', status: 5 },
  );
  assert.ok(kinds.indexOf('ExitStatus') < kinds.indexOf('Shutdown'));
});

test('capsule server: a host that connected but sent Hello only after the program exited is welcomed, then gets the status', async (t) => {
  const f = await start(t, ['sh', '-c', 'echo last words; exit 5']);
  // Connected (as `jackin run` does as soon as the socket answers), Hello not sent yet.
  const c = await f.connect();
  const status = await f.session.exited;
  const shutdown = f.server.shutdown(status, `program exited with status ${status}`);
  await shutdownBegun(f);
  c.send(helloFrame());
  await c.waitForFrame('Welcome');
  c.send({ type: 'ExtHello', features: { 'exit-status': 1 } });
  await c.waitForFrame('Shutdown');
  await shutdown;
  const kinds = c.frames.map((fr) => fr.type);
  assert.deepEqual(
    c.frames.find((fr) => fr.type === 'ExitStatus'),
    { type: 'ExitStatus', status: 5 },
    kinds.join(' '),
  );
  assert.ok(kinds.indexOf('Welcome') < kinds.indexOf('ExitStatus') && kinds.indexOf('ExitStatus') < kinds.indexOf('Shutdown'), kinds.join(' '));
  assert.match((await c.screenLines()).join('\n'), /last words/, 'the repaint shows what the program printed');
});

test('capsule server: a connection that never sends Hello does not hold a shutdown past its grace', async (t) => {
  const logged: string[] = [];
  const f = await start(t, ['sh', '-c', 'exit 0'], { log: (line) => logged.push(line) });
  const c = await f.connect();
  const status = await f.session.exited;
  await f.server.shutdown(status, 'program exited');
  await c.waitClosed();
  // Closed by the shutdown's Hello grace (HELLO_GRACE_MS), not left to the handshake timeout, which logs when it closes one.
  assert.deepEqual(
    logged.filter((l) => /sent no complete frame/.test(l)),
    [],
  );
});

test('capsule server: an upstream host (no ExtHello) still gets Shutdown when the program exits', async (t) => {
  const f = await start(t, ['sh', '-c', 'read x; exit 5']);
  const c = await f.attach();
  c.send({ type: 'Input', bytes: Buffer.from('go\r') });
  const status = await f.session.exited;
  await f.server.shutdown(status, `program exited with status ${status}`);
  await c.waitForFrame('Shutdown');
  assert.ok(!c.frames.some((fr) => fr.type === 'ExitStatus'));
});

test('capsule server: a client that does not read pauses the PTY, and no output is lost', async (t) => {
  const total = 2 * 1024 * 1024;
  const f = await start(t, ['sh', '-c', `read x; head -c ${total} /dev/zero | tr '\\000' a; echo; echo END-$x`]);
  const c = await f.connect(undefined, false);
  c.send(helloFrame());
  await c.waitForFrame('Welcome');
  c.socket.pause();
  c.send({ type: 'Input', bytes: Buffer.from('go\r') });
  await pollUntil('the PTY to be held for the client', () => f.session.holdReasons.some((r) => r.startsWith('client:')), {
    timeoutMs: 20_000,
    last: () => f.session.holdReasons,
  });
  c.socket.resume();
  await pollUntil('END-go after the client resumed', () => c.output().includes('END-go'), {
    timeoutMs: 30_000,
    last: () => ({ received: c.output().length, holds: f.session.holdReasons, status: f.session.status }),
  });
  const out = c.output();
  const body = out.slice(out.indexOf('go\r\n') + 4, out.lastIndexOf('\r\nEND-go'));
  assert.equal(body.length, total);
  assert.match(body, /^a+$/);
});

test('capsule server: an upstream host (no notice feature) sees its HostNotice drawn by the capsule, then repainted away', async (t) => {
  const f = await start(t, BASH);
  const c = await f.attach();
  await pollUntil('the first repaint', () => c.output().includes('\x1b[2J'));
  const before = c.output().length;
  c.send({ type: 'HostNotice', text: 'saved to Downloads' });
  await pollUntil('the notice drawn over the screen', () => c.output().slice(before).includes('saved to Downloads'));
  const drawn = c.output().slice(before);
  assert.match(drawn, /\x1b7[^\n]*?\x1b\[1;\d+H.*saved to Downloads.*\x1b8/, 'drawn in place, cursor saved and restored');
  // It expires by itself: a repaint from the screen model follows.
  await pollUntil('a repaint removing the notice', () => c.output().slice(before).split('\x1b[2J').length >= 2, { timeoutMs: 8000 });
});

test('capsule server: container text in a notice is inert (the notice control method, hostile text)', async (t) => {
  const f = await start(t, BASH);
  const c = await f.attach();
  await pollUntil('the first repaint', () => c.output().includes('\x1b[2J'));
  const before = c.output().length;
  const hostile = 'evil\x1b]0;pwned\x07name\n\x1b[2Jgone\x9b31m';
  const reply = (await controlRequest(f.socketPath, { method: 'notice', level: 'error', text: hostile })) as Record<string, unknown>;
  assert.equal(reply['ok'], true);
  await pollUntil('the notice', () => c.output().slice(before).includes('name'));
  const drawn = c.output().slice(before);
  assert.ok(drawn.includes('evil\\x1b]0;pwned\\x07name\\n\\x1b[2Jgone\\x9b31m'), JSON.stringify(drawn));
  assert.ok(!drawn.includes('\x07'), 'no BEL reached the terminal');
  assert.ok(!drawn.includes(']0;pwned'.replace(']', '\x1b]')), 'no OSC reached the terminal');
  const bad = (await controlRequest(f.socketPath, { method: 'notice', text: '' })) as Record<string, unknown>;
  assert.equal(bad['code'], 'E_BAD_REQUEST');
});

test('capsule server: a host that negotiated notices gets Notice frames instead of a drawing', async (t) => {
  const f = await start(t, BASH);
  const c = await f.attach();
  c.send({ type: 'ExtHello', features: { notice: 1 } });
  await pollUntil('the first repaint', () => c.output().includes('\x1b[2J'));
  const before = c.output().length;
  await controlRequest(f.socketPath, { method: 'notice', level: 'success', text: 'offered: out.png' });
  const n = await c.waitForFrame('Notice');
  assert.deepEqual(n, { type: 'Notice', level: 'success', text: 'offered: out.png' });
  assert.ok(!c.output().slice(before).includes('offered'), 'the capsule drew nothing itself');
});

test("capsule server: between RepliesHeld true and false the model answers the program's CSI 6 n and CSI 5 n, and only then", async (t) => {
  const f = await start(t, BASH);
  const c = await f.attach();
  c.send({ type: 'ExtHello', features: { 'held-replies': 1 } });
  const ask = (tag: string): Buffer =>
    Buffer.from(`stty -icanon -echo; printf '\\033[3;5H\\033[6n\\033[5n'; r=; read -r -t 2 -d n r; stty sane; echo "${tag}[\${r//$'\\e'/E}]"\r`);
  c.send({ type: 'HoldReplies', held: true });
  assert.deepEqual(await c.waitForFrame('RepliesHeld'), { type: 'RepliesHeld', held: true });
  c.send({ type: 'Input', bytes: ask('HE""LD') });
  await c.waitForOutput('HELD[E[3;5RE[0]');
  c.send({ type: 'HoldReplies', held: false });
  await pollUntil('RepliesHeld false', () => c.frames.some((x) => x.type === 'RepliesHeld' && !x.held));
  // The host's terminal answers again (this client answers nothing): the program's read times out.
  c.send({ type: 'Input', bytes: ask('FR""EE') });
  await c.waitForOutput('FREE[]');
});

test('capsule server: a host that announced `ports` is told the ports programs listen on, after their output; one that did not is told nothing', async (t) => {
  const program = [
    process.execPath,
    '-e',
    "process.stdin.once('data', () => { const s = require('net').createServer().listen(0, '127.0.0.1', () => console.log('PORT=' + s.address().port)); })",
  ];
  const f = await start(t, program);
  const silent = await f.attach();
  silent.send({ type: 'ExtHello', features: { repaint: 1 } });
  await new Promise((r) => setTimeout(r, 400));
  assert.ok(!silent.frames.some((x) => x.type === 'Ports'), 'no Ports without the feature');
  const c = await f.attach();
  c.send({ type: 'ExtHello', features: { ports: 1 } });
  // The first look, at once: what listens now.
  await pollUntil('a first Ports frame', () => c.frames.some((x) => x.type === 'Ports'), { last: () => c.types() });
  c.send({ type: 'Input', bytes: Buffer.from('go\r') });
  await c.waitForOutput('PORT=');
  const port = Number(/PORT=(\d+)/.exec(c.output())?.[1]);
  await pollUntil(`a Ports frame with ${port}`, () => c.frames.some((x) => x.type === 'Ports' && x.ports.includes(port)), {
    last: () => JSON.stringify(c.frames.filter((x) => x.type === 'Ports')),
  });
});
