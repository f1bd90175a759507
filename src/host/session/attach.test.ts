import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { PassThrough, Writable } from 'node:stream';
import type { ClientFrame, ServerFrame } from '../../protocol/index.ts';
import { connectSocket, socketTransport } from '../../transport/socket.ts';
import { startFakeCapsule, type FakeConnection } from '../../../test/helpers/fake-capsule.ts';
import { pollUntil } from '../../../test/helpers/poll.ts';
import { AttachSession, negotiateFeatures, outcomeExit } from './attach.ts';
import { HostTerminal } from '../terminal/terminal.ts';

/** A capsule stand-in on a real Unix socket (test/helpers/fake-capsule.ts): records the client's frames, sends what the test says. */
async function fakeCapsule(t: TestContext) {
  const fake = await startFakeCapsule(t);
  const client = socketTransport(await connectSocket(fake.socketPath), fake.socketPath);
  // The session's connection: the first that said Hello (tests wait for it before they send anything).
  const conn = (): FakeConnection => {
    const c = fake.connections[0];
    if (c === undefined) throw new Error('the client has not said Hello yet');
    return c;
  };
  const frames = (): ClientFrame[] => fake.connections[0]?.received ?? [];
  return {
    client,
    get frames() {
      return frames();
    },
    send: (f: ServerFrame) => conn().send(f),
    raw: (b: Buffer) => conn().raw(b),
    end: () => conn().socket.end(),
    destroy: () => conn().socket.destroy(),
    waitFor: (type: ClientFrame['type']) =>
      pollUntil(`a ${type} frame`, () => frames().find((f) => f.type === type), { last: () => frames().map((f) => f.type) }),
  };
}

function fakeTerminal() {
  const stdin = new PassThrough();
  const out: Buffer[] = [];
  const stdout = new Writable({
    write(chunk: Buffer, _enc, cb) {
      out.push(chunk);
      cb();
    },
  });
  const terminal = new HostTerminal({ stdin, stdout });
  return { terminal, stdin, written: () => Buffer.concat(out).toString('latin1') };
}

test('attach: sends Hello with the terminal size and TERM fields, forwards input, writes output and BEL', async (t) => {
  const cap = await fakeCapsule(t);
  const term = fakeTerminal();
  const session = new AttachSession({ transport: cap.client, terminal: term.terminal, name: 'x', env: { TERM: 'xterm-256color', COLORTERM: 'truecolor' } });
  const done = session.start();
  const hello = await cap.waitFor('Hello');
  assert.equal(cap.frames[0]?.type, 'Hello', 'Hello comes first');
  assert.ok(hello.type === 'Hello');
  assert.deepEqual(
    [hello.rows, hello.cols, hello.term, hello.termProgram, hello.colorTerm, hello.context],
    [24, 80, 'xterm-256color', null, 'truecolor', null],
  );
  const input = () => Buffer.concat(cap.frames.flatMap((f) => (f.type === 'Input' ? [f.bytes] : [])));
  // Typed keys go out at once, also before the Welcome (a paste key or palette key would wait for it).
  const early = Buffer.from('typed early\r');
  term.stdin.write(early);
  await pollUntil('the keys typed before the Welcome', () => input().equals(early));
  cap.send({ type: 'Welcome', sessions: 1, features: null });
  const all = Buffer.from(Array.from({ length: 256 }, (_, i) => i).filter((b) => b !== 0x1c));
  term.stdin.write(all);
  await pollUntil('all input bytes', () => input().equals(Buffer.concat([early, all])));
  cap.send({ type: 'Output', bytes: Buffer.from('hello\r\n') });
  cap.send({ type: 'Bell' });
  await pollUntil('output and BEL on the terminal', () => term.written() === 'hello\r\n\x07');
  assert.equal(
    cap.frames.some((f) => f.type === 'ExtHello'),
    false,
    'no ExtHello to an upstream capsule',
  );
  cap.send({ type: 'Shutdown', reason: null });
  assert.deepEqual(await done, { kind: 'shutdown', reason: null });
});

test('attach: negotiates extensions, and the program exit status ends the session', async (t) => {
  const cap = await fakeCapsule(t);
  const term = fakeTerminal();
  const session = new AttachSession({ transport: cap.client, terminal: term.terminal, name: 'x' });
  const notices: unknown[] = [];
  session.onNotice((n) => notices.push(n));
  const done = session.start();
  await cap.waitFor('Hello');
  cap.send({ type: 'Welcome', sessions: 1, features: { 'exit-status': 1, notice: 1, repaint: 2, other: 1 } });
  const ext = await cap.waitFor('ExtHello');
  assert.deepEqual(ext, { type: 'ExtHello', features: { 'exit-status': 1, notice: 1, repaint: 1 } });
  cap.send({ type: 'Notice', level: 'warning', text: 'careful' });
  cap.send({ type: 'ExitStatus', status: 42 });
  cap.send({ type: 'Shutdown', reason: 'program exited' });
  assert.deepEqual(await done, { kind: 'exited', status: 42, reason: 'program exited' });
  assert.deepEqual(notices, [{ level: 'warning', text: 'careful' }]);
  assert.match(
    term.written(),
    /^\x1b7[^\n]*?\x1b\[1;\d+H.* ! capsule: careful .*\x1b8$/,
    'the notice is drawn without moving the cursor, marked as from the capsule',
  );
});

test('attach: Ctrl+\\ d sends AttachControl Detach with context {v:1} and ends detached', async (t) => {
  const cap = await fakeCapsule(t);
  const term = fakeTerminal();
  const done = new AttachSession({ transport: cap.client, terminal: term.terminal, name: 'x' }).start();
  await cap.waitFor('Hello');
  cap.send({ type: 'Welcome', sessions: 1, features: { repaint: 1 } });
  await cap.waitFor('ExtHello');
  term.stdin.write(Buffer.from('ls\x1c'));
  await pollUntil('the palette drawn', () => term.written().includes('Detach'));
  term.stdin.write(Buffer.from('d'));
  const req = await cap.waitFor('AttachControl');
  assert.deepEqual(req, { type: 'AttachControl', requestId: 1n, context: { v: 1 }, body: { kind: 'Detach' } });
  cap.send({ type: 'AttachControlResponse', requestId: 1n, result: 'success' });
  cap.send({ type: 'Shutdown', reason: null });
  assert.deepEqual(await done, { kind: 'detached' });
  const input = Buffer.concat(cap.frames.flatMap((f) => (f.type === 'Input' ? [f.bytes] : []))).toString();
  assert.equal(input, 'ls');
});

test("attach: a palette key typed before the capsule's Welcome waits for it, then opens our palette: it never reaches the program", async (t) => {
  const cap = await fakeCapsule(t);
  const term = fakeTerminal();
  const done = new AttachSession({ transport: cap.client, terminal: term.terminal, name: 'x' }).start();
  await cap.waitFor('Hello');
  const input = (): string => Buffer.concat(cap.frames.flatMap((f) => (f.type === 'Input' ? [f.bytes] : []))).toString('latin1');
  // Between Hello and Welcome: the keys before the palette key go out as typed (protocol.md section 6).
  term.stdin.write(Buffer.from('ls\x1cd'));
  await pollUntil('the keys before the palette key', () => input().startsWith('ls'), { last: input });
  cap.send({ type: 'Welcome', sessions: 1, features: { repaint: 1 } });
  await pollUntil('the palette drawn', () => term.written().includes('Detach'), { last: () => JSON.stringify({ written: term.written(), input: input() }) });
  // The d read after the palette key chose Detach in the palette.
  const req = await cap.waitFor('AttachControl');
  assert.deepEqual(req, { type: 'AttachControl', requestId: 1n, context: { v: 1 }, body: { kind: 'Detach' } });
  assert.equal(input(), 'ls');
  const ext = cap.frames.findIndex((f) => f.type === 'ExtHello');
  assert.ok(ext >= 0 && ext < cap.frames.findIndex((f) => f.type === 'AttachControl'), 'the held keys acted after the extensions were agreed');
  cap.send({ type: 'AttachControlResponse', requestId: 1n, result: 'success' });
  cap.send({ type: 'Shutdown', reason: null });
  assert.deepEqual(await done, { kind: 'detached' });
});

test('attach: a capsule that never sends its Welcome ends the session after the timeout', async (t) => {
  const cap = await fakeCapsule(t);
  const term = fakeTerminal();
  const done = new AttachSession({ transport: cap.client, terminal: term.terminal, name: 'x', welcomeTimeoutMs: 200 }).start();
  await cap.waitFor('Hello');
  // The palette key is held for the Welcome that never comes: the timeout is what ends the session.
  term.stdin.write(Buffer.from([0x1c]));
  const outcome = await done;
  assert.equal(outcome.kind, 'lost');
  assert.match(outcome.kind === 'lost' ? outcome.reason : '', /^the capsule did not answer the handshake within 0\.2 s/);
  assert.equal(cap.frames.filter((f) => f.type === 'Input').length, 0, 'the held palette key never went out');
});

test('attach: with an upstream capsule the palette key is forwarded, and the host draws its notices itself (nothing goes to the capsule)', async (t) => {
  const cap = await fakeCapsule(t);
  const term = fakeTerminal();
  const session = new AttachSession({ transport: cap.client, terminal: term.terminal, name: 'x' });
  const done = session.start();
  await cap.waitFor('Hello');
  cap.send({ type: 'Welcome', sessions: 1, features: null });
  // Frames are handled in order: once the Output after the Welcome is on the terminal, the Welcome was.
  cap.send({ type: 'Output', bytes: Buffer.from('after-welcome') });
  await pollUntil('the Welcome handled', () => term.written() === 'after-welcome', { last: term.written });
  term.stdin.write(Buffer.from('a\x1cd'));
  await pollUntil('input forwarded', () => Buffer.concat(cap.frames.flatMap((f) => (f.type === 'Input' ? [f.bytes] : []))).toString() === 'a\x1cd');
  session.notify('error', 'Saved /home/me/Downloads/x: \x1b[2Jbad');
  await pollUntil('the notice drawn by the host', () => term.written().includes(' Saved /home/me/Downloads/x: \\x1b[2Jbad'), { last: () => term.written() });
  // Typed after the notice: once it arrives, a HostNotice sent before it would have too.
  term.stdin.write('z');
  await pollUntil('input after the notice', () => cap.frames.some((f) => f.type === 'Input' && f.bytes.toString() === 'z'));
  assert.equal(
    cap.frames.some((f) => f.type === 'HostNotice'),
    false,
    'no host path ever goes to the capsule',
  );
  cap.send({ type: 'Shutdown', reason: null });
  await done;
});

test('attach: a closed connection without Shutdown is a lost connection', async (t) => {
  const cap = await fakeCapsule(t);
  const term = fakeTerminal();
  const done = new AttachSession({ transport: cap.client, terminal: term.terminal, name: 'x' }).start();
  await cap.waitFor('Hello');
  cap.destroy();
  assert.deepEqual(await done, { kind: 'lost', reason: 'the connection closed before the capsule answered' });
});

test('attach: a malformed frame is skipped; a framing error ends the session', async (t) => {
  const cap = await fakeCapsule(t);
  const term = fakeTerminal();
  const logs: string[] = [];
  const done = new AttachSession({ transport: cap.client, terminal: term.terminal, name: 'x', log: (l) => logs.push(l) }).start();
  await cap.waitFor('Hello');
  // HostOpenUrl with a javascript: URL: in sync, invalid payload.
  const bad = Buffer.from('javascript:alert(1)');
  cap.raw(Buffer.concat([Buffer.from([0x86, 0, 0, 0, bad.length]), bad]));
  cap.send({ type: 'Output', bytes: Buffer.from('still here') });
  await pollUntil('output after the skipped frame', () => term.written().includes('still here'));
  assert.ok(
    logs.some((l) => l.startsWith('skipped a malformed frame')),
    JSON.stringify(logs),
  );
  cap.raw(Buffer.from([0x82, 0xff, 0xff, 0xff, 0xff]));
  const outcome = await done;
  assert.equal(outcome.kind, 'lost');
  assert.match((outcome as { reason: string }).reason, /^protocol error: .*cap/);
});

test('negotiateFeatures and outcomeExit', () => {
  assert.deepEqual(negotiateFeatures({ notice: 1 }), { notice: 1 });
  // A session that wants no port events leaves `ports` out of its ExtHello though the capsule offers it.
  assert.deepEqual(negotiateFeatures({ notice: 1, ports: 1 }), { notice: 1, ports: 1 });
  assert.deepEqual(negotiateFeatures({ notice: 1, ports: 1 }, ['ports']), { notice: 1 });
  assert.deepEqual(outcomeExit({ kind: 'exited', status: 3 }, 'x'), { status: 3, message: null });
  assert.deepEqual(outcomeExit({ kind: 'exited', status: 3, reason: 'program exited with status 3' }, 'x'), { status: 3, message: null });
  // A program ended from outside (a stopped container) gets one line, the capsule's text made inert.
  assert.deepEqual(outcomeExit({ kind: 'exited', status: 129, reason: 'the capsule received SIGTERM\x1b[2J' }, 'x'), {
    status: 129,
    message: 'x: the capsule received SIGTERM\\x1b[2J',
  });
  assert.deepEqual(outcomeExit({ kind: 'detached' }, 'x'), { status: 0, message: 'detached from x' });
  assert.equal(outcomeExit({ kind: 'lost', reason: 'r' }, 'x').status, 1);
});

test('attach: a Welcome with a malformed extension block is treated as upstream, with a notice', async (t) => {
  const cap = await fakeCapsule(t);
  const term = fakeTerminal();
  const session = new AttachSession({ transport: cap.client, terminal: term.terminal, name: 'x' });
  const done = session.start();
  await cap.waitFor('Hello');
  // Session count, "JX", list version 1, count 1, then a name that overruns the payload.
  cap.raw(Buffer.from('810000000a000000014a5801010977', 'hex').subarray(0, 15));
  // The notice is wider than the 80 columns: wrapped, its end on the next row.
  await pollUntil('the notice', () => /malformed extension block \(E_BAD_EXTENSIONS\);.*\x1b\[2;\d+H.* extensions disabled/.test(term.written()), {
    last: () => term.written(),
  });
  assert.equal(
    cap.frames.some((f) => f.type === 'ExtHello'),
    false,
  );
  assert.equal(session.features, null);
  term.stdin.write(Buffer.from([0x1c]));
  await pollUntil('the palette key forwarded as to an upstream capsule', () =>
    cap.frames.some((f) => f.type === 'Input' && f.bytes.equals(Buffer.from([0x1c]))),
  );
  cap.send({ type: 'Shutdown', reason: null });
  await done;
});

test('attach: malformed frames in sync are skipped with a notice, and a flood of them is told only a few times', async (t) => {
  const cap = await fakeCapsule(t);
  const term = fakeTerminal();
  const session = new AttachSession({ transport: cap.client, terminal: term.terminal, name: 'x' });
  const done = session.start();
  await cap.waitFor('Hello');
  cap.send({ type: 'Welcome', sessions: 1, features: null });
  const bad = Buffer.from([0xfe, 0, 0, 0, 1, 0x41]); // unknown tag, in sync
  for (let i = 0; i < 50; i++) cap.raw(bad);
  cap.send({ type: 'Output', bytes: Buffer.from('alive') });
  await pollUntil('output after the bad frames', () => term.written().includes('alive'));
  // The notices are queued for drawing; the queue holds each one told.
  const told = (term.written().match(/skipped a malformed frame from the capsule: E_UNKNOWN_TAG/g) ?? []).length;
  assert.ok(told >= 1, `told ${told} times`);
  const noticesQueued = session.noticesPending;
  assert.ok(noticesQueued <= 2, `${noticesQueued} more queued`);
  cap.send({ type: 'Shutdown', reason: null });
  await done;
});

/** A palette action's title: on the terminal once the palette is drawn. */
const PALETTE_TEXT = 'Detach (the program keeps running)';

test("attach: with held-replies the palette is drawn at the capsule's RepliesHeld, and output is written up to it and from the one after", async (t) => {
  const cap = await fakeCapsule(t);
  const term = fakeTerminal();
  const session = new AttachSession({ transport: cap.client, terminal: term.terminal, name: 'x' });
  const done = session.start();
  await cap.waitFor('Hello');
  cap.send({ type: 'Welcome', sessions: 1, features: { 'held-replies': 1, repaint: 1 } });
  await cap.waitFor('ExtHello');
  const holds = () => cap.frames.flatMap((f) => (f.type === 'HoldReplies' ? [f.held] : []));
  // A mark nobody asked for holds nothing: the capsule cannot make the host drop the program's output.
  cap.send({ type: 'RepliesHeld', held: true });
  cap.send({ type: 'Output', bytes: Buffer.from('unasked-mark') });
  await pollUntil('the output after an unasked mark', () => term.written().includes('unasked-mark'));
  term.stdin.write(Buffer.from([0x1c]));
  await pollUntil('HoldReplies true', () => holds().length === 1);
  assert.deepEqual(holds(), [true]);
  // Before the mark the output is the terminal's (its queries too); a RepliesHeld not asked for changes nothing.
  cap.send({ type: 'RepliesHeld', held: false });
  cap.send({ type: 'Output', bytes: Buffer.from('before-mark\x1b[6n') });
  await pollUntil('the output before the mark', () => term.written().includes('before-mark\x1b[6n'));
  assert.ok(!term.written().includes(PALETTE_TEXT), 'the palette waits for the mark');
  cap.send({ type: 'RepliesHeld', held: true });
  await pollUntil('the palette drawn', () => term.written().includes(PALETTE_TEXT));
  cap.send({ type: 'Output', bytes: Buffer.from('held-output\x1b[6n') });
  term.stdin.write(Buffer.from([0x1b]));
  await pollUntil('HoldReplies false', () => holds().length === 2);
  assert.deepEqual(holds(), [true, false]);
  await cap.waitFor('Repaint');
  cap.send({ type: 'Output', bytes: Buffer.from('still-held') });
  cap.send({ type: 'RepliesHeld', held: false });
  cap.send({ type: 'Output', bytes: Buffer.from('after-mark') });
  await pollUntil('the output after the second mark', () => term.written().includes('after-mark'));
  assert.ok(!term.written().includes('held-output') && !term.written().includes('still-held'), 'nothing between the marks was written');
  cap.send({ type: 'Shutdown', reason: null });
  await done;
});

test('attach: a capsule that never sends RepliesHeld still gets the palette drawn, and output flows again after it closes', async (t) => {
  const cap = await fakeCapsule(t);
  const term = fakeTerminal();
  const session = new AttachSession({ transport: cap.client, terminal: term.terminal, name: 'x' });
  const done = session.start();
  await cap.waitFor('Hello');
  cap.send({ type: 'Welcome', sessions: 1, features: { 'held-replies': 1, repaint: 1 } });
  await cap.waitFor('ExtHello');
  term.stdin.write(Buffer.from([0x1c]));
  await pollUntil('the palette drawn without the mark', () => term.written().includes(PALETTE_TEXT));
  cap.send({ type: 'Output', bytes: Buffer.from('under-palette') });
  term.stdin.write(Buffer.from([0x1b]));
  await cap.waitFor('Repaint');
  await pollUntil('output written again', () => {
    cap.send({ type: 'Output', bytes: Buffer.from('x') });
    return term.written().includes('x');
  });
  assert.ok(!term.written().includes('under-palette'));
  cap.send({ type: 'Shutdown', reason: null });
  await done;
});

test('attach: a feature overlay asks the capsule to hold replies, and lets go before the repaint it asks for', async (t) => {
  const cap = await fakeCapsule(t);
  const term = fakeTerminal();
  const session = new AttachSession({ transport: cap.client, terminal: term.terminal, name: 'x' });
  const done = session.start();
  await cap.waitFor('Hello');
  cap.send({ type: 'Welcome', sessions: 1, features: { 'held-replies': 1, repaint: 1 } });
  await cap.waitFor('ExtHello');
  const up = session.showOverlay({ draw: () => 'OVERLAY', handle: () => undefined });
  await pollUntil('HoldReplies true', () => cap.frames.some((f) => f.type === 'HoldReplies' && f.held));
  cap.send({ type: 'RepliesHeld', held: true });
  up.dispose();
  const order = await pollUntil('HoldReplies false, then Repaint', () => {
    const o = cap.frames.flatMap((f) => (f.type === 'HoldReplies' ? [`hold ${f.held}`] : f.type === 'Repaint' ? ['repaint'] : []));
    return o.length === 3 ? o : undefined;
  });
  assert.deepEqual(order, ['hold true', 'hold false', 'repaint']);
  cap.send({ type: 'Shutdown', reason: null });
  await done;
});

test('attach: the session keeps the affordances installed on it and disposes them, newest first, when it ends', async (t) => {
  const cap = await fakeCapsule(t);
  const term = fakeTerminal();
  const session = new AttachSession({ transport: cap.client, terminal: term.terminal, name: 'x' });
  const disposed: string[] = [];
  const first = { dispose: () => void disposed.push('first') };
  assert.equal(session.install(first), first, 'install returns the feature');
  session.install({ dispose: () => void disposed.push('second') });
  const done = session.start();
  await cap.waitFor('Hello');
  cap.send({ type: 'Welcome', sessions: 1, features: null });
  assert.deepEqual([...disposed], [], 'nothing is disposed while the session runs');
  cap.send({ type: 'Shutdown', reason: null });
  await done;
  assert.deepEqual([...disposed], ['second', 'first']);
  session.install({ dispose: () => void disposed.push('late') });
  assert.deepEqual(disposed, ['second', 'first', 'late'], 'an affordance installed after the end is disposed at once');
});

test('attach: frames the session does not handle go to the affordances unnamed; with none listening they are logged as ignored', async (t) => {
  const cap = await fakeCapsule(t);
  const term = fakeTerminal();
  const logs: string[] = [];
  const session = new AttachSession({ transport: cap.client, terminal: term.terminal, name: 'x', log: (l) => logs.push(l) });
  const done = session.start();
  await cap.waitFor('Hello');
  cap.send({ type: 'Welcome', sessions: 1, features: null });
  cap.send({ type: 'HostOpenUrl', url: 'https://example.com/' });
  await pollUntil('the ignored frame logged', () => logs.find((l) => l === 'ignored HostOpenUrl frame (not handled by this host)'));
  const seen: string[] = [];
  const sub = session.onFrame((f) => seen.push(f.type));
  cap.send({ type: 'HostOpenUrl', url: 'https://example.com/' });
  cap.send({ type: 'Bell' });
  await pollUntil('the frame passed on', () => seen.length > 0 || undefined);
  assert.deepEqual(seen, ['HostOpenUrl'], 'a frame the session handles (Bell) is not passed on');
  assert.equal(logs.filter((l) => l.startsWith('ignored')).length, 1);
  sub.dispose();
  cap.send({ type: 'Shutdown', reason: null });
  await done;
});
