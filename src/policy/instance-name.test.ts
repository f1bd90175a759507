import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { inertText } from '../ui/inert-text.ts';
import { describeRefusedName, instanceNameProblem, MAX_INSTANCE_NAME_LENGTH } from './instance-name.ts';

test('ordinary names are instance names', () => {
  for (const name of ['bash', 'agent-2', 'review.v1', 'a_b', 'café', '编辑', 'x'.repeat(MAX_INSTANCE_NAME_LENGTH)])
    assert.equal(instanceNameProblem(name), null, name);
});

test('control, format, bidi, separator, white space and path characters are refused, as are dot dirs and a leading dash', () => {
  const bad = [
    '',
    '.',
    '..',
    '-x',
    'x'.repeat(MAX_INSTANCE_NAME_LENGTH + 1),
    'q\x1b]52;c;SEVZ\x07',
    'a\nb',
    'a\rb',
    'a\tb',
    'a\x7fb',
    'a\u0085b',
    'a\u009bb',
    'evil\u202egnp',
    'a\u2066b\u2069',
    'a\u200bb',
    'a\u200db',
    '\ufeffa',
    'a\u{e0041}',
    'a\u2028b',
    'a\u2029b',
    'a b',
    'a\u00a0b',
    'a/b',
    'a\\b',
    'a\0b',
    'a\ud800b',
    'a\ue000b',
  ];
  for (const name of bad) assert.notEqual(instanceNameProblem(name), null, JSON.stringify(name));
});

test('every accepted name is already inert: printing it as it is shows exactly it', () => {
  fc.assert(
    fc.property(fc.string({ unit: 'binary', maxLength: 40 }), (name) => {
      if (instanceNameProblem(name) === null) assert.equal(inertText(name, 1000), name);
    }),
    { numRuns: 5000 },
  );
});

test('a refused name is described with printable ASCII only', () => {
  fc.assert(
    fc.property(fc.string({ unit: 'binary', maxLength: 80 }), (name) => {
      assert.match(describeRefusedName(name), /^"[\x21-\x7e]*(…)?"$/u);
    }),
  );
  assert.equal(describeRefusedName('q\x1b]52'), '"q\\u{1b}]52"');
});
