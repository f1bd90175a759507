import { test } from 'node:test';
import assert from 'node:assert/strict';
import { NOTICE_MS, NoticeQueue, renderNotice } from './notices.ts';

test('a notice is shown, then removed after its time', () => {
  let now = 1000;
  const q = new NoticeQueue(() => now);
  assert.equal(q.post('success', 'Image staged'), true);
  assert.equal(q.current?.text, 'Image staged');
  now += NOTICE_MS - 1;
  assert.equal(q.tick(), false);
  now += 1;
  assert.equal(q.tick(), true);
  assert.equal(q.current, null);
});

test('queued notices are shown in order, each for a shorter time', () => {
  let now = 0;
  const q = new NoticeQueue(() => now);
  q.post('info', 'one');
  q.post('info', 'two');
  q.post('error', 'three');
  const seen = [q.current?.text];
  while (q.current) {
    now = q.deadline!;
    q.tick();
    if (q.current) seen.push(q.current.text);
  }
  assert.deepEqual(seen, ['one', 'two', 'three']);
  assert.ok(now < 3 * NOTICE_MS);
});

test('container text in a notice is inert: no ESC, BEL or newline reaches the terminal', () => {
  const q = new NoticeQueue();
  q.post('error', 'Export refused: evil\x1b]0;pwned\x07name\n\x1b[2J');
  const drawn = renderNotice(q.current!, 80);
  // Our own sequences are DECSC, six resets (origin, insert, charset, SGR, margins, synchronized update), a
  // hyperlink close (OSC 8 and its ST), a move to column 1, DECSWL, the move to the notice, SGR, SGR reset,
  // DECRC; nothing from the text may add more.
  const escapes = drawn.match(/\x1b/g) ?? [];
  assert.equal(escapes.length, 15);
  assert.ok(!drawn.includes('\x07'));
  assert.ok(!drawn.includes('\n'));
  assert.ok(drawn.includes('\\x1b]0;pwned\\x07name\\n\\x1b[2J'));
});
