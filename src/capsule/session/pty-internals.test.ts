import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import * as pty from '@lydell/node-pty';
import { pollUntil } from '../../../test/helpers/poll.ts';
import { createRequire } from 'node:module';
import { isAlive } from '../../../test/helpers/capsules.ts';
import { PtyInternals, spawnWithExitHook, type PtyPiece } from './pty-internals.ts';
import { Session } from './session.ts';

const require = createRequire(import.meta.url);

const PIECES: readonly PtyPiece[] = ['socket', 'readStop', 'readStart', 'ptsName', 'fd', 'exitHook'];

test('pty internals: the installed node-pty provides every piece the session relies on', async () => {
  const spawned = spawnWithExitHook(
    require.resolve('@lydell/node-pty'),
    () => pty.spawn('/bin/sh', ['-c', 'read line'], { name: 'xterm', rows: 24, cols: 80, cwd: process.cwd(), env: { PATH: process.env['PATH'] ?? '' } }),
    () => undefined,
  );
  const proc = spawned.proc;
  const exited = new Promise<void>((resolve) => proc.onExit(() => resolve()));
  try {
    const internals = new PtyInternals(proc, spawned.hooked);
    for (const piece of PIECES) {
      assert.equal(internals.found[piece], true, `node-pty no longer provides "${piece}" (see pty-internals.ts for what falls back)`);
    }
    assert.deepEqual(internals.missing, []);
    assert.match(internals.ptsName ?? '', /^\/dev\//);
    // The handle really is the stream's read switch: pause stops it, resume starts it again.
    proc.onData(() => undefined);
    await pollUntil('the PTY stream to start reading', () => internals.stream?._handle?.reading === true);
    internals.pause();
    assert.equal(internals.stream?._handle?.reading, false, 'readStop did not stop reading');
    internals.resume();
    assert.equal(internals.stream?._handle?.reading, true, 'readStart did not restart reading');
  } finally {
    proc.kill('SIGKILL');
    await exited;
  }
});

test('pty internals: a session reports the pieces it found', async () => {
  const session = Session.spawn({ file: '/bin/sh', args: ['-c', 'exit 0'] });
  try {
    assert.deepEqual(session.ptyPieces, { socket: true, readStop: true, readStart: true, ptsName: true, fd: true, exitHook: true });
  } finally {
    await session.exited;
    session.dispose();
  }
});

/** A stand-in with the public pause/resume, counting calls, and whichever internals a test gives it. */
function fakePty(internals: Record<string, unknown>): { pauses: number; resumes: number; pause(): void; resume(): void } {
  return {
    pauses: 0,
    resumes: 0,
    pause() {
      this.pauses++;
    },
    resume() {
      this.resumes++;
    },
    ...internals,
  };
}

test('pty internals: a node-pty without the handle read switch is reported by name and falls back to pause/resume', () => {
  const stream = Object.assign(new PassThrough(), { _handle: { reading: true, readStart: () => 0 } });
  const proc = fakePty({ _socket: stream, ptsName: '/dev/pts/99', fd: 42 });
  const internals = new PtyInternals(proc);
  assert.deepEqual(internals.found, { socket: true, readStop: false, readStart: true, ptsName: true, fd: true, exitHook: false });
  assert.deepEqual(internals.missing, ['readStop', 'exitHook']);
  internals.pause();
  assert.equal(proc.pauses, 1, 'without readStop the public pause() is used');
  assert.equal(stream._handle.reading, true, 'the handle was left alone');
  stream.destroy();
});

test('pty internals: a node-pty with none of the pieces reports each one missing and uses the public calls', () => {
  const proc = fakePty({ ptsName: 'not-a-device', fd: '3' });
  const internals = new PtyInternals(proc);
  assert.deepEqual(internals.missing, PIECES);
  assert.equal(internals.stream, undefined);
  assert.equal(internals.ptsName, undefined);
  assert.equal(internals.fd, undefined);
  internals.pause();
  internals.resume();
  assert.deepEqual([proc.pauses, proc.resumes], [1, 1]);
  internals.drainStreamBuffer(); // nothing to read, and no stream: a no-op
});

test("pty internals: the master descriptor is given only while node-pty's stream is open, never without the stream", () => {
  const stream = Object.assign(new PassThrough(), { _handle: { reading: true } as { reading: boolean } | null });
  const internals = new PtyInternals(fakePty({ _socket: stream, fd: 42 }));
  assert.equal(internals.openFd, 42);
  stream._handle = null; // net.Socket drops its handle as it closes the descriptor
  assert.equal(internals.openFd, undefined, 'a stream without its handle');
  stream._handle = { reading: true };
  stream.destroy();
  assert.equal(internals.openFd, undefined, 'a destroyed stream');
  const bare = new PtyInternals(fakePty({ fd: 42 }));
  assert.equal(bare.fd, 42);
  assert.equal(bare.openFd, undefined, 'without the stream nothing says the descriptor is still the PTY');
});

test('pty internals: the exit hook runs when node-pty reaps the child, before its public exit event, and only for its own spawn', async () => {
  const order: string[] = [];
  const spawn = (script: string) => () =>
    pty.spawn('/bin/sh', ['-c', script], { name: 'xterm', rows: 24, cols: 80, cwd: process.cwd(), env: { PATH: process.env['PATH'] ?? '' } });
  const hooked = spawnWithExitHook(require.resolve('@lydell/node-pty'), spawn('exit 3'), () => order.push(`hook (child alive: ${isAlive(hooked.proc.pid)})`));
  assert.equal(hooked.hooked, true, 'the native fork could not be wrapped (see pty-internals.ts)');
  // A spawn made without the hook gets none, though the native fork stays wrapped.
  const plain = pty.spawn('/bin/sh', ['-c', 'exit 4'], { name: 'xterm', rows: 24, cols: 80, cwd: process.cwd(), env: { PATH: process.env['PATH'] ?? '' } });
  const [status] = await Promise.all([
    new Promise<number>((resolve) => hooked.proc.onExit(({ exitCode }) => (order.push('exit event'), resolve(exitCode)))),
    new Promise<void>((resolve) => plain.onExit(() => resolve())),
  ]);
  assert.equal(status, 3);
  assert.deepEqual(order, ['hook (child alive: false)', 'exit event']);
});

test('pty internals: every byte a program wrote while its output was held reaches the sink before its exit is reported', async () => {
  const session = Session.spawn({
    file: '/bin/sh',
    args: ['-c', 'i=0; while [ $i -lt 4000 ]; do printf "line-%03d\\n" $i; i=$((i+1)); done; printf END; exit 5'],
  });
  const got: Buffer[] = [];
  session.hold('test');
  session.setOutputSink((chunk) => got.push(chunk));
  try {
    const status = await session.exited;
    const out = Buffer.concat(got).toString('latin1');
    assert.equal(status, 5);
    assert.ok(out.endsWith('END'), `the tail was lost: ...${JSON.stringify(out.slice(-40))}`);
    assert.equal(out.match(/line-\d{3}/g)?.length, 4000);
  } finally {
    session.dispose();
  }
});
