import { test } from 'node:test';
import assert from 'node:assert/strict';
import { capsuleSizeArgs, ttySize } from './tty-size.ts';

test("tty size: a terminal's size becomes --rows/--cols; no terminal, no options (the capsule keeps 80x24)", () => {
  assert.deepEqual(capsuleSizeArgs({ isTTY: true, rows: 50, columns: 200 }), ['--rows', '50', '--cols', '200']);
  assert.deepEqual(capsuleSizeArgs({ isTTY: false, rows: 50, columns: 200 }), []);
  assert.deepEqual(capsuleSizeArgs({}), []);
  assert.equal(ttySize({ isTTY: true, rows: 0, columns: 80 }), null);
  assert.deepEqual(ttySize({ isTTY: true, rows: 100000, columns: 80 }), { rows: 0xffff, cols: 80 });
});
