import { test } from 'node:test';
import assert from 'node:assert/strict';
import xh from '@xterm/headless';
import { hostDrawn } from '../../ui/host-draw.ts';
import { renderNotice } from '../../ui/notices.ts';
import { Palette } from './palette.ts';

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

test('host-drawn text is never part of a hyperlink the program left open', async () => {
  const term = new Terminal({ rows: 10, cols: 80, allowProposedApi: true });
  // The program opens a link (its target passed the URL check) and never closes it.
  await write(term, '\x1b]8;;https://elsewhere.example/\x07label ');
  await write(term, renderNotice({ level: 'success', text: 'Opened https://example.com' }, 80));
  const row = lines(term)[0] ?? '';
  const at = row.indexOf('https://example.com');
  assert.ok(at >= 0, row);
  // xterm.js keeps the link of a cell as its url id (0: none).
  const cell = term.buffer.active.getLine(0)?.getCell(at) as unknown as { extended: { _urlId: number } };
  assert.equal(cell.extended._urlId, 0);
});

test('a palette or prompt is shown at once even when the program began a synchronized update and never ended it', async () => {
  // The program's output is held while the box is up, so its `?2026l` may never come: the terminal would keep
  // the screen as it was, box unseen, until its own timeout (or for as long as the program keeps starting updates).
  const term = new Terminal({ rows: 10, cols: 80, allowProposedApi: true });
  await write(term, '\x1b[?2026h');
  assert.equal(term.modes.synchronizedOutputMode, true);
  await write(term, hostDrawn('\x1b[5;5Hbox', true));
  assert.equal(term.modes.synchronizedOutputMode, false);
});
