import { test } from 'node:test';
import assert from 'node:assert/strict';
import { NOTICE_MS } from '../../ui/notices.ts';
import { CONTAINER_NOTICE_RATE, NoticeBoard } from './notice-board.ts';

function clock() {
  let t = 1_000_000;
  return { now: () => t, advance: (ms: number) => (t += ms) };
}

test('a flood of container notices never pushes out or delays a host notice', () => {
  const c = clock();
  const board = new NoticeBoard(c.now);
  assert.equal(board.post('success', 'Opened https://evil.example'), true);
  for (let i = 0; i < 100; i++) {
    board.post('info', `capsule: spam ${i}`, 'container');
    c.advance(10);
  }
  assert.equal(board.current?.text, 'Opened https://evil.example');
  assert.equal(board.dropped, 100 - CONTAINER_NOTICE_RATE.max);
  // It stays for its full time, then the container's turn comes.
  assert.equal(board.deadline, 1_000_000 + NOTICE_MS);
  c.advance(NOTICE_MS);
  assert.equal(board.tick(), true);
  assert.notEqual(board.current?.text, 'Opened https://evil.example');
});

test('a host notice replaces a container notice on screen at once and host notices keep their order', () => {
  const c = clock();
  const board = new NoticeBoard(c.now);
  assert.equal(board.post('info', 'capsule: hello', 'container'), true);
  assert.equal(board.current?.text, 'capsule: hello');
  assert.equal(board.post('success', 'Saved a.txt'), true);
  assert.equal(board.current?.text, 'Saved a.txt');
  assert.equal(board.post('success', 'Saved b.txt'), false);
  c.advance(NOTICE_MS);
  board.tick();
  assert.equal(board.current?.text, 'Saved b.txt');
  // The container notice waited under the host's and shows again, for its full time.
  c.advance(NOTICE_MS);
  assert.equal(board.tick(), true);
  assert.equal(board.current?.text, 'capsule: hello');
  assert.equal(board.deadline, c.now() + NOTICE_MS);
  c.advance(NOTICE_MS);
  assert.equal(board.tick(), true);
  assert.equal(board.current, null);
});

test('container notices are rate limited per window, and accepted again after it', () => {
  const c = clock();
  const board = new NoticeBoard(c.now);
  for (let i = 0; i < CONTAINER_NOTICE_RATE.max + 2; i++) board.post('info', `capsule: ${i}`, 'container');
  assert.equal(board.dropped, 2);
  c.advance(CONTAINER_NOTICE_RATE.windowMs);
  board.post('info', 'capsule: later', 'container');
  assert.equal(board.dropped, 2);
});

test('a host notice withdrawn before its time (the keys hint at the first key) gives way at once to the next', () => {
  const now = 1000;
  const board = new NoticeBoard(() => now);
  board.post('info', 'hint');
  board.post('info', 'next');
  board.post('info', 'capsule: c', 'container');
  assert.equal(board.withdraw('other'), false, 'a notice not shown or queued changes nothing');
  assert.equal(board.withdraw('hint'), true);
  assert.equal(board.current?.text, 'next');
  assert.equal(board.withdraw('next'), true);
  assert.equal(board.current?.text, 'capsule: c', 'the container notice shows once no host notice is up');
  assert.equal(board.deadline, now + NOTICE_MS);
});
