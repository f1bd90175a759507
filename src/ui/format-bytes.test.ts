import { test } from 'node:test';
import assert from 'node:assert/strict';
import { formatBytes } from './format-bytes.ts';

test('formatBytes picks the unit and keeps one decimal below 10', () => {
  assert.equal(formatBytes(0), '0 B');
  assert.equal(formatBytes(1023), '1023 B');
  assert.equal(formatBytes(1536), '1.5 KiB');
  assert.equal(formatBytes(20 * 1024 * 1024), '20 MiB');
  assert.equal(formatBytes(1024 ** 3), '1.0 GiB');
  assert.equal(formatBytes(3 * 1024 ** 5), '3072 TiB');
});
