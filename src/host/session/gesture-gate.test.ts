import { test } from 'node:test';
import assert from 'node:assert/strict';
import { GestureGate, SessionGestures } from './gesture-gate.ts';

type Kind = 'open-url' | 'file-export';

function gate() {
  let now = 1000;
  const g = new GestureGate<Kind>({ now: () => now });
  return { g, advance: (ms: number) => void (now += ms) };
}

test('gesture gate refuses a frame when the operator made no gesture', () => {
  const { g } = gate();
  assert.equal(g.consume('open-url', 3000), false);
});

test('gesture gate honours one frame per gesture, however many arrive', () => {
  const { g, advance } = gate();
  g.gesture('open-url');
  advance(100);
  const results = Array.from({ length: 20 }, () => g.consume('open-url', 3000));
  assert.deepEqual(results.filter(Boolean).length, 1);
  assert.equal(results[0], true);
  // A second gesture allows exactly one more.
  g.gesture('open-url');
  assert.equal(g.consume('open-url', 3000), true);
  assert.equal(g.consume('open-url', 3000), false);
});

test('gesture gate expires gestures after the window', () => {
  const { g, advance } = gate();
  g.gesture('open-url');
  advance(3001);
  assert.equal(g.consume('open-url', 3000), false);
  g.gesture('open-url');
  advance(3000);
  assert.equal(g.consume('open-url', 3000), true);
});

test('gesture gate keeps kinds apart, and a multi-kind gesture is used up by its first use', () => {
  const { g } = gate();
  g.gesture('file-export');
  assert.equal(g.consume('open-url', 3000), false);
  assert.equal(g.consume('file-export', 3000), true);
  g.gesture(['open-url', 'file-export']);
  assert.equal(g.consume('open-url', 3000), true);
  assert.equal(g.consume('file-export', 3000), false);
});

test('gesture gate forgets gestures on clear and ignores a clock going backwards', () => {
  let now = 5000;
  const g = new GestureGate<Kind>({ now: () => now });
  g.gesture('open-url');
  g.clear();
  assert.equal(g.consume('open-url', 3000), false);
  g.gesture('open-url');
  now = 4000;
  assert.equal(g.consume('open-url', 3000), false);
});

test('gesture gate remembers a bounded number of gestures', () => {
  const { g } = gate();
  for (let i = 0; i < 100; i++) g.gesture('open-url');
  let n = 0;
  while (g.consume('open-url', 3000)) n++;
  assert.ok(n > 0 && n <= 16, `consumed ${n}`);
});

test('session gestures: one gesture lets exactly one request through, whichever feature asks first', () => {
  let now = 1000;
  const s = new SessionGestures({ now: () => now });
  s.record('palette-key');
  const asked = [s.consume('open'), s.consume('export'), s.consume('clipboard')];
  assert.deepEqual(asked, [true, false, false]);
  s.record('palette-key');
  assert.deepEqual([s.consume('clipboard'), s.consume('open'), s.consume('export')], [true, false, false]);
  // A click never authorises a clipboard read.
  s.record('click');
  assert.equal(s.consume('clipboard'), false);
  assert.equal(s.consume('export'), true);
  now += 10;
  assert.equal(s.consume('open'), false);
});

test('session gestures: palette navigation, detach and a repeated palette key are not more gestures', () => {
  let now = 1000;
  const s = new SessionGestures({ now: () => now });
  for (const g of ['palette-key', 'palette-action', 'palette-key', 'palette-key']) {
    s.record(g);
    now += 100;
  }
  assert.equal(s.consume('open'), true);
  assert.equal(s.consume('open'), false);
  // Clicks are each a gesture of their own.
  s.record('click');
  s.record('click');
  assert.equal(s.consume('open'), true);
  assert.equal(s.consume('open'), true);
  assert.equal(s.consume('open'), false);
});
