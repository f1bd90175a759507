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

test('a notice is wrapped, not cut: its longest text is whole down to 40 columns; narrower, it stops at 12 rows', () => {
  const text = Array.from({ length: 80 }, (_, i) => `w${String(i).padStart(3, '0')}`).join(' '); // 399 columns
  const rowsOf = (drawn: string) => [...drawn.matchAll(/\x1b\[(\d+);1H\x1b#5\x1b\[\d+;\d+H\x1b\[[\d;]+m([^\x1b]*)/gu)].map((m) => m[2]!);
  const at40 = rowsOf(renderNotice({ level: 'error', text }, 40));
  assert.ok(at40.length > 1 && at40.length <= 12, `${at40.length} rows`);
  assert.equal(at40.map((r) => r.trim()).join(' '), `✗ ${text}`);
  for (const r of at40) assert.ok(r.length <= 38, r);
  const at20 = rowsOf(renderNotice({ level: 'error', text }, 20));
  assert.equal(at20.length, 12);
  assert.ok(at20.at(-1)!.trim().endsWith('…'));
});
