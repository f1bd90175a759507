import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { DisposableStore, Emitter, onEvent, toDisposable } from './disposable.ts';

test('toDisposable runs its function once however often it is disposed', () => {
  let n = 0;
  const d = toDisposable(() => n++);
  d.dispose();
  d.dispose();
  assert.equal(n, 1);
});

test('DisposableStore releases newest first, and disposes at once what is added after it was disposed', () => {
  const order: string[] = [];
  const store = new DisposableStore();
  store.add(toDisposable(() => order.push('a')));
  store.add(toDisposable(() => order.push('b')));
  store.dispose();
  assert.deepEqual(order, ['b', 'a']);
  store.add(toDisposable(() => order.push('late')));
  assert.deepEqual(order, ['b', 'a', 'late']);
  assert.equal(store.isDisposed, true);
});

test('Emitter delivers to each listener until its subscription is disposed', () => {
  const e = new Emitter<number>();
  const seen: number[] = [];
  const sub = e.event((v) => seen.push(v));
  e.fire(1);
  sub.dispose();
  e.fire(2);
  assert.deepEqual(seen, [1]);
  assert.equal(e.hasListeners, false);
});

test('onEvent: a Node emitter listener that its Disposable removes', () => {
  const emitter = new EventEmitter();
  const seen: unknown[] = [];
  const sub = onEvent(emitter, 'tick', (n: number) => seen.push(n));
  emitter.emit('tick', 1);
  sub.dispose();
  emitter.emit('tick', 2);
  assert.deepEqual(seen, [1]);
  assert.equal(emitter.listenerCount('tick'), 0);
});
