import { test } from 'node:test';
import assert from 'node:assert/strict';
import xh from '@xterm/headless';
import { checkUrl, MAX_URL_LENGTH } from '../../policy/url-safety.ts';
import { createOsc8Tracker, listVisibleLinks, resolveLinkAt, resolvePathAt, type Osc8Tracker } from './links.ts';

const { Terminal } = xh;
type Term = InstanceType<typeof Terminal>;

function setup(cols = 40, rows = 6, scrollback = 100): { term: Term; tracker: Osc8Tracker } {
  const term = new Terminal({ cols, rows, scrollback, allowProposedApi: true });
  const tracker = createOsc8Tracker(term);
  return { term, tracker };
}

function write(term: Term, data: string): Promise<void> {
  return new Promise((resolve) => term.write(data, resolve));
}

const link = (target: string, label: string, params = ''): string => `\x1b]8;${params};${target}\x1b\\${label}\x1b]8;;\x1b\\`;

test('a printed URL resolves by the shared token rule, trailing punctuation excluded', async () => {
  const { term, tracker } = setup();
  await write(term, 'printf output:\r\nsee https://example.com/a_(b)).\r\n');
  const line = 'see https://example.com/a_(b)).';
  for (const col of [4, 10, line.indexOf('(b)') + 2]) {
    assert.deepEqual(resolveLinkAt(term, tracker, 1, col), { url: 'https://example.com/a_(b)', source: 'text', label: 'https://example.com/a_(b)' });
  }
  assert.equal(resolveLinkAt(term, tracker, 1, line.length - 1), null);
  assert.equal(resolveLinkAt(term, tracker, 1, 0), null);
  assert.equal(resolveLinkAt(term, tracker, 99, 0), null);
  assert.equal(resolveLinkAt(term, tracker, 1, -1), null);
});

test('an OSC 8 hyperlink resolves to its target, not its label', async () => {
  const { term, tracker } = setup();
  await write(term, `go ${link('https://other.example/', 'https://good.example')} now`);
  for (let col = 3; col < 3 + 'https://good.example'.length; col++) {
    assert.deepEqual(resolveLinkAt(term, tracker, 0, col), { url: 'https://other.example/', source: 'osc8', label: 'https://good.example' });
  }
  const checked = checkUrl(resolveLinkAt(term, tracker, 0, 5)?.url ?? '');
  assert.ok(checked.ok && checked.display === 'https://other.example');
  assert.equal(resolveLinkAt(term, tracker, 0, 1), null);
  assert.equal(resolveLinkAt(term, tracker, 0, 3 + 'https://good.example'.length + 1), null);
});

test('OSC 8 with BEL terminator, id parameters and a ";" inside the target', async () => {
  const { term, tracker } = setup();
  await write(term, '\x1b]8;id=42:x=y;https://e.example/a;b=c\x07click\x1b]8;;\x07 rest');
  assert.deepEqual(resolveLinkAt(term, tracker, 0, 2), { url: 'https://e.example/a;b=c', source: 'osc8', label: 'click' });
  assert.equal(resolveLinkAt(term, tracker, 0, 7), null);
});

test('a dangerous OSC 8 target is returned as is, never replaced by its harmless label', async () => {
  const { term, tracker } = setup();
  await write(term, link('javascript:alert(1)', 'https://safe.example'));
  const r = resolveLinkAt(term, tracker, 0, 2);
  assert.deepEqual(r, { url: 'javascript:alert(1)', source: 'osc8', label: 'https://safe.example' });
  assert.equal(checkUrl(r?.url ?? '').ok, false);
});

test('an over-long OSC 8 target stays too long to pass the host check', async () => {
  const { term, tracker } = setup();
  const target = `https://e.example/${'a'.repeat(MAX_URL_LENGTH * 2)}`;
  await write(term, link(target, 'label'));
  const r = resolveLinkAt(term, tracker, 0, 1);
  assert.equal(r?.url.length, MAX_URL_LENGTH + 1);
  const c = checkUrl(r?.url ?? '');
  assert.ok(!c.ok && c.code === 'E_URL_TOO_LONG');
});

test('an OSC 8 hyperlink that wraps covers its cells on both rows', async () => {
  const { term, tracker } = setup(20);
  await write(term, `0123456789${link('https://wrap.example/', 'ABCDEFGHIJKLMNOPQRSTUVWXY')}!`);
  // Label starts at row 0 col 10 and ends at row 1 col 14 (exclusive col 15).
  assert.equal(resolveLinkAt(term, tracker, 0, 9), null);
  assert.equal(resolveLinkAt(term, tracker, 0, 10)?.url, 'https://wrap.example/');
  assert.equal(resolveLinkAt(term, tracker, 0, 19)?.url, 'https://wrap.example/');
  assert.equal(resolveLinkAt(term, tracker, 1, 0)?.url, 'https://wrap.example/');
  assert.equal(resolveLinkAt(term, tracker, 1, 14)?.label, 'ABCDEFGHIJKLMNOPQRSTUVWXY');
  assert.equal(resolveLinkAt(term, tracker, 1, 15), null);
});

test('a link that ends exactly at the right margin covers the last column', async () => {
  const { term, tracker } = setup(10);
  await write(term, `abcde${link('https://edge.example/', 'VWXYZ')}`);
  assert.equal(resolveLinkAt(term, tracker, 0, 9)?.url, 'https://edge.example/');
  await write(term, 'next');
  assert.equal(resolveLinkAt(term, tracker, 1, 0), null);
});

test('a plain URL that wraps is read as one token across rows', async () => {
  const { term, tracker } = setup(20);
  await write(term, 'url: https://example.com/a/very/long/path.');
  assert.equal(resolveLinkAt(term, tracker, 1, 3)?.url, 'https://example.com/a/very/long/path');
  assert.equal(resolveLinkAt(term, tracker, 0, 6)?.url, 'https://example.com/a/very/long/path');
});

test('wide characters before and inside a link keep columns right', async () => {
  const { term, tracker } = setup();
  await write(term, '漢字 https://例え.jp/x 終\r\n');
  // 漢 and 字 take columns 0-3, the space column 4, the URL starts at column 5.
  assert.equal(resolveLinkAt(term, tracker, 0, 4), null);
  assert.equal(resolveLinkAt(term, tracker, 0, 5)?.url, 'https://例え.jp/x');
  assert.equal(resolveLinkAt(term, tracker, 0, 5 + 'https://'.length + 1)?.url, 'https://例え.jp/x');
  await write(term, `漢${link('https://wide.example/', '字字')}x`);
  assert.equal(resolveLinkAt(term, tracker, 1, 1), null);
  assert.deepEqual(resolveLinkAt(term, tracker, 1, 2), { url: 'https://wide.example/', source: 'osc8', label: '字字' });
  assert.equal(resolveLinkAt(term, tracker, 1, 5)?.url, 'https://wide.example/');
  assert.equal(resolveLinkAt(term, tracker, 1, 6), null);
});

test('a link that scrolled into the scrollback still resolves where it is now', async () => {
  const { term, tracker } = setup(40, 4, 100);
  await write(term, `${link('https://old.example/', 'old-link')}\r\n`);
  for (let i = 0; i < 10; i++) await write(term, `filler ${i}\r\n`);
  assert.equal(tracker.hitTest(0, 2)?.url, 'https://old.example/');
  term.scrollToTop();
  assert.equal(resolveLinkAt(term, tracker, 0, 2)?.url, 'https://old.example/');
  term.scrollToBottom();
  assert.equal(resolveLinkAt(term, tracker, 0, 2), null);
});

test('when the scrollback is trimmed, links move with their lines and vanish with them', async () => {
  const { term, tracker } = setup(40, 3, 3);
  await write(term, 'a\r\nb\r\nc\r\n');
  await write(term, `${link('https://moved.example/', 'moved')}\r\n`);
  // The link is on absolute line 3 of at most 6 (3 rows + 3 scrollback); three more line feeds trim two.
  for (let i = 0; i < 3; i++) await write(term, `filler ${i}\r\n`);
  assert.equal(term.buffer.active.getLine(1)?.translateToString(true), 'moved');
  assert.equal(tracker.hitTest(1, 1)?.url, 'https://moved.example/');
  assert.equal(tracker.hitTest(3, 1), null);
  for (let i = 0; i < 10; i++) await write(term, `more ${i}\r\n`);
  assert.equal(tracker.hitTest(1, 1), null);
});

test('overwritten or cleared link text no longer resolves to the old target', async () => {
  const { term, tracker } = setup();
  await write(term, `${link('https://old.example/', 'click here')}\r`);
  await write(term, 'see https://plain.example/ ok');
  assert.deepEqual(resolveLinkAt(term, tracker, 0, 5), { url: 'https://plain.example/', source: 'text', label: 'https://plain.example/' });
  await write(term, `\r\n${link('https://gone.example/', 'gone')}\x1b[2J`);
  assert.equal(resolveLinkAt(term, tracker, 1, 1), null);
});

test('alternate-screen links resolve there and are gone when it is left', async () => {
  const { term, tracker } = setup();
  await write(term, 'normal text here');
  await write(term, `\x1b[?1049h\x1b[H${link('https://alt.example/', 'alt link')}`);
  assert.equal(resolveLinkAt(term, tracker, 0, 1)?.url, 'https://alt.example/');
  await write(term, '\x1b[?1049l');
  assert.equal(resolveLinkAt(term, tracker, 0, 1), null);
  // Back on the alternate screen the old link is gone even if the same text is drawn again.
  await write(term, '\x1b[?1049h\x1b[Halt link');
  assert.equal(resolveLinkAt(term, tracker, 0, 1), null);
});

test('alternate-screen scrolling moves a link with its cells', async () => {
  const { term, tracker } = setup(40, 4);
  await write(term, `\x1b[?1049h\x1b[2;1H${link('https://alt.example/', 'link')}\x1b[4;1H\n`);
  assert.equal(resolveLinkAt(term, tracker, 1, 1), null);
  assert.equal(resolveLinkAt(term, tracker, 0, 1)?.url, 'https://alt.example/');
  // Scrolled off the top: gone.
  await write(term, '\n');
  assert.equal(resolveLinkAt(term, tracker, 0, 1), null);
});

test('a link still being printed resolves up to the cursor', async () => {
  const { term, tracker } = setup();
  await write(term, '\x1b]8;;https://open.example/\x1b\\partial');
  assert.deepEqual(resolveLinkAt(term, tracker, 0, 3), { url: 'https://open.example/', source: 'osc8', label: 'partial' });
  assert.equal(resolveLinkAt(term, tracker, 0, 8), null);
});

test('a new OSC 8 link closes the previous one', async () => {
  const { term, tracker } = setup();
  await write(term, '\x1b]8;;https://one.example/\x1b\\one\x1b]8;;https://two.example/\x1b\\two\x1b]8;;\x1b\\');
  assert.equal(resolveLinkAt(term, tracker, 0, 1)?.url, 'https://one.example/');
  assert.equal(resolveLinkAt(term, tracker, 0, 4)?.url, 'https://two.example/');
});

test('resize keeps a link on the cells it reflowed to', async () => {
  const { term, tracker } = setup();
  await write(term, `abc ${link('https://r.example/', 'resized')}`);
  term.resize(30, 6);
  assert.equal(resolveLinkAt(term, tracker, 0, 5)?.url, 'https://r.example/');
  assert.equal(resolveLinkAt(term, tracker, 0, 1), null);
});

test('a link closed after the cursor moved keeps its target on the cells written while it was open (Copilot sign-in)', async () => {
  const { term, tracker } = setup(40, 6);
  // The sequence: CR LF and a cursor move over unwritten cells before the close, then a spinner
  // drawn into those cells.
  await write(term, '\x1b]8;;https://example.com/m5?y=1&state=abc\x07https://example.com/m5\r\n\x1b[3C\x1b]8;;\x07Waiting\r * \r');
  for (const col of [0, 10, 21]) {
    assert.deepEqual(resolveLinkAt(term, tracker, 0, col), { url: 'https://example.com/m5?y=1&state=abc', source: 'osc8', label: 'https://example.com/m5' });
  }
  assert.equal(resolveLinkAt(term, tracker, 0, 22), null);
  // The cells the cursor crossed were never written while the link was open: not part of it.
  for (const col of [0, 1, 2, 3, 5]) assert.equal(resolveLinkAt(term, tracker, 1, col), null);
  assert.deepEqual(listVisibleLinks(term, tracker), [{ row: 0, col: 0, cells: 22, source: 'osc8', url: 'https://example.com/m5?y=1&state=abc' }]);
  // The spinner goes on redrawing beside the link, and then into the link's own cells.
  for (const frame of ['-', '\\', '|', '/']) await write(term, `\x1b[2;2H${frame}\x1b[1;30H${frame}`);
  assert.equal(resolveLinkAt(term, tracker, 0, 5)?.url, 'https://example.com/m5?y=1&state=abc');
  await write(term, '\x1b[1;5H*');
  assert.equal(resolveLinkAt(term, tracker, 0, 4), null, 'a link cell overwritten with other output is not the link any more');
  assert.equal(resolveLinkAt(term, tracker, 0, 3)?.url, 'https://example.com/m5?y=1&state=abc');
  assert.equal(resolveLinkAt(term, tracker, 0, 5)?.url, 'https://example.com/m5?y=1&state=abc');
});

test('a link written while the cursor jumps around covers exactly the cells it wrote', async () => {
  const { term, tracker } = setup(40, 6);
  await write(term, '\x1b]8;;https://jump.example/\x07AB\x1b[3;10HCD\x1b[1;1H\x1b]8;;\x07ZZ');
  assert.equal(resolveLinkAt(term, tracker, 0, 0), null, 'overwritten after the close');
  assert.equal(resolveLinkAt(term, tracker, 2, 9)?.url, 'https://jump.example/');
  assert.equal(resolveLinkAt(term, tracker, 2, 10)?.label, 'CD');
  assert.equal(resolveLinkAt(term, tracker, 1, 5), null);
});

test('a link cleared from the screen does not come back when the same text is drawn there again', async () => {
  for (const erase of ['\x1b[H\x1b[2J', '\x1b[H\x1b[J', '\x1b[1;1H\x1b[2K', '\x1b[1;1H\x1b[K', '\x1b[1;1H\x1b[40X', '\x1bc']) {
    const { term, tracker } = setup(40, 6);
    await write(term, `${link('https://old.example/', 'https://example.com/same')}\r\n`);
    assert.equal(resolveLinkAt(term, tracker, 0, 3)?.url, 'https://old.example/');
    await write(term, `${erase}\x1b[1;1Hhttps://example.com/same`);
    assert.deepEqual(
      resolveLinkAt(term, tracker, 0, 3),
      { url: 'https://example.com/same', source: 'text', label: 'https://example.com/same' },
      JSON.stringify(erase),
    );
    assert.deepEqual(listVisibleLinks(term, tracker), [{ row: 0, col: 0, cells: 24, source: 'text', url: 'https://example.com/same' }], JSON.stringify(erase));
  }
});

test('a link scrolled off the screen does not come back on the row that took its place', async () => {
  const { term, tracker } = setup(40, 3, 0);
  await write(term, `${link('https://old.example/', 'https://example.com/same')}\r\nx\r\ny\r\nz`);
  await write(term, '\x1b[1;1Hhttps://example.com/same');
  assert.equal(resolveLinkAt(term, tracker, 0, 3)?.source, 'text');
  // Inside a scroll region (SU) as well.
  const r = setup(40, 4, 0);
  await write(r.term, `\x1b[2;3r\x1b[2;1H${link('https://old.example/', 'https://example.com/same')}\x1b[S\x1b[2;1Hhttps://example.com/same`);
  assert.equal(resolveLinkAt(r.term, r.tracker, 1, 3)?.source, 'text');
});

test('resolvePathAt reads path tokens, file: hyperlinks, and the token left of the cursor', async () => {
  const { term, tracker } = setup(60);
  await write(term, 'wrote /tmp/out/report.txt.\r\n');
  assert.deepEqual(resolvePathAt(term, tracker, 0, 8), { path: '/tmp/out/report.txt', source: 'text', label: '/tmp/out/report.txt' });
  // `ls --hyperlink` style: the target names the file with a host part, the label is the bare name.
  await write(term, `${link('file://container-7/work/dir/na%20me.png', 'na me.png')}  other.txt\r\n`);
  assert.deepEqual(resolvePathAt(term, tracker, 1, 4), { path: '/work/dir/na me.png', source: 'osc8', label: 'na me.png' });
  assert.equal(resolvePathAt(term, tracker, 1, 12)?.path, 'other.txt');
  // An http hyperlink is not a path: the visible text decides.
  await write(term, `${link('https://x.example/', 'src/a.ts')}\r\n`);
  assert.equal(resolvePathAt(term, tracker, 2, 2)?.path, 'src/a.ts');
  await write(term, '$ cat out/shot.png');
  const cursorCol = term.buffer.active.cursorX;
  assert.equal(resolvePathAt(term, tracker, 3, cursorCol), null);
  assert.equal(resolvePathAt(term, tracker, 3, cursorCol, { atCursor: true })?.path, 'out/shot.png');
});

test("the tracker needs allowProposedApi and finds xterm's own link of every cell", () => {
  assert.throws(() => createOsc8Tracker(new Terminal({ cols: 20, rows: 4 })), TypeError);
  const { tracker } = setup();
  assert.equal(tracker.available, true, '@xterm/headless no longer keeps OSC 8 links where osc8-tracker.ts reads them');
});

test('the visible links: text URLs and OSC 8 targets at their first cells, counted in columns past wide characters', async () => {
  const { term, tracker } = setup(40, 6);
  await write(term, `表示 https://a.example/x and ${link('https://target.example/', '漢字 label')}\r\n`);
  await write(term, `(see http://b.example). ${link('https://c.example/', 'https://shown.example/')}\r\n`);
  assert.deepEqual(listVisibleLinks(term, tracker), [
    { row: 0, col: 5, cells: 19, source: 'text', url: 'https://a.example/x' },
    { row: 0, col: 29, cells: 10, source: 'osc8', url: 'https://target.example/' },
    { row: 1, col: 5, cells: 16, source: 'text', url: 'http://b.example' },
    // A hyperlink whose label looks like a URL is listed once, with its target.
    { row: 1, col: 24, cells: 16, source: 'osc8', url: 'https://c.example/' },
  ]);
  // Each listed cell is what a click there resolves.
  for (const l of listVisibleLinks(term, tracker)) assert.equal(resolveLinkAt(term, tracker, l.row, l.col)?.url, l.url);
});

test('the visible links: a URL wrapped over rows is one link, one scrolled partly off the screen starts at row 0', async () => {
  const { term, tracker } = setup(20, 3, 100);
  const url = 'https://wrapped.example/abcdefghij';
  await write(term, `ab ${url}`);
  assert.deepEqual(listVisibleLinks(term, tracker), [{ row: 0, col: 3, cells: 17, source: 'text', url }]);
  await write(term, '\r\nline\r\nline');
  // The row holding the URL's start scrolled away: its rest is still the link, from the first visible cell.
  assert.deepEqual(listVisibleLinks(term, tracker), [{ row: 0, col: 0, cells: url.length - 17, source: 'text', url }]);
  await write(term, '\r\nnothing\r\nhere');
  assert.deepEqual(listVisibleLinks(term, tracker), []);
});

test('the visible links: an overwritten hyperlink is not listed, and the list stops at its cap', async () => {
  const { term, tracker } = setup(40, 4);
  await write(term, link('https://gone.example/', 'label'));
  await write(term, '\rXXXXX');
  assert.deepEqual(listVisibleLinks(term, tracker), []);
  const wide = setup(200, 60);
  let s = '';
  for (let i = 0; i < 200; i++) s += `https://h${i}.example `;
  await write(wide.term, s);
  const listed = listVisibleLinks(wide.term, wide.tracker);
  assert.equal(listed.length, 128);
  assert.equal(listed[0]!.url, 'https://h0.example');
});

test('a URL the program broke with a hard newline at the last column is read whole from either row', async () => {
  const { term, tracker } = setup(20);
  // OpenCode and Qwen wrap long URLs themselves: the row is full, then CR LF, no soft wrap, no OSC 8.
  await write(term, 'https://example.com/\r\nabc?state=1 next\r\n');
  assert.equal(term.buffer.active.getLine(1)?.isWrapped, false);
  for (const [row, col] of [
    [0, 0],
    [0, 19],
    [1, 0],
    [1, 10],
  ] as const) {
    assert.deepEqual(
      resolveLinkAt(term, tracker, row, col),
      { url: 'https://example.com/abc?state=1', source: 'text', label: 'https://example.com/abc?state=1' },
      `${row},${col}`,
    );
  }
  assert.equal(resolveLinkAt(term, tracker, 1, 12), null);
  assert.deepEqual(listVisibleLinks(term, tracker), [{ row: 0, col: 0, cells: 20, source: 'text', url: 'https://example.com/abc?state=1' }]);
  // Over three rows, and after a soft wrap.
  await write(term, 'see https://example.\r\ncom/aaaaaaaaaaaaaaaa\r\nbbb\r\n');
  assert.equal(resolveLinkAt(term, tracker, 4, 1)?.url, 'https://example.com/aaaaaaaaaaaaaaaabbb');
  assert.equal(resolveLinkAt(term, tracker, 2, 6)?.url, 'https://example.com/aaaaaaaaaaaaaaaabbb');
  await write(term, '\x1b[2J\x1b[H12345 https://exampl' + 'e.com/soft/wrapped/x\r\nyz\r\n');
  assert.equal(term.buffer.active.getLine(term.buffer.active.viewportY + 1)?.isWrapped, true);
  assert.equal(resolveLinkAt(term, tracker, 2, 0)?.url, 'https://example.com/soft/wrapped/xyz');
  assert.equal(resolveLinkAt(term, tracker, 0, 8)?.url, 'https://example.com/soft/wrapped/xyz');
});

test('rows are not joined unless a URL runs to the last column and the next row goes on at its first', async () => {
  const { term, tracker } = setup(20, 8);
  await write(term, 'https://example.com\r\n/not-joined\r\n'); // ends before the last column
  assert.equal(resolveLinkAt(term, tracker, 0, 2)?.url, 'https://example.com');
  await write(term, 'https://example.com/\r\n next\r\n'); // the next row starts with a blank
  assert.equal(resolveLinkAt(term, tracker, 2, 2)?.url, 'https://example.com/');
  await write(term, 'plain words end here\r\nhttps://x.example/a\r\n'); // no URL at the end of the row
  assert.equal(resolveLinkAt(term, tracker, 4, 19), null);
  assert.equal(resolveLinkAt(term, tracker, 5, 2)?.url, 'https://x.example/a');
  // Paths keep to soft wraps only.
  await write(term, '\x1b[2J\x1b[Hsee /tmp/aaaaaaaaaaaa\r\nbbb\r\n');
  assert.equal(resolvePathAt(term, tracker, 0, 6)?.path, '/tmp/aaaaaaaaaaaa');
  assert.deepEqual(listVisibleLinks(term, tracker), []);
});
