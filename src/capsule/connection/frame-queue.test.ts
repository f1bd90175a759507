import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Socket } from 'node:net';
import { FrameQueue, ReadGate } from './frame-queue.ts';

/** Records pause/resume; the gate and the queue use nothing else of the socket. */
function fakeSocket(): { paused: boolean; calls: string[]; pause(): void; resume(): void } {
  return {
    paused: false,
    calls: [],
    pause() {
      this.paused = true;
      this.calls.push('pause');
    },
    resume() {
      this.paused = false;
      this.calls.push('resume');
    },
  };
}

test('read gate: the socket is read again only when no reason holds it, and never after close', () => {
  const socket = fakeSocket();
  let open = true;
  const gate = new ReadGate(socket as unknown as Socket, () => open);
  gate.hold('exclusive');
  gate.hold('input');
  gate.release('exclusive');
  assert.equal(socket.paused, true, 'input still holds it');
  assert.equal(gate.isHeld('input'), true);
  gate.release('input');
  assert.equal(socket.paused, false);
  gate.hold('input');
  open = false;
  gate.release('input');
  assert.equal(socket.paused, true, 'a closed connection stays paused');
});

test('frame queue: items after an exclusive step wait for it, in order', async () => {
  const socket = fakeSocket();
  const gate = new ReadGate(socket as unknown as Socket, () => true);
  const handled: string[] = [];
  let finishStep: () => void = () => undefined;
  const queue: FrameQueue<string> = new FrameQueue(
    gate,
    (item) => {
      handled.push(item);
      if (item === 'slow') queue.runExclusive(() => new Promise<void>((resolve) => (finishStep = resolve)));
    },
    () => true,
    (e) => assert.fail(e),
  );
  queue.push(['a', 'slow', 'b']);
  queue.push(['c']);
  assert.deepEqual(handled, ['a', 'slow']);
  assert.equal(socket.paused, true);
  assert.deepEqual(queue.queued, ['b', 'c']);
  finishStep();
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(handled, ['a', 'slow', 'b', 'c']);
  assert.equal(socket.paused, false);
});

test('frame queue: a failed exclusive step is reported and the queue is not pumped once closed', async () => {
  const socket = fakeSocket();
  let open = true;
  const gate = new ReadGate(socket as unknown as Socket, () => open);
  const handled: string[] = [];
  const failures: string[] = [];
  const queue: FrameQueue<string> = new FrameQueue(
    gate,
    (item) => {
      handled.push(item);
      if (item === 'bad') {
        queue.runExclusive(async () => {
          throw new Error('repaint failed');
        });
      }
    },
    () => open,
    (e) => {
      failures.push(e.message);
      open = false;
    },
  );
  queue.push(['bad', 'after']);
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(failures, ['repaint failed']);
  assert.deepEqual(handled, ['bad']);
  assert.equal(socket.paused, true);
});
