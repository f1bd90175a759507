import { test } from 'node:test';
import assert from 'node:assert/strict';
import { inertLogLine } from './logs-command.ts';

test('jackin logs: a log line to a terminal keeps its text and tabs, and shows every control character as an escape', () => {
  assert.equal(inertLogLine('plain\ttabbed'), 'plain\ttabbed');
  assert.equal(inertLogLine('\x1b]52;c;AAAA\x07red\x1b[31m\r'), '\\x1b]52;c;AAAA\\x07red\\x1b[31m\\r');
  assert.equal(inertLogLine('evil\u202egnp.exe'), 'evil\\u202egnp.exe');
  // Not cut: a long line of the log stays whole.
  assert.equal(inertLogLine('x'.repeat(5000)).length, 5000);
});
