import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ScreenModeTracker } from './screen-mode-tracker.ts';

test('ScreenModeTracker follows the last alternate-screen switch (1049, 1047, 47, combined params)', () => {
  const t = new ScreenModeTracker();
  t.push(Buffer.from('x\x1b[?1049hdraw'));
  assert.equal(t.onAlternateScreen, true);
  t.push(Buffer.from('\x1b[?1049l'));
  assert.equal(t.onAlternateScreen, false);
  t.push(Buffer.from('\x1b[?1;47h'));
  assert.equal(t.onAlternateScreen, true);
  t.push(Buffer.from('\x1b[?25h\x1b[?1047l'));
  assert.equal(t.onAlternateScreen, false);
  t.push(Buffer.from('\x1b[?2004h\x1b[?10490h'));
  assert.equal(t.onAlternateScreen, false);
});

test('ScreenModeTracker sees a switch split across output chunks', () => {
  for (let cut = 1; cut < 8; cut++) {
    const seq = Buffer.from('ab\x1b[?1049h');
    const t = new ScreenModeTracker();
    t.push(seq.subarray(0, 2 + cut));
    t.push(seq.subarray(2 + cut));
    assert.equal(t.onAlternateScreen, true, `cut at ${cut}`);
  }
});
