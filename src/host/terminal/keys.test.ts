import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeKeys } from './keys.ts';

test('decodeKeys names arrows, editing keys and UTF-8 characters', () => {
  const keys = decodeKeys(Buffer.from('a\x1b[A\x1bOB\r\x7f\x1b[3~é\x15', 'utf8'));
  assert.deepEqual(
    keys.map((k) => (k.name === 'char' ? `char:${k.text}` : k.name)),
    ['char:a', 'up', 'down', 'enter', 'backspace', 'delete', 'char:é', 'ctrl-u'],
  );
});

test('decodeKeys reads a lone ESC as escape', () => {
  assert.deepEqual(decodeKeys(Buffer.from([0x1b])), [{ name: 'escape' }]);
});
