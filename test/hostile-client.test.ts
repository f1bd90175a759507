/**
 * Hostile clients against the real capsule (issue 8): malformed and oversized frames, a client that stops
 * mid-frame, many concurrent connections, a flood of images. The capsule and its program must keep
 * running, a well-behaved client must still get a working session, and nothing may be written outside
 * <run>/clipboard/.
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { encodeClientFrame, type ClientFrame } from '../src/protocol/index.ts';
import { helloFrame, TestClient } from './helpers/capsule-client.ts';
import { pollUntil } from './helpers/poll.ts';
import { CAPSULE_BIN } from './helpers/jackin-cli.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const PNG = readFileSync(join(ROOT, 'test', 'fixtures', 'images', 'sample.png'));

interface Capsule {
  child: ChildProcess;
  base: string;
  runDir: string;
  workspace: string;
  socketPath: string;
  stderr: () => string;
}

async function startCapsule(t: TestContext): Promise<Capsule> {
  const base = mkdtempSync(join(tmpdir(), 'hostile-client-'));
  const runDir = join(base, 'run');
  const workspace = join(base, 'work');
  mkdirSync(workspace);
  // A program that answers every line it reads, so "the program keeps running" is checked by talking to it.
  const program = ['sh', '-c', 'while read -r line; do echo "echo:$line"; done'];
  const child = spawn(
    process.execPath,
    [CAPSULE_BIN, 'serve', '--run-dir', runDir, '--workspace', workspace, '--name', 'hostile', '--handshake-timeout-ms', '1000', '--', ...program],
    { stdio: ['ignore', 'ignore', 'pipe'], cwd: workspace },
  );
  let err = '';
  child.stderr!.on('data', (b: Buffer) => (err += b.toString()));
  t.after(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    rmSync(base, { recursive: true, force: true });
  });
  const socketPath = join(runDir, 'jackin.sock');
  await pollUntil('the capsule socket', () => existsSync(socketPath) && existsSync(join(runDir, 'capsule.json')), {
    timeoutMs: 20_000,
    last: () => err,
  });
  return { child, base, runDir, workspace, socketPath, stderr: () => err };
}

/** Every file under `dir`, relative, with its size: a snapshot to compare before and after. */
function snapshot(dir: string): Map<string, number> {
  const out = new Map<string, number>();
  const walk = (d: string): void => {
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      const st = statSync(p, { throwIfNoEntry: false });
      if (!st) continue;
      if (st.isDirectory()) walk(p);
      else out.set(relative(dir, p), st.size);
    }
  };
  walk(dir);
  return out;
}

function rawConnect(path: string): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const s = connect(path);
    s.once('connect', () => resolve(s));
    s.once('error', reject);
  });
}

function closed(s: Socket): Promise<void> {
  return new Promise((resolve) => {
    if (s.destroyed || s.closed) resolve();
    s.once('close', () => resolve());
    s.on('error', () => undefined);
  });
}

/** A fresh, well-behaved client attaches and the program still answers. */
async function programAnswers(c: Capsule, word: string): Promise<void> {
  const client = await TestClient.connect(c.socketPath);
  client.send(helloFrame());
  await client.waitForFrame('Welcome');
  client.send({ type: 'Input', bytes: Buffer.from(`${word}\r`) });
  await client.waitForOutput(`echo:${word}`, 15_000);
  client.socket.destroy();
}

test('hostile client: garbage, oversized lengths and a wrong first frame drop only that connection', async (t) => {
  const c = await startCapsule(t);
  const attacks: Buffer[] = [
    Buffer.from([0x03, 0xff, 0xff, 0xff, 0xff]), // Input declaring 4 GiB: a framing error at once
    Buffer.from('GET / HTTP/1.1\r\nHost: x\r\n\r\n'), // not our protocol at all
    encodeClientFrame({ type: 'Input', bytes: Buffer.from('not hello first') }), // must start with Hello
    Buffer.concat([encodeClientFrame(helloFrame()), Buffer.from([0x0e, 0x01, 0x00, 0x00, 0x01])]), // AttachControl over 16 MiB
    Buffer.from([0x01, 0x00, 0x00, 0x00, 0x03, 0x00, 0x18, 0x2a]), // Hello shorter than its layout
  ];
  for (const bytes of attacks) {
    const s = await rawConnect(c.socketPath);
    s.on('data', () => undefined);
    s.write(bytes);
    await closed(s);
  }
  assert.equal(c.child.exitCode, null, 'the capsule is still running');
  await programAnswers(c, 'after-garbage');
});

test('hostile client: a client that stops mid-frame is cut off; the program and other clients are fine', async (t) => {
  const c = await startCapsule(t);
  // Before Hello completes: the handshake timeout (1 s here) closes it.
  const early = await rawConnect(c.socketPath);
  early.on('data', () => undefined);
  early.write(encodeClientFrame(helloFrame()).subarray(0, 7));
  await closed(early);
  // After Hello: half a frame then silence. The session is not blocked for the next client (takeover).
  const stuck = await TestClient.connect(c.socketPath);
  stuck.send(helloFrame());
  await stuck.waitForFrame('Welcome');
  stuck.sendRaw(encodeClientFrame({ type: 'Input', bytes: Buffer.alloc(1000, 0x61) }).subarray(0, 300));
  await programAnswers(c, 'after-stall');
  assert.equal(c.child.exitCode, null);
});

test('hostile client: many concurrent connections are bounded and the capsule keeps serving', async (t) => {
  const c = await startCapsule(t);
  const sockets: Socket[] = [];
  const results = await Promise.allSettled(Array.from({ length: 60 }, () => rawConnect(c.socketPath)));
  for (const r of results) if (r.status === 'fulfilled') sockets.push(r.value);
  for (const s of sockets) s.on('error', () => undefined);
  // Over the limits (16 connections, 8 pending handshakes) connections are closed at once.
  await pollUntil('excess connections closed', () => sockets.filter((s) => s.destroyed || s.readableEnded).length >= 40, {
    timeoutMs: 10_000,
  });
  for (const s of sockets) s.destroy();
  assert.equal(c.child.exitCode, null);
  // The crowd's slots are freed as the capsule sees each close; a client arriving in that instant may
  // still be refused, so a fresh client retries until it is served (as an operator would).
  await pollUntil(
    'a fresh client to be served after the crowd left',
    async () => {
      try {
        const client = await TestClient.connect(c.socketPath);
        client.send(helloFrame());
        await client.waitForFrame('Welcome', 2000);
        client.socket.destroy();
        return true;
      } catch {
        return false;
      }
    },
    { timeoutMs: 20_000 },
  );
  await programAnswers(c, 'after-crowd');
});

test('hostile client: a flood of image frames leaves files only under <run>/clipboard and the session usable', async (t) => {
  const c = await startCapsule(t);
  const before = snapshot(c.base);
  const client = await TestClient.connect(c.socketPath);
  client.send(helloFrame());
  await client.waitForFrame('Welcome');
  const frames: ClientFrame[] = [];
  for (let i = 0; i < 60; i++) {
    const id = BigInt(i + 1);
    const context = { v: 1 as const };
    frames.push({
      type: 'AttachControl',
      requestId: id,
      context,
      body: { kind: 'ClipboardImage', format: 'png', bytes: i % 3 === 0 ? PNG : Buffer.from(`../../etc/passwd ${i}`) },
    });
    frames.push({
      type: 'AttachControl',
      requestId: id + 1000n,
      context,
      body: { kind: 'ClipboardImageStart', transferId: id, format: 'png', size: 64 * 1024 * 1024 },
    });
    frames.push({ type: 'ClipboardImage', format: 'gif', bytes: Buffer.from('GIF89a-not-really') });
  }
  for (const f of frames) client.send(f);
  // Every AttachControl image request is answered (success or rejected), whatever the content.
  await pollUntil('answers to the whole images', () => client.frames.filter((f) => f.type === 'AttachControlResponse').length >= 60, {
    timeoutMs: 30_000,
    last: () => client.frames.filter((f) => f.type === 'AttachControlResponse').length,
  });
  // The staged paths were typed into the program's line (never Enter): the next Enter submits them all.
  client.send({ type: 'Input', bytes: Buffer.from('after-flood\r') });
  await pollUntil('the program to answer after the flood', () => /echo:[^\n]*after-flood/.test(client.output()), { timeoutMs: 15_000 });
  const after = snapshot(c.base);
  const added = [...after.keys()].filter((k) => !before.has(k));
  const outside = added.filter((k) => !k.startsWith(`${join('run', 'clipboard')}/`) && k !== join('run', 'capsule.log'));
  assert.deepEqual(outside, [], 'nothing written outside <run>/clipboard');
  assert.deepEqual(readdirSync(c.workspace), [], 'the workspace is untouched');
  assert.equal(c.child.exitCode, null);
});
