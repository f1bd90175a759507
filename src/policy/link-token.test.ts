import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { lineFromCells, lineFromString, linkTokenAt, linkTokensIn, pathTokenAt, trimToken, type Cell } from './link-token.ts';

/** Column of the first occurrence of `needle` in an ASCII line. */
function colOf(line: string, needle: string): number {
  const i = line.indexOf(needle);
  assert.ok(i >= 0, `${needle} not in ${line}`);
  return i;
}

test('linkTokenAt trims trailing punctuation and keeps only balanced brackets', () => {
  const line = 'see https://example.com/a_(b)).';
  for (let col = colOf(line, 'https'); col < colOf(line, '))') + 1; col++) {
    assert.equal(linkTokenAt(line, col)?.text, 'https://example.com/a_(b)', `col ${col}`);
  }
  // The unmatched ')' and the '.' are not part of the link: clicking them finds nothing.
  assert.equal(linkTokenAt(line, line.length - 2), null);
  assert.equal(linkTokenAt(line, line.length - 1), null);
  assert.equal(linkTokenAt(line, 0), null);
});

test('linkTokenAt finds URLs inside punctuation, quotes and markup', () => {
  const cases: [string, string][] = [
    ['(https://example.com/x)', 'https://example.com/x'],
    ['"https://example.com/q?a=1&b=2"', 'https://example.com/q?a=1&b=2'],
    ["'https://example.com/'.", 'https://example.com/'],
    ['<https://example.com/path>', 'https://example.com/path'],
    ['[link](https://example.com/doc)', 'https://example.com/doc'],
    ['Visit https://en.wikipedia.org/wiki/Foo_(bar)!', 'https://en.wikipedia.org/wiki/Foo_(bar)'],
    ['mail mailto:dev@example.com, thanks', 'mailto:dev@example.com'],
    ['HTTPS://EXAMPLE.COM/UP;', 'HTTPS://EXAMPLE.COM/UP'],
    ['login: https://x.example/cb?next=https://y.example/z.', 'https://x.example/cb?next=https://y.example/z'],
    ['http://example.com/a[1]/b{2}', 'http://example.com/a[1]/b{2}'],
  ];
  for (const [line, want] of cases) {
    const col = line.indexOf(want);
    assert.ok(col >= 0);
    assert.equal(linkTokenAt(line, col + 2)?.text, want, line);
  }
});

test('linkTokenAt ignores schemes that do not start a word and bare schemes', () => {
  assert.equal(linkTokenAt('xhttps://example.com', 3), null);
  assert.equal(linkTokenAt('see https:// now', 6), null);
  assert.equal(linkTokenAt('mailto:', 2), null);
  assert.equal(linkTokenAt('javascript:alert(1)', 3), null);
  assert.equal(linkTokenAt('ftp://example.com', 3), null);
});

test('linkTokenAt maps columns through wide characters', () => {
  // "漢字 https://例え.jp/パス 終" with each CJK character two columns wide.
  const cells: Cell[] = [];
  for (const ch of '漢字 https://例え.jp/パス 終') {
    const wide = /[\u3000-\u9fff\u30a0-\u30ff]/u.test(ch);
    cells.push({ chars: ch, width: wide ? 2 : 1 });
    if (wide) cells.push({ chars: '', width: 0 });
  }
  const line = lineFromCells(cells);
  assert.equal(line.columnToIndex.length, cells.length);
  // Column 5 is the 'h' (after two wide characters and a space).
  const t = linkTokenAt(line, 5);
  assert.deepEqual(t, { text: 'https://例え.jp/パス', startCol: 5, endCol: 5 + 'https://'.length + 4 + 3 + 1 + 4 });
  // Clicking the right half of a wide character inside the URL finds the URL too.
  assert.equal(linkTokenAt(line, 5 + 'https://'.length + 1)?.text, 'https://例え.jp/パス');
  assert.equal(linkTokenAt(line, 1), null);
});

test('lineFromCells reads empty cells as spaces and keeps multi-unit characters whole', () => {
  const line = lineFromCells([
    { chars: 'a', width: 1 },
    { chars: '', width: 1 },
    { chars: '😀', width: 2 },
    { chars: '', width: 0 },
    { chars: 'e\u0301', width: 1 },
  ]);
  assert.equal(line.text, 'a \u{1F600}e\u0301');
  assert.deepEqual(line.columnToIndex, [0, 1, 2, 2, 4]);
  assert.deepEqual(line.indexToColumn, [0, 1, 2, 2, 4, 4]);
});

test('pathTokenAt finds absolute and relative paths and drops punctuation and locations', () => {
  const cases: [string, string, string][] = [
    ['wrote /tmp/out/report.txt.', 'report', '/tmp/out/report.txt'],
    ['see (build/out.png)', 'out', 'build/out.png'],
    ['error at src/a.ts:12:5: boom', 'a.ts', 'src/a.ts'],
    ["saved 'shots/1.png', done", 'shots', 'shots/1.png'],
    ['file ./x_(1).log', 'x_', './x_(1).log'],
    ['../up/here', 'up', '../up/here'],
    ['notes.md:', 'notes', 'notes.md'],
  ];
  for (const [line, near, want] of cases) {
    assert.equal(pathTokenAt(line, colOf(line, near))?.text, want, line);
  }
  assert.equal(pathTokenAt('open https://example.com/x now', 8), null);
  assert.equal(pathTokenAt('a -- b', 2), null);
  assert.equal(pathTokenAt('a    b', 2), null);
});

test('trimToken cuts at the first unmatched closer and strips trailing punctuation', () => {
  assert.equal(trimToken('a_(b)).'), 'a_(b)');
  assert.equal(trimToken('x]y'), 'x');
  assert.equal(trimToken('a(b]c)'), 'a(b');
  assert.equal(trimToken('end?!"\''), 'end');
  assert.equal(trimToken('open('), 'open');
});

// ---- properties ----

const urlChar = fc.constantFrom(..."abcXYZ019-._~/?#[]@!$&'()*+,;=%:{}".split(''));
const noise = fc.constantFrom(...'ab (),.;:!?\'"[]{}<> \t'.split(''));
const lineArb = fc
  .tuple(
    fc.array(noise, { maxLength: 8 }).map((a) => a.join('')),
    fc.constantFrom('http://', 'https://', 'mailto:', 'HTTPS://'),
    fc.array(urlChar, { minLength: 0, maxLength: 30 }).map((a) => a.join('')),
    fc.array(noise, { maxLength: 8 }).map((a) => a.join('')),
  )
  .map(([pre, scheme, body, post]) => `${pre}${scheme}${body}${post}`);

function closersMatched(s: string): boolean {
  const pairs: Record<string, string> = { ')': '(', ']': '[', '}': '{' };
  const stack: string[] = [];
  for (const ch of s) {
    if (ch === '(' || ch === '[' || ch === '{') stack.push(ch);
    else if (pairs[ch] !== undefined) {
      if (stack.pop() !== pairs[ch]) return false;
    }
  }
  return true;
}

test('property: a link token is a substring of the line at its columns and contains the column', () => {
  fc.assert(
    fc.property(lineArb, fc.nat(60), (line, rawCol) => {
      const col = rawCol % (line.length + 1);
      const t = linkTokenAt(line, col);
      if (t === null) return;
      assert.equal(line.slice(t.startCol, t.endCol), t.text);
      assert.ok(t.startCol <= col && col < t.endCol);
      assert.match(t.text, /^(?:https?:\/\/|mailto:)./iu);
      assert.ok(!/[\s<>"`]/u.test(t.text));
      assert.ok(!/[.,;:!?'"([{]$/u.test(t.text), t.text);
      assert.ok(closersMatched(t.text), `unbalanced: ${t.text}`);
    }),
    { numRuns: 2000 },
  );
});

test('property: a path token is a substring of the line at its columns and contains the column', () => {
  fc.assert(
    fc.property(fc.array(fc.constantFrom(...'ab/._-~ ()[]:,.\'"1'.split('')), { maxLength: 40 }), fc.nat(60), (chars, rawCol) => {
      const line = chars.join('');
      const col = rawCol % (line.length + 1);
      const t = pathTokenAt(line, col);
      if (t === null) return;
      assert.equal(line.slice(t.startCol, t.endCol), t.text);
      assert.ok(t.startCol <= col && col < t.endCol);
      assert.ok(!/\s/u.test(t.text));
      assert.ok(closersMatched(t.text), `unbalanced: ${t.text}`);
    }),
    { numRuns: 2000 },
  );
});

test('property: every column of a found link finds the same link', () => {
  fc.assert(
    fc.property(lineArb, (line) => {
      for (let col = 0; col < line.length; col++) {
        const t = linkTokenAt(line, col);
        if (t === null) continue;
        for (let c = t.startCol; c < t.endCol; c++) assert.deepEqual(linkTokenAt(line, c), t);
      }
    }),
    { numRuns: 300 },
  );
});

test('property: with wide cells the token still matches the columns it reports', () => {
  const cellArb = fc.oneof(
    fc.constantFrom(...'htps:/mailoexample.com()'.split('')).map((ch): Cell[] => [{ chars: ch, width: 1 }]),
    fc.constantFrom('漢', '😀', 'ア').map((ch): Cell[] => [
      { chars: ch, width: 2 },
      { chars: '', width: 0 },
    ]),
    fc.constant<Cell[]>([{ chars: '', width: 1 }]),
  );
  fc.assert(
    fc.property(fc.array(cellArb, { maxLength: 30 }), fc.nat(80), (groups, rawCol) => {
      const prefix: Cell[] = [...'x https://'].map((ch) => ({ chars: ch, width: 1 }));
      const cells = [...prefix, ...groups.flat()];
      const line = lineFromCells(cells);
      const col = rawCol % cells.length;
      const t = linkTokenAt(line, col);
      if (t === null) return;
      const covered = cells
        .slice(t.startCol, t.endCol)
        .map((c) => (c.width === 0 ? '' : c.chars === '' ? ' ' : c.chars))
        .join('');
      assert.equal(covered, t.text);
      assert.ok(t.startCol <= col && col < t.endCol);
    }),
    { numRuns: 2000 },
  );
});

test('lineFromString counts one column per code point', () => {
  const line = lineFromString('a😀b');
  assert.equal(line.columnToIndex.length, 3);
  assert.equal(linkTokenAt('😀 https://example.com', 2)?.startCol, 2);
});

test('linkTokensIn lists every URL of a line once, left to right, past wide characters', () => {
  const cells: Cell[] = [];
  for (const ch of '表 https://a.example/x 漢 (http://b.example) xhttp://no mailto:m@c.example. https://q.example/?n=https://r.example') {
    const wide = /[表漢]/u.test(ch);
    cells.push({ chars: ch, width: wide ? 2 : 1 });
    if (wide) cells.push({ chars: '', width: 0 });
  }
  const got = linkTokensIn(lineFromCells(cells)).map((t) => [t.text, t.startCol]);
  assert.deepEqual(got, [
    ['https://a.example/x', 3],
    ['http://b.example', 27],
    ['mailto:m@c.example', 56],
    ['https://q.example/?n=https://r.example', 76],
  ]);
  assert.deepEqual(linkTokensIn('no links here, just http:// and mailto:'), []);
});

test('linkTokensIn agrees with linkTokenAt at every column of every token it lists', () => {
  const piece = fc.constantFrom('https://a.b/c', 'http://x.y', 'mailto:z@w', ' ', '(', ')', '.', 'x', '?q=https://i.j', '"', 'é');
  fc.assert(
    fc.property(fc.array(piece, { maxLength: 20 }), (parts) => {
      const s = parts.join('');
      const tokens = linkTokensIn(s);
      let last = 0;
      for (const t of tokens) {
        assert.ok(t.startCol >= last, 'tokens do not overlap');
        last = t.endCol;
        for (let c = t.startCol; c < t.endCol; c++) assert.deepEqual(linkTokenAt(s, c), t);
      }
      // And no column outside them is a link.
      for (let c = 0; c < s.length; c++) {
        if (!tokens.some((t) => c >= t.startCol && c < t.endCol)) assert.equal(linkTokenAt(s, c), null, `column ${c} of ${JSON.stringify(s)}`);
      }
    }),
  );
});
