import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { cutColumns, inertJson, inertText, padColumns, textWidth } from './inert-text.ts';

test('inertText turns ESC, BEL, CSI and newlines into visible escapes', () => {
  assert.equal(inertText('a\x1b[2Jb\x07c\nd'), 'a\\x1b[2Jb\\x07c\\nd');
  assert.equal(inertText('evil\u202egnp.exe'), 'evil\\u202egnp.exe');
  assert.equal(inertText('\x9b31m'), '\\x9b31m');
});

test('inertText never lets a control or bidi character through, and respects the column cap', () => {
  fc.assert(
    fc.property(fc.string({ unit: 'binary', maxLength: 300 }), fc.integer({ min: 2, max: 120 }), (s, max) => {
      const out = inertText(s, max);
      assert.doesNotMatch(out, /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/u);
      assert.ok(textWidth(out) <= max);
    }),
  );
});

test('cutColumns counts wide characters as two columns', () => {
  assert.equal(textWidth('日本'), 4);
  assert.equal(cutColumns('日本語テキスト', 5), '日本…');
  assert.equal(padColumns('ab', 4), 'ab  ');
});

// Characters the two old sets (inert text's and file names') did not share; one set now covers them all.
const ONCE_DISAGREED = ['\u061c', '\u200b', '\u200c', '\u200d', '\u2028', '\u2029', '\u2060', '\u2064'];

test('inertText escapes every character of the one unsafe set, including those only file names used to drop', () => {
  for (const c of ONCE_DISAGREED) assert.equal(inertText(`a${c}b`), `a\\u${c.codePointAt(0)!.toString(16).padStart(4, '0')}b`);
  assert.equal(inertText('\u{e0041}'), '\\u{e0041}', 'a tag character, escaped unambiguously');
  assert.equal(inertText('\u00ad'), '\\xad', 'a soft hyphen (invisible) is shown');
});

test('inertJson round-trips every string and never writes a control, bidi, zero-width or tag character raw', () => {
  const hidden = 'a\u200bb\u2060c\u{e0041}d\u0085e\u202ef\u2028g\x1b[2Jh\u009b6n';
  const line = inertJson({ program: [hidden] });
  assert.equal(line, '{"program":["a\\u200bb\\u2060c\\udb40\\udc41d\\u0085e\\u202ef\\u2028g\\u001b[2Jh\\u009b6n"]}');
  fc.assert(
    fc.property(fc.string({ unit: 'binary', maxLength: 200 }), (s) => {
      const out = inertJson({ s });
      assert.deepEqual(JSON.parse(out), { s });
      assert.equal(/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u.test(out), false, out);
    }),
  );
});

test('textWidth: combining marks take no column, emoji drawn as pictures take two', () => {
  assert.equal(textWidth('\u30c6\u3099'), 2, 'a decomposed voiced kana is one wide character');
  assert.equal(textWidth('e\u0301\u20dd'), 1);
  assert.equal(textWidth('\u2705\u231a'), 4);
  assert.equal(textWidth('\u2600'), 1, 'text-presentation by default');
});
