// The host's own view of the screen (src/host/terminal/host-screen.ts) against the capsule's model: what a
// capsule's repaint draws, the host reads back cell for cell where every terminal agrees, and nothing where
// they may not (characters of uncertain width, and everything after them on their row).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { ScreenModel } from '../src/capsule/screen/screen-model.ts';
import { certainWidth, HostScreen } from '../src/host/terminal/host-screen.ts';

const link = (target: string, label: string): string => `\x1b]8;;${target}\x1b\\${label}\x1b]8;;\x1b\\`;

async function repainted(stream: string, rows = 12, cols = 60): Promise<{ model: ScreenModel; host: HostScreen }> {
  const model = new ScreenModel({ rows, cols });
  model.write(Buffer.from(stream, 'utf8'));
  await model.settle();
  const host = new HostScreen(rows, cols);
  // Whatever the terminal showed before: the host knows nothing of it until the repaint.
  host.write(Buffer.from('leftover text \x1b[5;5Hmore', 'utf8'));
  assert.equal(host.text(0, 0, 4), null, 'nothing is known before the repaint');
  host.write(model.repaint());
  return { model, host };
}

function hostRow(host: HostScreen, row: number): string | null {
  return host.text(row, 0, host.cols)?.trimEnd() ?? null;
}

test('host screen: a repaint of plain, CJK, coloured, hyperlinked and wrapped text reads back row for row', async () => {
  const long = `https://example.com/${'w'.repeat(70)}`;
  const { model, host } = await repainted(
    `\x1b[31mred\x1b[0m plain https://a.example/x\r\n漢字漢字 wide then https://b.example/y\r\n${link('https://target.example/t', 'the docs')} here\r\n${long}\r\n\x1b[6;10H\x1b[1mbold\x1b[0m at 6,10`,
  );
  const lines = model.screenLines();
  for (let r = 0; r < host.rows; r++) assert.equal(hostRow(host, r), lines[r], `row ${r}`);
  assert.equal(host.text(0, 10, 19), 'https://a.example/x');
  assert.equal(host.text(1, 19, 19), 'https://b.example/y');
  assert.equal(host.text(3, 0, long.length), long, 'a wrapped URL reads on across rows');
  model.dispose();
});

test('host screen: after a character of uncertain width, the rest of its row is unknown; an absolute move makes it known again', async () => {
  const { model, host } = await repainted(
    `${'\u{1FAE8}'.repeat(13)}${link('https://evil.example/steal', 'x')}   https://good.example/docs\r\nnext row https://c.example/\r\n✅ done\x1b[3;20Hafter a move`,
  );
  assert.equal(hostRow(host, 0), null);
  // The repaint draws the hyperlink's cells again at absolute positions (their rendition): there, the
  // terminal shows that `x` whatever it made of the emoji, and the host knows it.
  assert.equal(host.text(0, 26, 1), 'x');
  assert.equal(host.text(0, 30, 25), null, 'the plain URL after the emoji, where the capsule counts it');
  assert.equal(hostRow(host, 1), 'next row https://c.example/');
  assert.equal(host.text(2, 0, 2), null, 'an emoji');
  // The repaint reaches it by a relative move on the emoji's row: not known either.
  assert.equal(host.text(2, 19, 12), null);
  model.dispose();
  // An absolute move puts the terminal's cursor where the host's is.
  host.write(Buffer.from('\x1b[3;1H\u{1F600} drift\x1b[3;20Hafter a move\x1b[3;1H', 'utf8'));
  assert.equal(host.text(2, 19, 12), 'after a move');
  assert.equal(host.text(2, 2, 6), null);
});

test('host screen: the alternate screen, scroll regions and insert/delete lines read back as the model has them', async () => {
  const { model, host } = await repainted(
    'main line\r\n\x1b[?1049h\x1b[H\x1b[2Jalt 1\r\nalt 2\r\nalt 3\x1b[2;4r\x1b[2;1H\x1b[Linserted\x1b[4;1H\x1b[Mgone\x1b[r\x1b[8;1Hcol\x1b[3G\x1b[2@X\x1b[2P',
  );
  const lines = model.screenLines();
  for (let r = 0; r < host.rows; r++) assert.equal(hostRow(host, r), lines[r], `row ${r}`);
  model.dispose();
});

test('host screen: OSC 8 targets written by the bytes are kept per cell; graphics and unknown sequences lose the screen', () => {
  const host = new HostScreen(4, 20);
  host.write(Buffer.from(`\x1b[?1049l\x1b[!p\x1b[r\x1b[H\x1b[2J${link('https://t.example/', 'ab')}c`));
  assert.equal(host.hyperlink(0, 0), 'https://t.example/');
  assert.equal(host.hyperlink(0, 1), 'https://t.example/');
  assert.equal(host.hyperlink(0, 2), null);
  assert.equal(host.text(0, 0, 3), 'abc');
  host.write(Buffer.from('\x1b[1;1;2;2$z'));
  assert.equal(host.text(0, 0, 3), null, 'a rectangle erase: not followed');
  host.write(Buffer.from('\x1bc'));
  assert.equal(host.text(0, 0, 3), '   ', 'a full reset: known blanks');
  host.write(Buffer.from('\x1b(0qqq\x1b(B'));
  assert.equal(host.text(0, 0, 3), null, 'line drawing: not the bytes');
});

test('host screen: widths every terminal agrees on, and the ones it does not count on', () => {
  const cases: Array<[number, 1 | 2 | null]> = [
    [0x41, 1],
    [0xe9, 1],
    [0x416, 1],
    [0x2500, 1],
    [0x256d, 1],
    [0x2714, 1],
    [0x23fa, 1],
    [0x2764, 1],
    [0x4e00, 2],
    [0xac00, 2],
    [0xff21, 2],
    [0x3042, 2],
    [0x1fae8, null],
    [0x1f600, null],
    [0x2705, null],
    [0x231a, null],
    [0x1f1fa, null],
    [0x1f3fd, null],
    [0xfe0f, null],
    [0x200d, null],
    [0x301, null],
    [0xad, null],
    [0xe000, null],
    [0x10ffff, null],
    [0x5d0, null],
  ];
  for (const [cp, w] of cases) assert.equal(certainWidth(cp), w, `U+${cp.toString(16).toUpperCase()}`);
});

/** Random program output of characters every terminal draws alike, with the sequences the filter lets through. */
const text = fc.string({ unit: fc.constantFrom(...'abc xyz019:/.-漢字表─│'.split('')), maxLength: 90 });
const piece = fc.oneof(
  text,
  fc.constantFrom(
    '\r\n',
    '\n',
    '\r',
    '\t',
    '\b',
    '\x1b[K',
    '\x1b[1K',
    '\x1b[2K',
    '\x1b[J',
    '\x1b[3@',
    '\x1b[2P',
    '\x1b[4X',
    '\x1b[L',
    '\x1b[M',
    '\x1b[S',
    '\x1b[T',
  ),
  fc.constantFrom(
    '\x1b[1;31m',
    '\x1b[0m',
    '\x1b[4:3m',
    '\x1b[38;5;200m',
    '\x1b[7m',
    '\x1b7',
    '\x1b8',
    '\x1bM',
    '\x1bD',
    '\x1b[?1049h',
    '\x1b[?1049l',
    '\x1b[3;8r',
    '\x1b[r',
  ),
  fc.tuple(fc.integer({ min: 1, max: 12 }), fc.integer({ min: 1, max: 50 })).map(([r, c]) => `\x1b[${r};${c}H`),
  fc.tuple(fc.constantFrom('https://ex.example/', 'https://t.example/a'), text).map(([u, l]) => `\x1b]8;;${u}\x1b\\${l}\x1b]8;;\x1b\\`),
);

test("host screen: on random screens of text every terminal draws alike, every row the host knows after the capsule's repaint is what a terminal shows", async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(piece, { maxLength: 40 }), async (pieces) => {
      const { model, host } = await repainted(pieces.join(''), 12, 50);
      // The operator's terminal: a fresh one that got the same repaint (xterm here; tmux draws these alike).
      const terminal = new ScreenModel({ rows: 12, cols: 50 });
      try {
        terminal.write(model.repaint());
        await terminal.settle();
        const lines = terminal.screenLines();
        for (let r = 0; r < host.rows; r++) {
          // A row the host gave up on (a cursor move while a wrap was pending, which terminals take
          // differently) is not known; every row it knows is the terminal's.
          const known = hostRow(host, r);
          if (known !== null) assert.equal(known, lines[r]?.trimEnd(), `row ${r} of ${JSON.stringify(pieces.join(''))}`);
        }
      } finally {
        model.dispose();
        terminal.dispose();
      }
    }),
    { numRuns: 200 },
  );
});

test("host screen: fed the program's own bytes, every cell the host says it knows is what a terminal shows", async () => {
  const reset = '\x1b[?1049l\x1b[!p\x1b[r\x1b[H\x1b[2J';
  await fc.assert(
    fc.asyncProperty(fc.array(piece, { maxLength: 40 }), async (pieces) => {
      const stream = reset + pieces.join('');
      const terminal = new ScreenModel({ rows: 12, cols: 50 });
      const host = new HostScreen(12, 50);
      try {
        terminal.write(Buffer.from(stream, 'utf8'));
        await terminal.settle();
        host.write(Buffer.from(stream, 'utf8'));
        const lines = terminal.screenLines();
        for (let r = 0; r < host.rows; r++) {
          const known = hostRow(host, r);
          if (known !== null) assert.equal(known, lines[r]?.trimEnd(), `row ${r} of ${JSON.stringify(stream)}`);
        }
      } finally {
        terminal.dispose();
      }
    }),
    { numRuns: 200 },
  );
});
