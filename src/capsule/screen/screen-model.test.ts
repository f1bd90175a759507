import { test } from 'node:test';
import assert from 'node:assert/strict';
import xh from '@xterm/headless';
import { ScreenModel } from './screen-model.ts';
import { floodCut } from './flood-cut.ts';
import { MAX_CELL_UNITS } from './xterm-internals.ts';

/** A terminal standing for the operator's: what a stream, or a repaint of it, draws there. */
async function drawn(rows: number, cols: number, ...writes: Array<string | Uint8Array>): Promise<string[]> {
  const term = new xh.Terminal({ rows, cols, scrollback: 0, allowProposedApi: true });
  for (const w of writes) await new Promise<void>((resolve) => term.write(w, resolve));
  const buf = term.buffer.active;
  const out: string[] = [];
  for (let y = 0; y < rows; y++) {
    const line = buf.getLine(buf.baseY + y)!;
    for (let x = 0; x < cols; x++) {
      const c = line.getCell(x)!;
      if (c.getChars() === '' && c.getWidth() !== 0 && c.isAttributeDefault()) continue;
      const attrs = [c.isBold(), c.isItalic(), c.isDim(), c.isUnderline(), c.isInverse(), c.isStrikethrough(), c.isOverline()];
      out.push(
        `${y},${x} ${JSON.stringify(c.getChars())} fg=${c.getFgColorMode()}:${c.getFgColor()} bg=${c.getBgColorMode()}:${c.getBgColor()} ${attrs.map(Number).join('')}`,
      );
    }
  }
  term.dispose();
  return out;
}

async function feed(m: ScreenModel, s: string): Promise<void> {
  m.write(Buffer.from(s, 'utf8'));
  await m.settle();
}

/**
 * The same output through a model that may skip a flood and through one that parses every byte: `head`
 * fed and parsed first, then `flood` as one batch. The caller compares them and disposes both.
 */
async function skippingAndParsingAll(size: { rows: number; cols: number }, head: string, flood: string, fast: { fastForwardMinBytes?: number } = {}) {
  const models = { fast: new ScreenModel({ ...size, ...fast }), slow: new ScreenModel({ ...size, fastForward: false }) };
  for (const m of [models.fast, models.slow]) {
    if (head !== '') await feed(m, head);
    m.write(Buffer.from(flood, 'latin1'));
    await m.settle();
  }
  return models;
}

/** Replays `source.repaint()` into a fresh model of the same size. */
async function replay(source: ScreenModel): Promise<ScreenModel> {
  const copy = new ScreenModel({ rows: source.rows, cols: source.cols });
  copy.write(source.repaint());
  await copy.settle();
  return copy;
}

test('screen model: repaint reproduces text, cursor and modes on a fresh terminal', async () => {
  const m = new ScreenModel({ rows: 6, cols: 30 });
  await feed(
    m,
    'line one\r\n\x1b[1;31mred\x1b[0m and plain\r\nthird é漢\r\n' + '\x1b[?2004h\x1b[?1004h\x1b[?1002h\x1b[?1006h\x1b[?1h\x1b[?25l\x1b[5 q\x1b[3;5H',
  );
  const copy = await replay(m);
  assert.deepEqual(copy.screenLines(), m.screenLines());
  assert.deepEqual(copy.cursor, { x: 4, y: 2 });
  assert.deepEqual(copy.modes, m.modes);
  assert.equal(m.modes.bracketedPaste, true);
  assert.equal(m.modes.focusReporting, true);
  assert.equal(m.modes.mouseTracking, 'drag');
  assert.equal(m.modes.mouseEncoding, 'sgr');
  assert.equal(m.modes.cursorVisible, false);
  assert.equal(m.modes.cursorStyle, 5);
  const bytes = m.repaint().toString('latin1');
  assert.ok(bytes.includes('\x1b[?1006h'), 'mouse encoding restored');
  assert.ok(bytes.includes('\x1b[?25l'), 'hidden cursor restored');
  assert.ok(bytes.startsWith('\x1b[?1049l\x1b[!p'), 'starts with a reset that is not RIS');
  m.dispose();
  copy.dispose();
});

test('screen model: the alternate screen and the normal screen under it are both restored', async () => {
  const m = new ScreenModel({ rows: 5, cols: 20 });
  await feed(m, 'shell prompt $ \x1b[?1049h\x1b[HFULL SCREEN\x1b[2;3Hx');
  assert.equal(m.modes.alternateScreen, true);
  const copy = await replay(m);
  assert.equal(copy.modes.alternateScreen, true);
  assert.deepEqual(copy.screenLines(), m.screenLines());
  assert.deepEqual(copy.cursor, m.cursor);
  // Leaving the alternate screen on the copy shows the shell screen that was under it.
  await feed(copy, '\x1b[?1049l');
  await feed(m, '\x1b[?1049l');
  assert.deepEqual(copy.screenLines(), m.screenLines());
  assert.equal(copy.screenLines()[0], 'shell prompt $ ');
  m.dispose();
  copy.dispose();
});

test('screen model: a pen left on by the program does not leak into the repainted alternate screen', async () => {
  // vim with cursorline leaves ESC[4m on after drawing the cursor line; the serialize addon ended the normal
  // screen's part with that pen and started the alternate screen's part without a reset, so the first
  // cells (the number of line 1) came out underlined. This is the minimal stream.
  const stream = '\x1b[?1049hA\x1b[4m';
  const m = new ScreenModel({ rows: 3, cols: 10 });
  await feed(m, stream);
  const expected = await drawn(3, 10, stream);
  assert.deepEqual(await drawn(3, 10, m.repaint()), expected);
  // The pen itself is restored: what the program writes after the repaint looks as it would have.
  assert.deepEqual(await drawn(3, 10, m.repaint(), 'B'), await drawn(3, 10, stream, 'B'));
  m.dispose();
});

test('screen model: a repaint draws the same cells (text, colours, attributes) as the stream', async () => {
  const stream =
    'plain \x1b[1;3;4;7;9;53mall\x1b[0m \x1b[38;5;130m256\x1b[48;2;10;20;30mtrue\x1b[0m\r\n' +
    '\x1b[2mdim\x1b[22m 漢字\x1b[44m  \x1b[K\x1b[0m\r\n\x1b[?1049h\x1b[31mred \x1b[4mul\x1b[0mplain\x1b[3;2H\x1b[45m';
  const m = new ScreenModel({ rows: 4, cols: 24 });
  await feed(m, stream);
  assert.deepEqual(await drawn(4, 24, m.repaint(), 'x'), await drawn(4, 24, stream, 'x'));
  await feed(m, '\x1b[?1049l');
  assert.deepEqual(await drawn(4, 24, m.repaint(), 'y'), await drawn(4, 24, stream, '\x1b[?1049l', 'y'));
  m.dispose();
});

test('screen model: a cursor left just past the last column (pending wrap) is repainted there', async () => {
  for (const row of [`\x1b[2;1H${'x'.repeat(9)}\x1b[1;31my`, `\x1b[2;1H${'x'.repeat(8)}漢`, `\x1b[4h\x1b[2;1H${'x'.repeat(10)}`]) {
    const m = new ScreenModel({ rows: 4, cols: 10 });
    await feed(m, row);
    assert.equal(m.cursor.x, 10, 'precondition: the model is in the pending-wrap state');
    const copy = await replay(m);
    assert.deepEqual(copy.cursor, m.cursor);
    // The next character wraps to the next row on both, in the program's pen.
    await feed(m, 'Z');
    await feed(copy, 'Z');
    assert.deepEqual(copy.screenLines(), m.screenLines());
    assert.deepEqual(await drawn(4, 10, copy.repaint()), await drawn(4, 10, m.repaint()));
    m.dispose();
    copy.dispose();
  }
});

test('screen model: scroll region and origin mode are restored with the cursor inside the region', async () => {
  const m = new ScreenModel({ rows: 10, cols: 20 });
  await feed(m, 'top\x1b[3;8r\x1b[?6h\x1b[2;4H');
  const copy = await replay(m);
  assert.deepEqual(copy.modes.scrollRegion, { top: 3, bottom: 8 });
  assert.equal(copy.modes.originMode, true);
  assert.deepEqual(copy.cursor, m.cursor);
  assert.deepEqual(copy.cursor, { x: 3, y: 3 });
  m.dispose();
  copy.dispose();
});

test('screen model: modes are off again after the program resets them, and RIS clears tracked modes', async () => {
  const m = new ScreenModel({ rows: 5, cols: 20 });
  await feed(m, '\x1b[?2004h\x1b[?1004h\x1b[?1000h\x1b[?1006h\x1b[?25l');
  await feed(m, '\x1b[?2004l\x1b[?1004l\x1b[?1000l\x1b[?1006l');
  assert.equal(m.modes.bracketedPaste, false);
  assert.equal(m.modes.focusReporting, false);
  assert.equal(m.modes.mouseTracking, 'none');
  assert.equal(m.modes.mouseEncoding, 'default');
  assert.equal(m.modes.cursorVisible, false);
  await feed(m, '\x1bc');
  assert.equal(m.modes.cursorVisible, true);
  m.dispose();
});

// A flood skipped up to what can still be seen (flood-cut.ts) must leave the model exactly
// where parsing every byte does: same repaint (text, attributes, cursor, modes), same link and path lookups.
const ESCAPES = [
  '\x1b[1;31m',
  '\x1b[0m',
  '\x1b[44m',
  '\x1b[4m',
  '\x1b[7;3H',
  '\x1b[2J',
  '\x1b[K',
  '\x1b[?7l',
  '\x1b[?7h',
  '\x1b[4h',
  '\x1b[4l',
  '\x1b[?1049h',
  '\x1b[?1049l',
  '\x1b[20h',
  '\x1b[20l',
  '\t',
  '\x1b]8;;https://example.com/x\x1b\\',
  '\x1b]8;;\x1b\\',
  'é漢',
  '\x1b(0',
  '\x1b(B',
  '\x1b)0',
  '\x1b[?45h',
  '\x1b[?45l',
  '\x0e',
  '\x0f',
];
// SGR sequences a coloured flood carries: resets (first parameter 0 or empty) and everything else xterm
// keeps in its pen, extended underline styles and colours included.
const SGRS = [
  '\x1b[0m',
  '\x1b[m',
  '\x1b[00m',
  '\x1b[;7m',
  '\x1b[0;1;4:2;38;5;208m',
  '\x1b[1;31m',
  '\x1b[38;5;0m',
  '\x1b[48;2;10;0;0m',
  '\x1b[4:3m',
  '\x1b[58;2;1;2;3m',
  '\x1b[59m',
  '\x1b[01m',
  '\x1b[22;24;27m',
  '\x1b[53m',
  '\x1b[9m',
  '\x1b[2m',
  '\x1b[7m',
  '\x1b[8m',
  '\x1b[39;49m',
  '\x1b[100m',
  '\x1b[0:3m',
];
// Controls a flood may carry: all plain (they move the cursor or do nothing) but SO and SI (charset).
const CONTROLS = ['\t', '\b', '\b\b\b', '\x07', '\x0b', '\x0c', '\x00', '\x01', '\x18', '\x1a', '\x1f', '\x7f', '\x0e', '\x0f'];

test('screen model: skipping a flood (plain or coloured) ends with the same screen as parsing all of it (property)', async () => {
  const fc = (await import('fast-check')).default;
  let skipped = 0;
  let withPen = 0;
  const printable = fc.string({ unit: fc.constantFrom(...'abcxyz 0189-/._~'.split('')), maxLength: 120 });
  const line = fc.tuple(printable, fc.constantFrom('\r\n', '\r\n', '\r\n', '\n', '\r', '')).map(([t, e]) => t + e);
  // Now and then a flood line carries an escape (the skip must stop before it) or a control (a tab, a
  // backspace at the start of a wrapped row, a bell: skipped with the text; SO or SI: the skip stops).
  const floodLine = fc.oneof(
    { weight: 60, arbitrary: line },
    { weight: 1, arbitrary: fc.tuple(fc.constantFrom(...ESCAPES), line).map(([e, l]) => e + l) },
    { weight: 4, arbitrary: fc.tuple(line, fc.constantFrom(...CONTROLS), line).map(([a, c, b]) => a + c + b) },
    { weight: 30, arbitrary: fc.tuple(fc.constantFrom(...SGRS), printable, fc.constantFrom(...SGRS), line).map(([a, t, b, l]) => a + t + b + l) },
  );
  const before = fc.array(fc.oneof(printable, fc.constantFrom(...ESCAPES), line), { maxLength: 30 }).map((a) => a.join(''));
  // A PTY read can end inside a sequence: the head sometimes stops partway through one.
  const head = fc
    .tuple(
      before,
      fc.oneof(
        { weight: 3, arbitrary: fc.constant(null) },
        { weight: 1, arbitrary: fc.tuple(fc.constantFrom(...ESCAPES.filter((e) => e.startsWith('\x1b'))), fc.nat()) },
      ),
    )
    .map(([b, cut]) => (cut === null ? b : b + cut[0].slice(0, 1 + (cut[1] % (cut[0].length - 1)))));
  await fc.assert(
    fc.asyncProperty(
      fc.integer({ min: 2, max: 12 }),
      fc.integer({ min: 10, max: 90 }),
      head,
      fc.oneof(fc.array(floodLine, { maxLength: 30 }), fc.array(floodLine, { minLength: 40, maxLength: 200 })).map((a) => a.join('')),
      before,
      async (rows, cols, headBytes, flood, tail) => {
        const fast = new ScreenModel({ rows, cols, fastForwardMinBytes: 0 });
        const slow = new ScreenModel({ rows, cols, fastForward: false });
        // The flood arrives as one batch after everything before it was parsed (the state is exact).
        for (const m of [fast, slow]) {
          await feed(m, headBytes);
          m.write(Buffer.from(flood, 'latin1'));
          await feed(m, tail);
        }
        if (fast.skippedBytes > 0) skipped++;
        if (fast.skippedBytes > 0 && floodCut([Buffer.from(flood, 'latin1')], rows).pen.length > 0) withPen++;
        assert.equal(fast.repaint().toString('latin1'), slow.repaint().toString('latin1'));
        assert.deepEqual(fast.cursor, slow.cursor);
        for (let r = 0; r < rows; r++) {
          for (const c of [0, Math.floor(cols / 2), cols - 1]) {
            assert.deepEqual(fast.linkAt(r, c), slow.linkAt(r, c));
          }
        }
        fast.dispose();
        slow.dispose();
      },
    ),
    { numRuns: 300 },
  );
  assert.ok(skipped >= 60, `only ${skipped} of 300 runs skipped anything: the property would not test the cut`);
  assert.ok(withPen >= 20, `only ${withPen} of 300 runs cut past SGR sequences: the property would not test the pen`);
});

test('screen model: a flood printed while an OSC 8 link is open is parsed whole, so the link keeps its target', async () => {
  const lines = Array.from({ length: 3000 }, (_, i) => `line ${i}\r\n`).join('');
  const m = new ScreenModel({ rows: 4, cols: 20, fastForwardMinBytes: 0 });
  await feed(m, '\x1b]8;;https://open.example/\x1b\\\r\n');
  m.write(Buffer.from(`${lines}last`));
  await m.settle();
  assert.equal(m.skippedBytes, 0);
  assert.equal(m.linkAt(3, 1)?.url, 'https://open.example/');
  // A DECRC leaves xterm's link open (it restores the pen's flags, not its link; SGR 0 sets the flag again).
  await feed(m, '\x1b[?1049lx');
  m.write(Buffer.from(lines));
  await m.settle();
  assert.equal(m.skippedBytes, 0);
  // Closed: the next flood is skipped as usual.
  await feed(m, '\x1b]8;;\x1b\\\r\n');
  m.write(Buffer.from(lines));
  await m.settle();
  assert.ok(m.skippedBytes > 0);
  m.dispose();
});

test('screen model: a flood of plain or coloured lines is skipped, one with other escapes or under a scroll region is parsed whole', async () => {
  const lines = Array.from({ length: 3000 }, (_, i) => `line ${i} of the build log\r\n`).join('');
  const m = new ScreenModel({ rows: 10, cols: 40 });
  m.write(Buffer.from(lines));
  await m.settle();
  assert.ok(m.skippedBytes > lines.length * 0.9, `skipped ${m.skippedBytes} of ${lines.length}`);
  assert.equal(m.screenLines()[8]?.trimEnd(), 'line 2999 of the build log');

  // Coloured: skipped too, to the same screen and pen as parsing every byte.
  const colored = lines.replaceAll('build', '\x1b[1;32mbuild\x1b[0m\x1b[4:3;58;5;9m').replaceAll('\r\n', '\x1b[24m\r\n');
  const { fast: c, slow: cSlow } = await skippingAndParsingAll({ rows: 10, cols: 40 }, '', colored);
  assert.ok(c.skippedBytes > colored.length * 0.9, `skipped ${c.skippedBytes} of ${colored.length}`);
  assert.equal(c.repaint().toString('latin1'), cSlow.repaint().toString('latin1'));
  cSlow.dispose();

  // A flood that moves the cursor (or sets a mode, a title, ...) on every line: nothing can be skipped.
  const moving = lines.replaceAll('build', '\x1b[Cbuild');
  const mv = new ScreenModel({ rows: 10, cols: 40 });
  mv.write(Buffer.from(moving));
  await mv.settle();
  assert.equal(mv.skippedBytes, 0);
  mv.dispose();

  const region = new ScreenModel({ rows: 10, cols: 40 });
  await feed(region, '\x1b[2;8r');
  region.write(Buffer.from(lines));
  await region.settle();
  assert.equal(region.skippedBytes, 0, 'a scroll region keeps rows outside it: nothing is skipped');
  for (const x of [m, c, region]) x.dispose();
});

test('screen model: a flood with tabs and backspaces (source code, compiler output) is skipped too, to the same screen', async () => {
  const lines = Array.from({ length: 3000 }, (_, i) => `\tcase ${i}:\treturn x;\x07 ab\bc\r\n`).join('');
  const { fast, slow } = await skippingAndParsingAll({ rows: 10, cols: 40 }, '', lines);
  assert.ok(fast.skippedBytes > lines.length * 0.9, `skipped ${fast.skippedBytes} of ${lines.length}`);
  assert.equal(fast.screenLines()[8]?.trimEnd(), '        case 2999:      return x; ac');
  assert.equal(fast.repaint().toString('latin1'), slow.repaint().toString('latin1'));
  fast.dispose();
  slow.dispose();
});

test('screen model: during a flood, what arrives while a batch is parsed gathers into the next batch instead of going at once', async () => {
  const lines = (from: number, n: number) => Buffer.from(Array.from({ length: n }, (_, i) => `l ${from + i}\r\n`).join(''));
  // A first batch small enough to go at once (under FLOOD_READ_BYTES), cut because the minimum is lowered.
  const m = new ScreenModel({ rows: 10, cols: 40, fastForwardMinBytes: 0 });
  const firstParsed = new Promise<void>((resolve) => m.write(lines(0, 60), resolve));
  // These arrive while the first batch is with xterm, the last one once it is done: parsed at once they
  // are two batches (what was queued, then the late one), gathered they are one.
  m.write(lines(60, 100));
  m.write(lines(160, 100));
  await firstParsed;
  m.write(lines(260, 100));
  await m.settle();
  assert.equal(m.batches, 2);
  assert.ok(m.skippedBytes > 0, 'both batches were cut');
  assert.equal(m.screenLines()[8]?.trimEnd(), 'l 359');
  m.dispose();
});

test('screen model: a batch that starts inside an escape sequence is parsed to its end, then cut; inside a string, parsed whole', async () => {
  const lines = Array.from({ length: 400 }, (_, i) => `line ${i}\r\n`).join('');
  for (const [head, rest, cuts] of [
    ['start\r\n\x1b[3', `1m${lines}done`, true],
    ['start\r\n\x1b', `[4:3m${lines}done`, true],
    ['start\r\n\x1b(', `0${lines}done`, true],
    ['start\r\n\x1b]0;title', `\x07${lines}done`, false],
  ] as const) {
    const { fast, slow } = await skippingAndParsingAll({ rows: 5, cols: 30 }, head, rest, { fastForwardMinBytes: 0 });
    assert.equal(fast.skippedBytes > 0, cuts, JSON.stringify(head));
    assert.equal(fast.repaint().toString('latin1'), slow.repaint().toString('latin1'), JSON.stringify(head));
    fast.dispose();
    slow.dispose();
  }
});

test('screen model: a cursor the program saved is saved again by the repaint, so its DECRC after a reattach lands where it did', async () => {
  for (const [save, restore] of [
    ['\x1b7', '\x1b8'],
    ['\x1b[s', '\x1b[u'],
  ] as const) {
    for (const screen of ['', '\x1b[?1049h']) {
      const m = new ScreenModel({ rows: 10, cols: 40 });
      await feed(m, `${screen}top\x1b[4;7H\x1b[1;31m${save}\x1b[0m\x1b[9;1Hprompt`);
      const copy = await replay(m);
      for (const model of [m, copy]) await feed(model, `${restore}X`);
      const what = `${JSON.stringify(save)} ${screen === '' ? 'normal' : 'alternate'} screen`;
      assert.equal(copy.screenLines()[3], '      X', what);
      assert.deepEqual(copy.cursor, m.cursor, what);
      // Same cells and pen: the X is bold red in both.
      assert.equal(copy.repaint().toString('latin1'), m.repaint().toString('latin1'), what);
      m.dispose();
      copy.dispose();
    }
  }
});

test('screen model: without a saved cursor, or after a reset, the repaint saves none', async () => {
  const m = new ScreenModel({ rows: 6, cols: 20 });
  await feed(m, 'text');
  assert.ok(!m.repaint().includes('\x1b7'));
  await feed(m, '\x1b7\x1bc');
  assert.ok(!m.repaint().includes('\x1b7'));
  m.dispose();
});

test('combining marks on one cell are bounded as terminals bound them, also when the cursor comes back to the cell', async () => {
  const m = new ScreenModel({ rows: 5, cols: 20 });
  assert.deepEqual(m.cellCap, { buffer: true, line: true, addCodepointToCell: true, combined: true });
  // The first row holds only its first cell: its text is that cell's.
  const first = (): string => m.screenLines()[0] ?? '';
  // 600 000 marks after one letter (6 million grew the model's heap by 322 MB before the bound, 0 MB with
  // it), then more after moves back to the cell and text printed elsewhere.
  m.write(Buffer.from('a'));
  const marks = Buffer.from('\u0301'.repeat(30_000));
  for (let i = 0; i < 20; i++) m.write(marks);
  await m.settle();
  assert.ok(first().startsWith('a\u0301'), JSON.stringify(first().slice(0, 4)));
  assert.equal(first().length, MAX_CELL_UNITS);
  for (let i = 0; i < 20; i++) m.write(Buffer.concat([Buffer.from('\x1b[3;3Hz\x1b[1;2H'), marks]));
  await m.settle();
  assert.ok(first().length <= MAX_CELL_UNITS, `cell of ${first().length} code units`);
  // The repaint carries the bounded cell.
  assert.ok(m.repaint().length < 10_000);
});

test('screen model: answers CSI 6 n and CSI 5 n only in output written to be answered, in order, from its cursor', async () => {
  const m = new ScreenModel({ rows: 5, cols: 10 });
  const replies: string[] = [];
  m.onReply = (r) => replies.push(r.toString('latin1'));
  m.write(Buffer.from('\x1b[3;5H\x1b[6n'));
  m.write(Buffer.from('\x1b[6nab\x1b[6n\x1b[5n'), undefined, true);
  // Split across writes, and at the right margin with a write pending: the last column, as terminals say.
  m.write(Buffer.from('\x1b[4;1H0123456789\x1b['), undefined, true);
  m.write(Buffer.from('6n\x1b[006n'), undefined, true);
  // Other forms the host's filter never lets out get no reply here either.
  m.write(Buffer.from('\x1b[6;1n\x1b[6:1n\x1b[?6n\x1b[7n\x1b[n\x1b[c\x1b[>c'), undefined, true);
  m.write(Buffer.from('\x1b[H\x1b[6n'));
  await m.settle();
  assert.deepEqual(replies, ['\x1b[3;5R', '\x1b[3;7R', '\x1b[0n', '\x1b[4;10R', '\x1b[4;10R']);
  m.dispose();
});
