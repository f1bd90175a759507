import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfirmPrompt } from './confirm-prompt.ts';

/** The text a terminal would show: our own CSI sequences (SGR, cursor position, cursor visibility) removed. */
function visible(s: string): string {
  return s.replace(/\x1b\[[0-9;?]*[A-Za-z]|\x1b#5/gu, '\n');
}

test('the prompt shows the exact target with scheme and host emphasised, and an IDN as punycode', () => {
  const p = new ConfirmPrompt({ kind: 'url', target: 'https://xn--bcher-kva.example/docs?q=1#x' });
  const s = p.render(30, 100);
  assert.ok(s.includes('\x1b[0;1;97;40mhttps://\x1b[0;1;4;97;40mxn--bcher-kva.example\x1b[0;37;40m/docs?q=1#x'), JSON.stringify(s));
  assert.match(visible(s), /international name: shown as punycode; reads as bücher\.example/u);
  assert.match(visible(s), /Open this link\?/u);
  assert.match(visible(s), /Enter open · Esc cancel/u);
});

test("a hyperlink's target is named as such, with the text the screen showed for it", () => {
  const p = new ConfirmPrompt({ kind: 'url', target: 'https://evil.example/phish', hyperlink: true, label: 'https://good.example/docs' });
  const v = visible(p.render(30, 100));
  assert.match(v, /Open this hyperlink target\?/u);
  assert.ok(v.indexOf('evil.example') < v.indexOf('hyperlink target; the text on screen reads:'));
  assert.match(v, /good\.example\/docs/u);
});

test('a pasted symlink: the file it leads to first, then the path pasted, both inert; Enter stages', () => {
  const v = visible(new ConfirmPrompt({ kind: 'stage', target: '/home/me/Documents/passport.png', label: '/work/shot\x1b]0;x\x07.png' }).render(30, 100));
  assert.match(v, /Send this host file into the container\?/u);
  assert.ok(v.indexOf('/home/me/Documents/passport.png') < v.indexOf('the path pasted, a symlink that leads there, reads:'), v);
  assert.ok(v.includes('/work/shot\\x1b]0;x\\x07.png'), v);
  assert.match(v, /Enter stage · Esc cancel/u);
});

test('the target is drawn inert and whole, wrapped, and cut only past six lines with the count left out', () => {
  const hostile = '/work/a\x1b]52;c;eA==\x07\u009b2J.txt';
  const v = visible(new ConfirmPrompt({ kind: 'export', target: hostile, verb: 'export and open' }).render(30, 80));
  assert.ok(v.includes('/work/a\\x1b]52;c;eA==\\x07\\x9b2J.txt'), v);
  assert.equal(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/u.test(v), false);
  assert.match(v, /Enter export and open · Esc cancel/u);
  const long = `https://example.com/${'a'.repeat(300)}`;
  const lines = new ConfirmPrompt({ kind: 'url', target: long }).lines(40).map((l) => l.map((c) => c.ch).join(''));
  // Title, blank, six lines of target (each after one space of margin), then the count of the rest.
  const drawn = lines
    .slice(2, 8)
    .map((l) => l.slice(1))
    .join('');
  assert.ok(long.startsWith(drawn));
  assert.equal(Number(/^ … and (\d+) more characters$/u.exec(lines[8] ?? '')?.[1]), long.length - drawn.length);
  const short = new ConfirmPrompt({ kind: 'url', target: `https://example.com/${'b'.repeat(100)}` }).lines(40);
  assert.equal(
    short
      .map((l) => l.map((c) => c.ch).join(''))
      .join('')
      .split('b').length - 1,
    100,
  );
});

test('only a read that is exactly Enter confirms; Esc alone or Ctrl+C cancels; anything else is ignored', () => {
  const p = new ConfirmPrompt({ kind: 'url', target: 'https://example.com/' });
  assert.equal(p.key(Buffer.from('\r')), 'confirm');
  assert.equal(p.key(Buffer.from('\n')), 'confirm');
  assert.equal(p.key(Buffer.from('\x1b')), 'cancel');
  assert.equal(p.key(Buffer.from('\x03')), 'cancel');
  for (const s of ['y', 'x\r', '\r\r', '\x1b[200~\r\x1b[201~', '\x1b[A', ' ', '\x1b[13;2u']) assert.equal(p.key(Buffer.from(s)), 'ignore', JSON.stringify(s));
});

test('the prompt takes Enter, Esc and Ctrl+C in the kitty keyboard protocol and modifyOtherKeys; a release is no key', () => {
  const p = new ConfirmPrompt({ kind: 'url', target: 'https://example.com/' });
  const key = (s: string) => p.key(Buffer.from(s, 'latin1'));
  for (const s of ['\x1b[27u', '\x1b[27;1:1u\x1b[27;1:3u', '\x1b[99;5u', '\x1b[99;5u\x1b[99;5:3u', '\x1b[27;5;99~', '\x1b[27;1;27~'])
    assert.equal(key(s), 'cancel', JSON.stringify(s));
  for (const s of ['\x1b[13u', '\x1b[13u\x1b[13;1:3u', '\r\x1b[13;1:3u', '\x1b[57414u', '\x1b[27;1;13~']) assert.equal(key(s), 'confirm', JSON.stringify(s));
  // A release alone, Ctrl+Enter, or Enter among other keys answers nothing.
  for (const s of ['\x1b[13;1:3u', '\x1b[13;5u', 'x\x1b[13u', '\x1b[27;5;13~']) assert.equal(key(s), 'ignore', JSON.stringify(s));
});

test('a copy asks to copy: the title and the hint line say so, the whole target shown', () => {
  const v = visible(new ConfirmPrompt({ kind: 'url', target: 'https://evil.example/steal?token=1', hyperlink: true, verb: 'copy' }).render(30, 100));
  assert.match(v, /Copy this hyperlink target\?/u);
  assert.ok(v.includes('evil.example') && v.includes('/steal?token=1'), v);
  assert.match(v, /Enter copy · Esc cancel/u);
  assert.match(visible(new ConfirmPrompt({ kind: 'url', target: 'https://a.example/', verb: 'copy' }).render(30, 100)), /Copy this link\?/u);
});
