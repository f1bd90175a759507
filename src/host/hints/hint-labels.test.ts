import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { ListedLink } from '../../protocol/index.ts';
import { decodeKeys } from '../terminal/keys.ts';
import { HostScreen } from '../terminal/host-screen.ts';
import { buildHints, hintKey, hintLabels, MAX_HINTS, renderHints, seenAt } from './hint-labels.ts';

const link = (row: number, col: number, url: string, source: ListedLink['source'] = 'text'): ListedLink => ({ row, col, cells: 4, source, url });
const key = (s: string) => decodeKeys(Buffer.from(s, 'latin1'))[0]!;

test('hint labels: one letter up to 26 links, then two letters each, never one a prefix of another', () => {
  assert.deepEqual(hintLabels(3), ['a', 's', 'd']);
  fc.assert(
    fc.property(fc.integer({ min: 0, max: 400 }), (n) => {
      const labels = hintLabels(n);
      assert.equal(labels.length, Math.min(n, MAX_HINTS));
      assert.equal(new Set(labels).size, labels.length);
      for (const a of labels) {
        assert.match(a, /^[a-z]{1,2}$/);
        for (const b of labels) if (a !== b) assert.ok(!b.startsWith(a), `${a} is a prefix of ${b}`);
      }
    }),
  );
});

test('hints: the capsule list is checked again: off-screen cells, refused targets, shared first cells and the excess get no label', () => {
  const set = buildHints(
    [
      link(0, 0, 'https://a.example/'),
      link(24, 0, 'https://off-screen.example/'),
      link(0, 80, 'https://off-screen.example/'),
      link(1, 2, 'javascript:alert(1)', 'osc8'),
      link(1, 9, 'https://user:pw@creds.example/'),
      link(0, 0, 'https://same-cell.example/'),
      { ...link(2, 0, 'https://zero-width.example/'), cells: 0 },
      link(3, 5, 'HTTPS://B.example/x', 'osc8'),
    ],
    { rows: 24, cols: 80 },
  );
  assert.deepEqual(
    set.hints.map((h) => [h.label, h.row, h.col, h.source, h.checked.href]),
    [
      ['a', 0, 0, 'text', 'https://a.example/'],
      ['s', 3, 5, 'osc8', 'https://b.example/x'],
    ],
  );
  assert.deepEqual(set.dropped, { outside: 3, refused: 2, duplicate: 1, over: 0, unseen: 0 });
  const many = buildHints(
    Array.from({ length: 200 }, (_, i) => link(Math.floor(i / 80), i % 80, `https://h${i}.example/`)),
    { rows: 24, cols: 80 },
  );
  assert.equal(many.hints.length, MAX_HINTS);
  assert.equal(many.dropped.over, 200 - MAX_HINTS);
});

test('hints: labels are drawn at their first cells with absolute moves, cut at the right edge, filtered by what was typed', () => {
  const { hints } = buildHints([link(0, 0, 'https://a.example/'), link(4, 79, 'https://b.example/')], { rows: 24, cols: 80 });
  const out = renderHints(hints, 80);
  assert.equal(out, '\x1b[1;1H\x1b[0;1;30;103ma\x1b[5;80H\x1b[0;1;30;103ms\x1b[0m');
  assert.doesNotMatch(out, /[\n\r]/);
  assert.equal(renderHints(hints, 80, 's'), '\x1b[5;80H\x1b[0;1;30;103ms\x1b[0m');
});

test('hints: typing a label chooses its link, Esc, Ctrl+C and the palette key cancel, other keys change nothing', () => {
  const { hints } = buildHints(
    Array.from({ length: 30 }, (_, i) => link(i % 20, i, `https://h${i}.example/`)),
    { rows: 24, cols: 80 },
  );
  assert.deepEqual(hintKey(hints, '', key('a')), { type: 'pending', typed: 'a' });
  const chosen = hintKey(hints, 'a', key('s'));
  assert.equal(chosen.type === 'chosen' && chosen.hint.checked.href, 'https://h1.example/');
  assert.deepEqual(hintKey(hints, 'a', key('\x7f')), { type: 'pending', typed: '' });
  assert.deepEqual(hintKey(hints, '', key('q')), { type: 'pending', typed: '' }, 'no label starts with q');
  assert.deepEqual(hintKey(hints, '', key('A')), { type: 'pending', typed: '' });
  assert.deepEqual(hintKey(hints, 'a', key('\x1b')), { type: 'cancel' });
  assert.deepEqual(hintKey(hints, '', key('\x03')), { type: 'cancel' });
  assert.deepEqual(hintKey(hints, '', 'palette'), { type: 'cancel' });
});

test("hints: seenAt, the host's own view against a listed link: the URL text itself, a hyperlink's known text and target", () => {
  const view = new HostScreen(4, 30);
  view.write(
    Buffer.from(
      '\x1b[?1049l\x1b[!p\x1b[r\x1b[H\x1b[2Jsee https://a.example/x\r\n\x1b]8;;https://t.example/\x1b\\docs\x1b]8;;\x1b\\ 🫨 https://b.example/',
      'utf8',
    ),
  );
  assert.equal(seenAt(view, { row: 0, col: 4, cells: 19, source: 'text', url: 'https://a.example/x' }), 'https://a.example/x');
  assert.equal(seenAt(view, { row: 0, col: 4, cells: 19, source: 'text', url: 'https://a.example/y' }), null);
  assert.equal(
    seenAt(view, { row: 0, col: 5, cells: 18, source: 'text', url: 'ttps://a.example/x' }),
    'ttps://a.example/x',
    'the check is of cells, not of URL rules',
  );
  assert.equal(seenAt(view, { row: 1, col: 0, cells: 4, source: 'osc8', url: 'https://t.example/' }), 'docs');
  assert.equal(seenAt(view, { row: 1, col: 0, cells: 4, source: 'osc8', url: 'https://evil.example/' }), null, 'the host saw another target there');
  assert.equal(seenAt(view, { row: 2, col: 0, cells: 4, source: 'osc8', url: 'https://t.example/' }), null, 'blank cells');
  assert.equal(seenAt(view, { row: 1, col: 8, cells: 17, source: 'text', url: 'https://b.example/' }), null, 'after an emoji: not known');
});
