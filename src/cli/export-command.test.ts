import { test } from 'node:test';
import assert from 'node:assert/strict';
import { charWidth as glibcWidth } from '../capsule/screen/char-width-provider.ts';
import { fitProgressLine } from './export-command.ts';

/** Columns a terminal draws `s` in, by the screen model's glibc table (an oracle independent of src/ui's). */
function drawnColumns(s: string): number {
  let w = 0;
  for (const ch of s) w += glibcWidth(ch.codePointAt(0)!);
  return w;
}

const NAMES = {
  cjk: '日本語のとても長いファイル名_報告書_二〇二六年十二月_最終版_改訂三_確認済み.pdf'.repeat(2),
  // NFD: every voiced kana is a base and U+3099, which once counted two columns of its own.
  combining: 'テ\u3099ータ\u3099ヘ\u3099ース\u3099'.repeat(10) + 'e\u0301\u0327'.repeat(20),
  emoji: '\u2705\u231a\u{1f4e6}\u{1f680}\u{1f469}\u200d\u{1f4bb}report'.repeat(10),
  latin: 'a'.repeat(300),
};

test('the export progress line is cut by the columns a terminal draws, never wider than the terminal', () => {
  for (const [kind, name] of Object.entries(NAMES)) {
    const line = `${name}: 1.0 MiB / 2.0 MiB (50%)  1.0 MiB/s  ETA 1s`;
    for (const cols of [1, 2, 10, 20, 40, 60, 80, 133]) {
      const fitted = fitProgressLine(line, cols);
      assert.ok(drawnColumns(fitted) <= Math.max(1, cols - 1), `${kind} at ${cols} columns: ${fitted} is ${drawnColumns(fitted)} columns`);
    }
  }
});

test('a progress line that fits is shown whole', () => {
  assert.equal(fitProgressLine('日本.txt: 1 B / 1 B (100%)', 80), '日本.txt: 1 B / 1 B (100%)');
  // 40 wide characters are 80 columns: cut at 59 (one short of the width), not at 59 characters.
  const cut = fitProgressLine('字'.repeat(40), 60);
  assert.equal(drawnColumns(cut), 59);
  assert.ok(cut.endsWith('\u2026'));
});
