import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { AttachHandshake, type AttachPhase } from './attach-handshake.ts';
import { AttachShutdown, EXT_HELLO_GRACE_MS, HELLO_GRACE_MS, type ShutdownTarget } from './attach-shutdown.ts';

interface Target extends ShutdownTarget {
  phase: AttachPhase;
  socketOpen: boolean;
  extHelloQueued: boolean;
  finished: Array<[string | null, number | null]>;
}

function target(phase: AttachPhase, over: Partial<Target> = {}): Target {
  const t: Target = {
    phase,
    socketOpen: true,
    offersExitStatus: true,
    extHelloQueued: false,
    finished: [],
    takeQueuedExtHello: () => t.extHelloQueued,
    finish: (reason, status) => {
      t.finished.push([reason, status]);
      t.phase = 'closed';
    },
    ...over,
  };
  return t;
}

function fakeClock(t: TestContext): { tick(ms: number): void } {
  t.mock.timers.enable({ apis: ['setTimeout'] });
  return { tick: (ms) => t.mock.timers.tick(ms) };
}

test('attach shutdown: a host not welcomed yet waits HELLO_GRACE_MS, then the shutdown finishes', (t) => {
  const clock = fakeClock(t);
  const tg = target('handshake');
  const s = new AttachShutdown(tg);
  s.request('program exited', 3);
  assert.equal(s.name, 'awaiting-welcome');
  s.request('again', 4); // a second request while waiting changes nothing
  clock.tick(HELLO_GRACE_MS - 1);
  assert.deepEqual(tg.finished, []);
  clock.tick(1);
  assert.deepEqual(tg.finished, [['program exited', 3]]);
  assert.equal(s.name, 'finished');
});

test('attach shutdown: welcomed during the wait, a host whose ExtHello is queued gets the shutdown at once', (t) => {
  const clock = fakeClock(t);
  const tg = target('attaching');
  const s = new AttachShutdown(tg);
  s.request(null, 0);
  tg.phase = 'attached';
  tg.extHelloQueued = true;
  s.welcomed();
  assert.deepEqual(tg.finished, [[null, 0]]);
  clock.tick(HELLO_GRACE_MS);
  assert.equal(tg.finished.length, 1, 'the welcome clock was stopped');
});

test('attach shutdown: an exit status waits up to EXT_HELLO_GRACE_MS for ExtHello and goes on when it arrives', (t) => {
  const clock = fakeClock(t);
  const tg = target('attached');
  const s = new AttachShutdown(tg);
  s.request(null, 7);
  assert.equal(s.awaitingExtHello, true);
  clock.tick(EXT_HELLO_GRACE_MS - 1);
  assert.deepEqual(tg.finished, []);
  assert.equal(s.extHelloArrived(), true);
  assert.deepEqual(tg.finished, [[null, 7]]);
  assert.equal(s.extHelloArrived(), false, 'a later ExtHello ends nothing');
  clock.tick(EXT_HELLO_GRACE_MS);
  assert.equal(tg.finished.length, 1);
});

test('attach shutdown: without ExtHello the exit-status wait ends after EXT_HELLO_GRACE_MS (an upstream host)', (t) => {
  const clock = fakeClock(t);
  const tg = target('attached');
  const s = new AttachShutdown(tg);
  s.request('program exited', 1);
  clock.tick(EXT_HELLO_GRACE_MS);
  assert.deepEqual(tg.finished, [['program exited', 1]]);
});

test('attach shutdown: no wait for a detach, a capsule without exit-status, a closed socket or a closed connection', () => {
  const detach = target('attached');
  new AttachShutdown(detach).request('detached', null);
  assert.deepEqual(detach.finished, [['detached', null]]);
  const noFeature = target('attached', { offersExitStatus: false });
  new AttachShutdown(noFeature).request(null, 2);
  assert.deepEqual(noFeature.finished, [[null, 2]]);
  const gone = target('handshake', { socketOpen: false });
  new AttachShutdown(gone).request(null, 2);
  assert.deepEqual(gone.finished, [[null, 2]]);
  const closed = target('closed');
  new AttachShutdown(closed).request(null, 2);
  assert.deepEqual(closed.finished, []);
});

test('attach shutdown: dispose stops a pending clock', (t) => {
  const clock = fakeClock(t);
  const tg = target('handshake');
  const s = new AttachShutdown(tg);
  s.request(null, 0);
  s.dispose();
  clock.tick(HELLO_GRACE_MS);
  assert.deepEqual(tg.finished, []);
  s.request(null, 0);
  assert.deepEqual(tg.finished, [], 'a finished machine takes no new request');
});

test('attach handshake: only the moves of the diagram are allowed', () => {
  const h = new AttachHandshake();
  assert.throws(() => h.to('attached'), /no transition from handshake to attached/);
  h.to('attaching');
  assert.equal(h.attached, true);
  assert.equal(h.live, false);
  h.to('attached');
  assert.equal(h.live, true);
  assert.throws(() => h.to('attaching'), /no transition from attached to attaching/);
  assert.equal(h.hostHas('modes'), false);
  assert.equal(h.extHelloSeen, false);
  h.extHello({ modes: 1 });
  assert.equal(h.hostHas('modes'), true);
  assert.deepEqual(h.negotiated, { modes: 1 });
  h.to('closed');
  h.to('closed');
  assert.equal(h.attached, false);
});
