import { test } from 'node:test';
import assert from 'node:assert/strict';
import xh from '@xterm/headless';
import { ScreenModel } from './screen-model.ts';
import { penOf, savedCursorOf, underlineOf, writtenUnderline } from './rendition-overlay.ts';

/** Per cell of row 0: chars, underline style and colour, bold, fg (what a terminal fed `writes` shows). */
async function underlines(cols: number, ...writes: Array<string | Uint8Array>): Promise<string[]> {
  const term = new xh.Terminal({ rows: 2, cols, scrollback: 0, allowProposedApi: true });
  for (const w of writes) await new Promise<void>((resolve) => term.write(w, resolve));
  const line = term.buffer.active.getLine(0)!;
  const out: string[] = [];
  for (let x = 0; x < cols; x++) {
    const c = line.getCell(x)!;
    const u = writtenUnderline(c);
    out.push(`${c.getChars()}:${u === null ? '-' : `${u.style}/${u.color.toString(16)}`}:${c.isBold() ? 1 : 0}:${c.getFgColorMode()}/${c.getFgColor()}`);
  }
  const pen = penOf(term);
  assert.ok(pen !== null, 'the installed xterm exposes its pen (_core._inputHandler._curAttrData)');
  term.dispose();
  return out;
}

test('rendition overlay: a repaint keeps underline styles and colours, 256-colour indexes below 16, and the pen', async () => {
  const stream =
    'a\x1b[4:3mcurly\x1b[0m \x1b[21mdbl\x1b[24m \x1b[4:4mdot\x1b[4:5mdash\x1b[0m \x1b[4;58;5;196mred\x1b[59mnone\x1b[0m ' +
    '\x1b[1;4;38;5;100;58:2::10:200:30mtrue\x1b[0m \x1b[1;38;5;1mB\x1b[48;5;9mG\x1b[0m \x1b[4mplain\x1b[4:3;33m';
  const m = new ScreenModel({ rows: 2, cols: 60 });
  m.write(Buffer.from(stream));
  await m.settle();
  const expected = await underlines(60, stream, 'P');
  assert.ok(
    expected.some((c) => c.startsWith('c:3/')),
    'the stream has a curly underline',
  );
  assert.ok(
    expected.some((c) => c.includes('/20000c4:')),
    'and a palette underline colour',
  );
  assert.ok(
    expected.some((c) => c === 'B:-:1:33554432/1'),
    `and a 256-colour index below 16 (not ANSI red): ${expected.filter((c) => c.startsWith('B')).join(' ')}`,
  );
  // 'o' of "none": SGR 59 reset the underline colour to the default.
  assert.ok(expected.includes('o:1/0:0:0/-1'), `the default colour after SGR 59: ${expected.filter((c) => c.startsWith('o:')).join(' ')}`);
  // 'P' written after the repaint gets the program's pen (curly, yellow) as it would have.
  assert.deepEqual(await underlines(60, m.repaint(), 'P'), expected);
  m.dispose();
});

test('rendition overlay: the cells of an OSC 8 link are repainted as the program wrote them, not underlined as xterm reports links', async () => {
  const link = (url: string, text: string) => `\x1b]8;;${url}\x07${text}\x1b]8;;\x07`;
  const stream = `see ${link('https://example.com/a', 'plain')} ${link('https://example.com/b', '\x1b[4:3mcurly\x1b[24m')} ${link('https://example.com/c', '\x1b[4mone\x1b[24m')} \x1b[38;5;246m${link('https://example.com/d', 'grey')}\x1b[0m`;
  const cells = await underlines(40, stream);
  // xterm itself calls every link cell underlined (dashed): the program underlined only "curly" and "one".
  const term = new xh.Terminal({ rows: 1, cols: 40, allowProposedApi: true });
  await new Promise<void>((resolve) => term.write(stream, resolve));
  assert.equal(term.buffer.active.getLine(0)!.getCell(4)!.isUnderline(), 1, 'xterm reports the link cell "p" underlined');
  term.dispose();
  assert.ok(cells[4]!.startsWith('p:-:'), cells[4]);
  assert.ok(cells[10]!.startsWith('c:3/'), cells[10]);
  assert.ok(cells[16]!.startsWith('o:1/'), cells[16]);
  assert.ok(cells[20]!.startsWith('g:-:0:33554432/246'), cells[20]);
  const m = new ScreenModel({ rows: 2, cols: 40 });
  m.write(Buffer.from(stream));
  await m.settle();
  // The repaint, fed to a terminal, gives the cells the program wrote (the repaint carries no links: "-").
  assert.deepEqual(await underlines(40, m.repaint()), cells);
  m.dispose();
});

test('rendition overlay: the installed xterm keeps underline style and colour where the overlay reads them', async () => {
  const term = new xh.Terminal({ rows: 1, cols: 4, allowProposedApi: true });
  await new Promise<void>((resolve) => term.write('\x1b[4:3;58;5;9mX', resolve));
  assert.deepEqual(underlineOf(term.buffer.active.getLine(0)!.getCell(0)!), { style: 3, color: 0x2000009 });
  term.dispose();
});

test('rendition overlay: the installed xterm exposes the saved cursor the repaint saves again; a terminal without it gives null', async () => {
  const term = new xh.Terminal({ rows: 5, cols: 20, scrollback: 0, allowProposedApi: true });
  await new Promise<void>((resolve) => term.write('\x1b[3;9H\x1b[1;32m\x1b7\x1b[0m\x1b[H', resolve));
  const saved = savedCursorOf(term);
  assert.ok(saved !== null, 'xterm no longer provides _core._inputHandler._activeBuffer.savedX/savedY/savedCurAttrData');
  assert.deepEqual({ x: saved.x, y: saved.y, bold: saved.pen.isBold() !== 0, fg: saved.pen.getFgColor() }, { x: 8, y: 2, bold: true, fg: 2 });
  term.dispose();
  assert.equal(savedCursorOf({ _core: { _inputHandler: {} } }), null);
  assert.equal(savedCursorOf({ _core: { _inputHandler: { _activeBuffer: { savedX: 1, savedY: 1, ybase: 0, savedCurAttrData: {} } } } }), null);
});
