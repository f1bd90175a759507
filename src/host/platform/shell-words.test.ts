import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { hasCode, JackinError } from '../../errors.ts';
import { splitCommandLine } from './opener.ts';
import { splitShellWords } from './shell-words.ts';

test('shell words: quotes and escapes like sh, no expansion', () => {
  assert.deepEqual(splitShellWords(`a 'b c' "d \\"e\\" \\$f" g\\ h $HOME ~`), ['a', 'b c', 'd "e" $f', 'g h', '$HOME', '~']);
  assert.deepEqual(splitShellWords(`'it'\\''s'`), ["it's"]);
  assert.deepEqual(splitShellWords(`  ''  `), ['']);
  assert.deepEqual(splitShellWords(''), []);
  assert.deepEqual(splitShellWords('$(rm -rf /) `id` ; x'), ['$(rm', '-rf', '/)', '`id`', ';', 'x']);
  assert.throws(
    () => splitShellWords(`"open`),
    (e) => hasCode(e, 'E_BAD_QUOTING'),
  );
  assert.throws(
    () => splitShellWords(`'open`),
    (e) => hasCode(e, 'E_BAD_QUOTING'),
  );
  assert.throws(
    () => splitShellWords(`end\\`),
    (e) => hasCode(e, 'E_BAD_QUOTING'),
  );
});

// Where the two splitters jackin had (JACKIN_OPENER's and the clipboard's) disagreed; each answer is what
// `sh` gives (checked below against /bin/sh itself).
const DISAGREED: ReadonlyArray<readonly [string, string[], string]> = [
  ['a\u00a0b', ['a\u00a0b'], 'a no-break space is part of a word, not a blank'],
  ['a\rb', ['a\rb'], 'a carriage return is part of a word'],
  ['a\vb\fc', ['a\vb\fc'], 'vertical tab and form feed are part of a word'],
  ['ab\\\ncd', ['abcd'], 'a backslash-newline outside quotes is a line continuation'],
  ['"ab\\\ncd"', ['abcd'], 'a backslash-newline inside double quotes is a line continuation'],
  ['a \\\n b', ['a', 'b'], 'a continuation between words leaves no empty word'],
];

test('shell words: the cases where the old splitters disagreed', () => {
  for (const [line, words, why] of DISAGREED) {
    assert.deepEqual(splitShellWords(line), words, why);
    // JACKIN_OPENER reads words through the same splitter.
    assert.deepEqual(splitCommandLine(line), words, `JACKIN_OPENER: ${why}`);
  }
});

test('shell words: the expected answers are what /bin/sh itself makes of each line', async () => {
  const { spawnSync } = await import('node:child_process');
  for (const [line, words] of DISAGREED) {
    const r = spawnSync('/bin/sh', ['-c', `for w in ${line}; do printf '%s\\0' "$w"; done`], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    assert.deepEqual(r.stdout.split('\0').slice(0, -1), words, JSON.stringify(line));
  }
});

test('shell words: each caller chooses the error for bad quoting', () => {
  assert.throws(
    () => splitCommandLine("'open"),
    (e) => hasCode(e, 'E_OPENER_CONFIG') && /an unterminated single quote/.test((e as JackinError).message),
  );
  const custom = new JackinError('E_BAD_QUOTING', 'custom');
  assert.throws(
    () => splitShellWords('x\\', () => custom),
    (e) => e === custom,
  );
});

test('property: words joined back with sh single quoting split into the same words', () => {
  const quote = (w: string): string => `'${w.replaceAll("'", `'\\''`)}'`;
  fc.assert(
    fc.property(fc.array(fc.string({ unit: 'binary-ascii' }), { maxLength: 8 }), fc.constantFrom(' ', '\t', '\n', '  \t'), (words, sep) => {
      assert.deepEqual(splitShellWords(words.map(quote).join(sep)), words);
    }),
  );
});
