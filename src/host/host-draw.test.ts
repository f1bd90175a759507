import { test } from 'node:test';
import assert from 'node:assert/strict';
import xh from '@xterm/headless';
import { colourFromEnv, hostDrawn, setHostColour, withoutColour } from '../ui/host-draw.ts';
import { renderNotice } from '../ui/notices.ts';
import { Palette } from './palette.ts';
import { ConfirmPrompt } from './confirm-prompt.ts';

const { Terminal } = xh;

function write(term: InstanceType<typeof Terminal>, s: string): Promise<void> {
  return new Promise((resolve) => term.write(s, resolve));
}

function lines(term: InstanceType<typeof Terminal>): string[] {
  const out: string[] = [];
  for (let y = 0; y < term.rows; y++) out.push(term.buffer.active.getLine(y)?.translateToString(true) ?? '');
  return out;
}

/** Rows holding the palette box: the top border, every side row, the bottom border, in order and adjacent. */
function boxRows(screen: string[]): number[] {
  const top = screen.findIndex((l) => l.includes('┌─ jackin '));
  const bottom = screen.findIndex((l, i) => i > top && l.includes('└'));
  return top < 0 || bottom < 0 ? [] : Array.from({ length: bottom - top + 1 }, (_, i) => top + i);
}

const HOSTILE_MODES = '\x1b[39;40r\x1b[?6h\x1b(0\x1b[4h\x1b[8m';

test('the palette is drawn whole at its place after a program set a scroll region, origin mode, line drawing, IRM and concealment', async () => {
  const palette = new Palette();
  for (const [id, title, key] of [['a', 'Detach', 'd'], ['b', 'Paste image', 'v'], ['c', 'Export file…', 'e']] as const) palette.register({ id, title, key });
  palette.open();
  const body = palette.render(40, 120);

  const bare = new Terminal({ rows: 40, cols: 120, allowProposedApi: true });
  await write(bare, HOSTILE_MODES + body);
  // Without the host's resets the box collapses into the program's two-line region (the attack).
  assert.notEqual(boxRows(lines(bare)).length, 7);

  const term = new Terminal({ rows: 40, cols: 120, allowProposedApi: true });
  await write(term, HOSTILE_MODES + hostDrawn(body, true));
  const screen = lines(term);
  const rows = boxRows(screen);
  // Three actions, the filter line and the hint: 5 lines inside the borders, centred on 40 rows.
  assert.deepEqual(rows, [16, 17, 18, 19, 20, 21, 22]);
  for (const r of rows.slice(1, -1)) assert.match(screen[r] ?? '', /│.*│/u);
  assert.ok(screen.some((l) => l.includes('Paste image')), screen.join('\n'));
  // Concealed or not, a cell written with SGR reset is visible: its attributes are default.
  const cell = term.buffer.active.getLine(rows[2]!)?.getCell(screen[rows[2]!]!.indexOf('d'));
  assert.equal(cell?.isInvisible(), 0);
});

test('a notice lands on row 1 whatever modes the program set, and gives the program back its cursor', async () => {
  const term = new Terminal({ rows: 40, cols: 120, allowProposedApi: true });
  await write(term, `${HOSTILE_MODES}\x1b[2;5H`);
  const before = { x: term.buffer.active.cursorX, y: term.buffer.active.cursorY };
  await write(term, renderNotice({ level: 'success', text: 'Opened https://example.com' }, 120));
  assert.match(lines(term)[0] ?? '', /✓ Opened https:\/\/example\.com $/u);
  assert.deepEqual({ x: term.buffer.active.cursorX, y: term.buffer.active.cursorY }, before);
  // (DECRC gives back origin mode too in xterm, VTE and tmux, but not in xterm.js, which this model is: there
  // the capsule's repaint when the notice ends restores it.)
});

/** Cells of the screen that have text: how many have a colour, how many are in reverse video. */
function colours(term: InstanceType<typeof Terminal>): { coloured: number; inverse: number; cells: number } {
  const counts = { coloured: 0, inverse: 0, cells: 0 };
  for (let y = 0; y < term.rows; y++) {
    const line = term.buffer.active.getLine(y);
    for (let x = 0; line !== undefined && x < term.cols; x++) {
      const cell = line.getCell(x);
      if (cell === undefined || cell.getChars() === '' || cell.getChars() === ' ') continue;
      counts.cells++;
      if (!cell.isFgDefault() || !cell.isBgDefault()) counts.coloured++;
      if (cell.isInverse() !== 0) counts.inverse++;
    }
  }
  return counts;
}

test('under NO_COLOR the palette, a confirmation and every notice level are drawn without a colour; the selection and notices in reverse video', async (t) => {
  t.after(() => setHostColour(true));
  const palette = new Palette();
  for (const [id, title, key] of [['a', 'Detach', 'd'], ['b', 'Paste image', 'v']] as const) palette.register({ id, title, key });
  palette.open();
  // An international host name: the prompt's warning line stands out too.
  const prompt = new ConfirmPrompt({ kind: 'url', target: 'https://xn--bcher-kva.example/a', verb: 'open' });
  const draw = (): string[] => [
    hostDrawn(palette.render(30, 100), true),
    hostDrawn(prompt.render(30, 100), true),
    ...(['info', 'success', 'warning', 'error'] as const).map((level) => renderNotice({ level, text: `a ${level} notice` }, 100)),
  ];
  for (const drawing of draw()) {
    const term = new Terminal({ rows: 30, cols: 100, allowProposedApi: true });
    await write(term, drawing);
    assert.ok(colours(term).coloured > 0, 'in colour by default');
  }
  setHostColour(colourFromEnv({ NO_COLOR: '1' }));
  for (const drawing of draw()) {
    const term = new Terminal({ rows: 30, cols: 100, allowProposedApi: true });
    await write(term, drawing);
    const c = colours(term);
    assert.ok(c.cells > 10, 'something was drawn');
    assert.equal(c.coloured, 0, JSON.stringify(drawing));
    assert.ok(c.inverse > 0, 'what stood out by its background stands out in reverse video');
  }
});

test('NO_COLOR counts when set to anything but the empty string; withoutColour keeps bold, faint, underline and reverse', () => {
  assert.equal(colourFromEnv({}), true);
  assert.equal(colourFromEnv({ NO_COLOR: '' }), true);
  assert.equal(colourFromEnv({ NO_COLOR: '1' }), false);
  assert.equal(colourFromEnv({ NO_COLOR: 'no' }), false);
  assert.equal(withoutColour('\x1b[0;1;4;97;40mX\x1b[0;90;40mY\x1b[0;30;46mZ\x1b[0mW'), '\x1b[0;1;4mX\x1b[0;2mY\x1b[0;7mZ\x1b[0mW');
  assert.equal(withoutColour('\x1b[38;5;196;48;2;1;2;3;1mA\x1b[mB\x1b[2;5H'), '\x1b[7;1mA\x1b[0mB\x1b[2;5H');
});
