import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pathToFileURL } from 'node:url';
import fc from 'fast-check';
import { parsePastedPaths, renderPath, rewritePaste, type PathQuoting } from './pasted-paths.ts';

const paths = (text: string): string[] | null => parsePastedPaths(text)?.words.map((w) => w.path) ?? null;

test('pasted paths: what terminals and file managers type on a drop', () => {
  // GNOME Terminal: single-quoted, space-separated, trailing space.
  assert.deepEqual(paths("'/home/me/a b.pdf' '/home/me/c.csv' "), ['/home/me/a b.pdf', '/home/me/c.csv']);
  // macOS Terminal / iTerm2 / kitty: backslash-escaped.
  assert.deepEqual(paths("/Users/me/a\\ b.pdf /Users/me/it\\'s.txt"), ['/Users/me/a b.pdf', "/Users/me/it's.txt"]);
  // A file manager's copy pasted as text: file URLs, one per line.
  assert.deepEqual(paths('file:///home/me/a%20b.pdf\r\nfile:///home/me/c.csv\r\n'), ['/home/me/a b.pdf', '/home/me/c.csv']);
  assert.deepEqual(paths('"/tmp/say \\"hi\\".txt"'), ['/tmp/say "hi".txt']);
  for (const notPaths of [
    'hello',
    'see /tmp/a.txt',
    'relative/a.txt',
    '/tmp/a.txt ~/b.txt',
    "'/tmp/open",
    'https://x/a',
    'file://host/a',
    '/tmp/a\x1b[31m',
    '',
    ' \n ',
  ]) {
    assert.equal(parsePastedPaths(notPaths), null, JSON.stringify(notPaths));
  }
  assert.equal(parsePastedPaths(Buffer.from([0x2f, 0xff])), null, 'invalid UTF-8');
  assert.equal(parsePastedPaths(Array.from({ length: 65 }, (_, i) => `/tmp/${i}`).join(' ')), null, 'too many paths');
});

test('pasted paths: rewriting keeps each quoting, the separators, and never ends with a line end', () => {
  const parsed = parsePastedPaths('\'/h/a b.pdf\' /h/c\\ d.csv "/h/e.txt" file:///h/f%20g.md\n')!;
  assert.deepEqual(
    parsed.words.map((w) => w.quoting),
    ['single', 'plain', 'double', 'uri'],
  );
  const out = rewritePaste(parsed, ['/run/files/1/a b.pdf', '/run/files/2/c d.csv', '/run/files/3/e $x.txt', '/run/files/4/f g.md']);
  assert.equal(out, '\'/run/files/1/a b.pdf\' /run/files/2/c\\ d.csv "/run/files/3/e \\$x.txt" file:///run/files/4/f%20g.md');
  assert.equal(rewritePaste(parsePastedPaths('/a\n/b\n')!, ['/x', '/y']), '/x /y');
});

const quoting = fc.constantFrom<PathQuoting>('plain', 'single', 'double', 'uri');
const component = fc
  .string({ minLength: 1, maxLength: 12 })
  .filter((s) => !/[/\x00-\x1f\x7f]/.test(s) && s !== '.' && s !== '..' && Buffer.from(s, 'utf8').toString('utf8') === s);
const absPath = fc.array(component, { minLength: 1, maxLength: 4 }).map((c) => `/${c.join('/')}`);

test('pasted paths property: any absolute paths rendered in any quoting parse back to the same paths and quotings', () => {
  fc.assert(
    fc.property(fc.array(fc.tuple(absPath, quoting), { minLength: 1, maxLength: 5 }), fc.constantFrom(' ', '\n', '\r\n', '  '), (items, sep) => {
      // URLs normalise `.`/`..` components and percent-encode; compare with what the URL itself names.
      const text = items.map(([p, q]) => renderPath(p, q)).join(sep);
      const parsed = parsePastedPaths(text);
      assert.ok(parsed !== null, text);
      assert.deepEqual(
        parsed.words.map((w) => w.quoting),
        items.map(([, q]) => q),
      );
      assert.deepEqual(
        parsed.words.map((w) => w.path),
        items.map(([p, q]) => (q === 'uri' ? decodeURIComponent(new URL(pathToFileURL(p).href).pathname) : p)),
      );
      // And a rewrite with other paths parses back to those.
      const others = items.map((_, k) => `/run/files/${k}/x y'"$\\z`);
      assert.deepEqual(
        parsePastedPaths(rewritePaste(parsed, others))!.words.map((w) => w.path),
        others,
      );
    }),
  );
});
