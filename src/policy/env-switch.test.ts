import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { envSwitch, isOffWord, isOnWord, OFF_WORDS, ON_WORDS, SWITCHES, type SwitchName } from './env-switch.ts';

/** Each word as written, shouted, capitalised and padded: the vocabulary is trimmed and any case. */
const spellings = (w: string): string[] => [w, w.toUpperCase(), w.charAt(0).toUpperCase() + w.slice(1), ` ${w} `, `\t${w}\n`];

test('envSwitch: the off-words turn every switch off, the on-words on, in any case and with spaces around', () => {
  const names = Object.keys(SWITCHES) as SwitchName[];
  assert.ok(names.length >= 9, 'every switch is listed');
  for (const name of names) {
    for (const w of OFF_WORDS.flatMap(spellings)) assert.equal(envSwitch({ [name]: w }, name), false, `${name}=${JSON.stringify(w)}`);
    for (const w of ON_WORDS.flatMap(spellings)) assert.equal(envSwitch({ [name]: w }, name), true, `${name}=${JSON.stringify(w)}`);
  }
});

test('envSwitch: unset, empty or an unknown value leaves each switch at its default', () => {
  for (const [name, spec] of Object.entries(SWITCHES) as [SwitchName, { default: boolean }][]) {
    for (const v of [undefined, '', '   ', 'maybe', 'offf', 'o n', 'enable']) {
      assert.equal(envSwitch(v === undefined ? {} : { [name]: v }, name), spec.default, `${name}=${JSON.stringify(v)}`);
    }
    // Another switch's value is not this one's.
    assert.equal(envSwitch({ JACKIN_OTHER: spec.default ? 'off' : 'on' }, name), spec.default, name);
  }
});

test('envSwitch: a switch word of its own (JACKIN_NOTIFY_BELL=unfocused) turns only that switch on', () => {
  for (const w of spellings('unfocused')) assert.equal(envSwitch({ JACKIN_NOTIFY_BELL: w }, 'JACKIN_NOTIFY_BELL'), true, w);
  assert.equal(envSwitch({ JACKIN_GRAPHICS: 'unfocused' }, 'JACKIN_GRAPHICS'), false);
});

test('the vocabulary: no word is both on and off; isOffWord and isOnWord read it trimmed and in any case', () => {
  assert.deepEqual(
    OFF_WORDS.filter((w) => ON_WORDS.includes(w)),
    [],
  );
  for (const w of OFF_WORDS.flatMap(spellings)) assert.ok(isOffWord(w) && !isOnWord(w), w);
  for (const w of ON_WORDS.flatMap(spellings)) assert.ok(isOnWord(w) && !isOffWord(w), w);
  for (const w of [undefined, '', 'desktop', 'ask', 'ctrl+v', 'of f']) assert.ok(!isOffWord(w) && !isOnWord(w), String(w));
});

test('docs/guide.md lists every switch with its default and the vocabulary, word for word', () => {
  const guide = readFileSync(new URL('../../docs/guide.md', import.meta.url), 'utf8');
  const section = guide.slice(guide.indexOf('## Environment variables'));
  const words = (ws: readonly string[]): string =>
    `${ws
      .slice(0, -1)
      .map((w) => `\`${w}\``)
      .join(', ')} and \`${ws.at(-1)}\``;
  const prose = section.replace(/\s+/g, ' ');
  assert.ok(prose.includes(`${words(OFF_WORDS)} turn it off`), 'the off-words');
  assert.ok(prose.includes(`${words(ON_WORDS)} turn it on`), 'the on-words');
  for (const [name, spec] of Object.entries(SWITCHES)) {
    const row = new RegExp(`^\\| \`${name}\` \\| switch, default ${spec.default ? 'on' : 'off'}\\b`, 'm');
    assert.match(section, row, `${name} has a row that says it is a switch and its default`);
  }
  const rows = [...section.matchAll(/^\| `(JACKIN_[A-Z_]+)` \| switch,/gm)].map((m) => m[1]);
  assert.deepEqual(rows.sort(), Object.keys(SWITCHES).sort(), 'no row calls a variable a switch that is not one');
});
