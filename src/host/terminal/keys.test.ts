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

type Wanted = 'escape' | 'ctrl-c' | 'enter' | 'up' | 'down' | 'left' | 'right' | 'a' | 'A' | 'd';
const KEYS: ReadonlyArray<{ want: Wanted; code: number; mods: number; legacy: string; arrow?: string }> = [
  { want: 'escape', code: 27, mods: 0, legacy: '\x1b' },
  { want: 'ctrl-c', code: 99, mods: 4, legacy: '\x03' },
  { want: 'enter', code: 13, mods: 0, legacy: '\r' },
  { want: 'up', code: 0, mods: 0, legacy: '\x1b[A', arrow: 'A' },
  { want: 'down', code: 0, mods: 0, legacy: '\x1b[B', arrow: 'B' },
  { want: 'left', code: 0, mods: 0, legacy: '\x1b[D', arrow: 'D' },
  { want: 'right', code: 0, mods: 0, legacy: '\x1b[C', arrow: 'C' },
  { want: 'a', code: 97, mods: 0, legacy: 'a' },
  { want: 'A', code: 97, mods: 1, legacy: 'A' },
  { want: 'd', code: 100, mods: 0, legacy: 'd' },
];

/** What a terminal with kitty keyboard flags `flags` sends for a key's press and (flag 2) release. */
function kitty(k: (typeof KEYS)[number], flags: number): { press: string; release: string } {
  const all = (flags & 8) !== 0;
  const events = (flags & 2) !== 0;
  if (k.arrow !== undefined) return { press: `\x1b[${k.arrow}`, release: events ? `\x1b[1;1:3${k.arrow}` : '' };
  // Flag 1 gives Esc and modified keys a CSI u; plain text, Enter, Tab and Backspace stay legacy without flag 8.
  const escaped = all || k.code === 27 || (k.mods & ~1) !== 0;
  if (!escaped) return { press: k.legacy, release: '' };
  const alt = (flags & 4) !== 0 && k.mods === 1 ? `:${k.code - 32}` : '';
  const text = (flags & 16) !== 0 && k.code >= 32 && (k.mods & ~1) === 0 ? `;${k.mods === 1 ? k.code - 32 : k.code}` : '';
  const mods = k.mods === 0 && text === '' ? '' : `;${k.mods === 0 ? '' : k.mods + 1}`;
  return { press: `\x1b[${k.code}${alt}${mods}${text}u`, release: events ? `\x1b[${k.code}${alt};${k.mods + 1}:3u` : '' };
}

const asName = (k: ReturnType<typeof decodeKeys>[number]) => (k.name === 'char' ? k.text : k.name);

test('decodeKeys: Esc, Ctrl+C, Enter, arrows and letters in every kitty keyboard level (flags 1-31), press and release in one read or two', () => {
  for (let flags = 1; flags <= 31; flags++) {
    for (const k of KEYS) {
      const { press, release } = kitty(k, flags);
      const what = `flags ${flags}, ${k.want}: ${JSON.stringify(press + release)}`;
      assert.deepEqual(decodeKeys(Buffer.from(press + release, 'latin1')).map(asName), [k.want], what);
      assert.deepEqual(decodeKeys(Buffer.from(release, 'latin1')), [], `${what}: a release is no key`);
    }
  }
  // A lone modifier key (flag 8 reports Shift, Ctrl... by themselves) is no key either.
  assert.deepEqual(decodeKeys(Buffer.from('\x1b[57441u\x1b[57442;5u\x1b[57441;2:3u')), []);
});

test('decodeKeys: modifyOtherKeys 1 and 2 (CSI 27;mods;code ~)', () => {
  assert.deepEqual(decodeKeys(Buffer.from('\x1b[27;5;99~')).map(asName), ['ctrl-c']);
  assert.deepEqual(decodeKeys(Buffer.from('\x1b[27;1;27~\x1b[27;1;13~\x1b[27;2;65~\x1b[27;1;100~')).map(asName), ['escape', 'enter', 'A', 'd']);
  // Other modified keys stay unnamed: Ctrl+Enter is not Enter, Alt+d is not d.
  assert.deepEqual(
    decodeKeys(Buffer.from('\x1b[27;5;13~\x1b[27;3;100~')).map((k) => k.name),
    ['other', 'other'],
  );
});
