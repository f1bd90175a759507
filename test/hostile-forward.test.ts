// Hostile capsule, forwards: a scripted capsule on a real Unix socket answers the host's forward requests
// the way a compromised container could, against the host's real listener and a real TCP client playing
// the browser. Whatever it sends, the host connects nowhere but to it, keeps its memory bounded, resets the
// browser's connection on a broken stream and goes on serving the next one.
//
// Login forwards end to end (issue 43), with tmux as the operator's terminal: in the embedded default
// (`jackin run`, the capsule's loopback is the host's) a login link's callback port was bound and forwarded
// onto itself (the capsule connected back to the forward's own port), and a browser's connection was reset
// instead of refused; a login forward live at a detach or at the program's exit left no `closed` line in
// `jackin log` and its forwards/*.json record behind.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { connect, createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { encodeControlMessage, encodeForwardFrame, ControlMessageDecoder } from '../src/protocol/index.ts';
import { ForwardListener, type ForwardEvent } from '../src/host/forward/forward-listener.ts';
import { FORWARD_QUEUE_BYTES } from '../src/transport/forward-pump.ts';
import { connectSocket, socketTransport } from '../src/transport/socket.ts';
import { readActions } from '../src/host/instances/action-log.ts';
import { freePort, probePort } from './helpers/free-port.ts';
import { confirmOnScreen, JACKIN, paneFor, startSession, waitForInnerShell, waitForJackinExit, JACKIN_CAPSULE, CAPSULE_BIN } from './helpers/jackin-cli.ts';
import { pollUntil } from './helpers/poll.ts';
import { recordingOpener } from './helpers/recording-opener.ts';
import { shellQuote, type TmuxPane } from './helpers/tmux.ts';

type Script = (sock: Socket, request: Record<string, unknown>) => void;

/** A capsule socket whose every control connection is answered by `script`. */
async function hostileCapsule(t: TestContext, script: Script): Promise<{ path: string; requests: Array<Record<string, unknown>> }> {
  const dir = mkdtempSync(join(tmpdir(), 'jackin-hostile-fwd-'));
  const path = join(dir, 'jackin.sock');
  const requests: Array<Record<string, unknown>> = [];
  const sockets = new Set<Socket>();
  const server = createServer({ allowHalfOpen: true }, (sock) => {
    sockets.add(sock);
    sock.on('error', () => {});
    sock.on('close', () => sockets.delete(sock));
    const d = new ControlMessageDecoder();
    let done = false;
    sock.on('data', (b: Buffer) => {
      if (done) return;
      const [m] = d.push(b);
      if (m === undefined) return;
      done = true;
      requests.push(m as Record<string, unknown>);
      script(sock, m as Record<string, unknown>);
    });
  });
  await new Promise<void>((r) => server.listen(path, () => r()));
  t.after(async () => {
    for (const s of sockets) s.destroy();
    await new Promise<void>((r) => server.close(() => r()));
    rmSync(dir, { recursive: true, force: true });
  });
  return { path, requests };
}

async function listenerFor(t: TestContext, path: string, containerPort: number): Promise<{ l: ForwardListener; events: ForwardEvent[] }> {
  const events: ForwardEvent[] = [];
  const l = await ForwardListener.listen({
    hostPort: await freePort(),
    containerPort,
    connect: async () => socketTransport(await connectSocket(path), path),
    onEvent: (e) => events.push(e),
  });
  t.after(() => l.close());
  return { l, events };
}

/** Connects as the browser, writes `send`, and resolves with how the connection ended and what came back. */
function browser(port: number, send = 'GET / HTTP/1.1\r\n\r\n'): Promise<{ how: string; got: number }> {
  return new Promise((resolve) => {
    let got = 0;
    const s = connect({ host: '127.0.0.1', port }, () => s.write(send));
    s.on('data', (b: Buffer) => (got += b.length));
    s.on('error', (e: NodeJS.ErrnoException) => resolve({ how: e.code ?? 'error', got }));
    s.on('close', () => resolve({ how: 'closed', got }));
  });
}

const reply = (v: unknown): Buffer => encodeControlMessage(v);

test('hostile capsule: a reply naming another address than the container loopback is a protocol error, and the browser connection is reset', async (t) => {
  const cap = await hostileCapsule(t, (sock) => sock.write(reply({ ok: true, address: '203.0.113.7' })));
  const { l, events } = await listenerFor(t, cap.path, 8080);
  const r = await browser(l.port);
  assert.notEqual(r.how, 'end');
  assert.equal(r.got, 0);
  await pollUntil('the failure event', () => events.find((e) => e.kind === 'failed'));
  const failed = events.find((e) => e.kind === 'failed');
  assert.ok(failed?.kind === 'failed' && failed.error.code === 'E_FORWARD_PROTOCOL', JSON.stringify(failed));
  // The host asked for a port, and only a port; it chose it, not the capsule.
  assert.deepEqual(cap.requests, [{ method: 'forward', port: 8080 }]);
});

test('hostile capsule: garbage, a frame of the wrong direction, an attach frame, a bad reset reason: each resets the browser connection, the next connection still works', async (t) => {
  const bad = [
    Buffer.from('not a frame at all'),
    encodeForwardFrame('client', { type: 'ForwardData', bytes: Buffer.from('x') }),
    Buffer.from('8200000001ff', 'hex'),
    Buffer.from('b20000000109', 'hex'),
    Buffer.from('b0ffffffff', 'hex'),
  ];
  let i = 0;
  const cap = await hostileCapsule(t, (sock) => {
    const n = i++;
    sock.write(reply({ ok: true, address: '127.0.0.1' }));
    if (n < bad.length) sock.write(bad[n]!);
    else
      sock.end(
        Buffer.concat([
          encodeForwardFrame('server', { type: 'ForwardData', bytes: Buffer.from('HTTP/1.1 204 No Content\r\n\r\n') }),
          encodeForwardFrame('server', { type: 'ForwardEnd' }),
        ]),
      );
  });
  const { l, events } = await listenerFor(t, cap.path, 3000);
  for (let n = 0; n < bad.length; n++) {
    const r = await browser(l.port);
    assert.ok(r.how === 'ECONNRESET' || r.how === 'closed', `${n}: ${r.how}`);
    assert.equal(r.got, 0, `${n}: nothing of a broken stream reaches the browser`);
  }
  await pollUntil('every broken stream reported', () => events.filter((e) => e.kind === 'closed' && !e.outcome.ok).length === bad.length, {
    last: () => events,
  });
  const good = await browser(l.port);
  assert.equal(good.got, 'HTTP/1.1 204 No Content\r\n\r\n'.length);
});

test('hostile capsule: a flood to a browser that does not read is not buffered by the host (the capsule connection is paused)', async (t) => {
  let capsuleSide: Socket | undefined;
  const chunk = encodeForwardFrame('server', { type: 'ForwardData', bytes: Buffer.alloc(256 * 1024, 0x41) });
  let written = 0;
  const cap = await hostileCapsule(t, (sock) => {
    capsuleSide = sock;
    sock.write(reply({ ok: true, address: '::1' }));
    // Writes as long as the host takes bytes.
    const pump = (): void => {
      let more = true;
      while (more && written < 512 * 1024 * 1024) {
        more = sock.write(chunk);
        written += chunk.length;
      }
      if (written < 512 * 1024 * 1024) sock.once('drain', pump);
    };
    pump();
  });
  const { l } = await listenerFor(t, cap.path, 9000);
  // A browser that connects and never reads.
  const s = connect({ host: '127.0.0.1', port: l.port });
  s.on('error', () => {});
  s.pause();
  t.after(() => s.destroy());
  await pollUntil('the capsule to be connected', () => capsuleSide !== undefined);
  // Once the kernel buffers are full, the capsule can no longer write: the host stopped reading.
  let last = -1;
  await pollUntil(
    'the flood to stall',
    async () => {
      const now = written;
      const stalled = now === last && now > 0;
      last = now;
      await new Promise((r) => setTimeout(r, 200));
      return stalled;
    },
    { timeoutMs: 30_000 },
  );
  // What got through is the socket buffers plus the host's bound, far from the 512 MiB on offer.
  assert.ok(written < 64 * 1024 * 1024 + 8 * FORWARD_QUEUE_BYTES, `${written} bytes were taken`);
});

const PALETTE_KEY = [0x1c];

/** A login link calling back to `port` of the loopback; long enough that opening it is confirmed in the prompt. */
const loginLink = (port: number): string =>
  `https://idp.example/oauth/authorize?client_id=agent&response_type=code&redirect_uri=${encodeURIComponent(`http://localhost:${port}/callback`)}&state=${'s'.repeat(60)}`;

/** The program offers `link`; the operator opens it from the palette; returns the prompt's screen (and confirms it). */
async function openOfferedLogin(pane: TmuxPane, link: string, tag: string): Promise<string> {
  await pane.typeLine(`clear; ${JACKIN_CAPSULE} open-url -- ${shellQuote(link)}; echo offered-${tag}-$((40+2))`);
  await pane.waitForText(new RegExp(`^offered-${tag}-42$`, 'm'));
  await pane.sendBytes(PALETTE_KEY);
  // The entry with its link drawn: until the host has read the offer it shows "(reading the offer…)" and
  // cannot be chosen, and a `u` then runs nothing.
  await pane.waitForText('Open offered link: ');
  await pane.sendKeys('u');
  const prompt = await pane.waitForText('jackin: confirm');
  await confirmOnScreen(pane);
  return prompt;
}

const loginForwards = async (pane: TmuxPane, name: string) => (await readActions(pane.jackinHome, name)).filter((a) => a.action === 'login-forward');
const forwardRecords = (pane: TmuxPane): string[] => {
  try {
    return readdirSync(join(pane.jackinHome, 'forwards'));
  } catch {
    return [];
  }
};

test('embedded default: jackin run, and an attach to it again, open a login link with no forward: nothing binds or loops, no warning, no word of it', {
  timeout: 120_000,
}, async (t) => {
  const rec = recordingOpener(t);
  const pane = await paneFor(t, { env: rec.env });
  const name = 'hf-embedded';
  await startSession(pane, name);
  for (const [i, tag] of ['run', 'attach'].entries()) {
    if (tag === 'attach') {
      await pane.sendBytes([...PALETTE_KEY, ...Buffer.from('d')]);
      assert.equal(await waitForJackinExit(pane), 0);
      await pane.typeLine(`clear; ${JACKIN} attach ${name}; echo "jackin-rc=$?"`);
      await waitForInnerShell(pane);
    }
    const port = await freePort();
    const link = loginLink(port);
    const prompt = await openOfferedLogin(pane, link, tag);
    assert.doesNotMatch(prompt, /forward/i, `${tag}: the prompt promises no forward`);
    await pollUntil(`${tag}: the link to open`, () => rec.opened().length === i + 1, { last: rec.opened });
    assert.equal(rec.opened()[i], link);
    // The program's own callback server would listen here, on the same loopback: the host left it free.
    assert.equal(await probePort(port), 'ECONNREFUSED', `${tag}: nothing bound`);
    const screen = await pane.capture();
    assert.doesNotMatch(screen, /forward/i, `${tag}: no notice about forwarding`);
  }
  assert.deepEqual(await loginForwards(pane, name), []);
  assert.deepEqual(forwardRecords(pane), []);
  await pane.typeLine('exit');
  assert.equal(await waitForJackinExit(pane), 0);
});

test("a login forward live at a detach, and at the program's exit, is closed, logged closed, and its record removed", { timeout: 120_000 }, async (t) => {
  const rec = recordingOpener(t);
  const pane = await paneFor(t, { env: rec.env });
  const name = 'hf-fwd-end';
  await startSession(pane, name);
  await pane.sendBytes([...PALETTE_KEY, ...Buffer.from('d')]);
  assert.equal(await waitForJackinExit(pane), 0);
  // Through an exec relay the host cannot tell where the capsule runs, so it forwards, as to a container.
  const relay = [process.execPath, CAPSULE_BIN, 'attach-proxy', '--socket', join(pane.jackinHome, 'sockets', name, 'jackin.sock')].map(shellQuote).join(' ');
  for (const [i, how] of ['detach', 'exit'].entries()) {
    await pane.typeLine(`clear; ${JACKIN} attach ${name} --exec ${shellQuote(relay)}; echo "jackin-rc=$?"`);
    await waitForInnerShell(pane);
    const port = await freePort();
    const prompt = await openOfferedLogin(pane, loginLink(port), how);
    assert.match(prompt, new RegExp(`forward localhost:${port} to ${name}`));
    await pollUntil(`${how}: the forward to listen`, async () => (await probePort(port)) === 'open');
    await pollUntil(`${how}: its record`, () => forwardRecords(pane).length === 1, { last: () => forwardRecords(pane) });
    await pollUntil(`${how}: the link to open`, () => rec.opened().length === i + 1, { last: rec.opened });
    if (how === 'detach') await pane.sendBytes([...PALETTE_KEY, ...Buffer.from('d')]);
    else await pane.typeLine('exit 3');
    assert.equal(await waitForJackinExit(pane), how === 'detach' ? 0 : 3);
    // jackin has exited: whatever it did at the end is done.
    assert.equal(await probePort(port), 'ECONNREFUSED', `${how}: closed`);
    assert.deepEqual(forwardRecords(pane), [], `${how}: the record is removed`);
    const target = `localhost:${port} -> ${name}:${port}`;
    const lines = (await loginForwards(pane, name)).filter((a) => a.target === target).map((a) => [a.result, a.detail]);
    assert.equal(lines.length, 2, `${how}: ${JSON.stringify(lines)}`);
    // The link carries a state: its callbacks reach this session through the port's router.
    assert.deepEqual(lines[0], ['ok', 'routed to it by the OAuth state of its link (state given)'], `${how}: ${JSON.stringify(lines)}`);
    assert.deepEqual(lines[1], ['ok', 'closed: the session ended'], `${how}: ${JSON.stringify(lines)}`);
  }
});
