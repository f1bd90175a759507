import { test } from 'node:test';
import assert from 'node:assert/strict';
import { charWidth } from './char-width-provider.ts';
import { ScreenModel } from './screen-model.ts';

test('char widths: glibc wcwidth values, plus emoji newer than the glibc table', () => {
  const cases: Array<[number, number]> = [
    [0x41, 1],
    [0xe9, 1],
    [0x301, 0],
    [0x200b, 0],
    [0xfe0f, 0],
    [0x1160, 0],
    [0x4e00, 2],
    [0x3042, 2],
    [0xac00, 2],
    [0xff21, 2],
    [0x26a1, 2],
    [0x2764, 1],
    [0x263a, 1],
    [0x1f90c, 2],
    [0x1f600, 2],
    [0x1f3fd, 2],
    [0x1f1fa, 1],
    [0x1fae8, 2],
    [0x20000, 2],
    [0xe0001, 0],
    [0x10ffff, 1],
  ];
  for (const [cp, w] of cases) assert.equal(charWidth(cp), w, `U+${cp.toString(16).toUpperCase()}`);
});

test('char widths: the model advances as tmux does (combining and ZWJ sequences join one cell)', async () => {
  const m = new ScreenModel({ rows: 2, cols: 40 });
  const advance = async (s: string): Promise<number> => {
    m.write(Buffer.from(`\x1b[H\x1b[2K${s}`, 'utf8'));
    await m.settle();
    return m.cursor.x;
  };
  assert.equal(await advance('\u{1F90C}'.repeat(3)), 6);
  assert.equal(await advance('e\u0301x'), 2);
  assert.equal(await advance('\u{1F468}\u200d\u{1F469}\u200d\u{1F467}x'), 3);
  assert.equal(await advance('\u{1F1FA}\u{1F1F8}'), 2);
  assert.equal(await advance('\u{1F44D}\u{1F3FD}'), 4);
  assert.equal(await advance('\u2764\ufe0f'), 1);
  assert.equal(await advance('漢字'), 4);
  m.dispose();
});
