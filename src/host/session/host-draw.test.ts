import { test } from 'node:test';
import assert from 'node:assert/strict';
import xh from '@xterm/headless';
import { hostDrawn } from '../../ui/host-draw.ts';
import { renderNotice } from '../../ui/notices.ts';
import { Writable } from 'node:stream';
import { HostTerminal } from '../terminal/terminal.ts';
import { ConfirmPrompt } from './confirm-prompt.ts';
import { NoticeOverlay } from './notice-overlay.ts';
import { Palette } from './palette.ts';
import { PaletteController } from './palette-controller.ts';

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
  for (const [id, title, key] of [
    ['a', 'Detach', 'd'],
    ['b', 'Paste image', 'v'],
    ['c', 'Export file…', 'e'],
  ] as const)
    palette.register({ id, title, key });
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
  assert.ok(
    screen.some((l) => l.includes('Paste image')),
    screen.join('\n'),
  );
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

test('every row the palette, a prompt or a notice draws on is made single width first (DECSWL), at column 1', () => {
  const palette = new Palette();
  palette.register({ id: 'a', title: 'Detach', key: 'd' });
  palette.open();
  const prompt = new ConfirmPrompt({ kind: 'url', target: `https://example.com/${'x'.repeat(200)}` });
  for (const drawn of [
    hostDrawn(palette.render(30, 100), true),
    hostDrawn(prompt.render(30, 100), true),
    renderNotice({ level: 'info', text: 'hello' }, 100),
  ]) {
    // Every move to a row's drawing column comes right after `row;1H ESC # 5` of the same row.
    const moves = [...drawn.matchAll(/\x1b\[(\d+);(\d+)H/gu)].filter((m) => m[2] !== '1' || drawn.slice(0, m.index).endsWith('#5'));
    const rows = new Set(moves.map((m) => m[1]));
    assert.ok(rows.size > 0);
    for (const row of rows) assert.ok(drawn.includes(`\x1b[${row};1H\x1b#5\x1b[${row};`), `row ${row}: ${JSON.stringify(drawn)}`);
  }
});

test('a notice ends a synchronized update the program began, and switches its left/right margins off, before it draws', async () => {
  const n = renderNotice({ level: 'success', text: 'Copied' }, 80);
  const draw = n.indexOf('✓');
  for (const reset of ['\x1b[?2026l', '\x1b[?69l']) assert.ok(n.indexOf(reset) >= 0 && n.indexOf(reset) < draw, reset);
  const term = new Terminal({ rows: 10, cols: 80, allowProposedApi: true });
  await write(term, '\x1b[?2026h');
  await write(term, n);
  assert.equal(term.modes.synchronizedOutputMode, false);
});

test("the program's left/right margins are given back after a notice and after the palette, inside DECSC/DECRC", () => {
  let out = '';
  const stdout = new Writable({ write: (c: Buffer, _e, cb) => ((out += c.toString('utf8')), cb()) });
  const terminal = new HostTerminal({ stdin: process.stdin, stdout: Object.assign(stdout, { rows: 24, columns: 80 }) });
  terminal.writeOutput(Buffer.from('\x1b[?69h\x1b[5;40s'));
  assert.equal(terminal.layoutRestore(), '\x1b7\x1b[?69h\x1b[5;40s\x1b8');
  out = '';
  const overlay = new NoticeOverlay({ terminal, modals: { anyOpen: false }, repaint: () => undefined });
  overlay.post('info', 'hello');
  assert.ok(out.includes('\x1b[?69l'), 'margins off for the drawing');
  assert.ok(out.endsWith('\x1b[0m\x1b8\x1b7\x1b[?69h\x1b[5;40s\x1b8'), JSON.stringify(out));
  overlay.dispose();
  out = '';
  const palette = new PaletteController({ terminal, closed: () => undefined, notify: () => undefined });
  palette.open();
  assert.ok(out.includes('\x1b[?69l'));
  out = '';
  palette.handle({ type: 'bytes', bytes: Buffer.from('\x1b') });
  assert.equal(out, '\x1b7\x1b[?69h\x1b[5;40s\x1b8');
  // Margin mode off: nothing to give back; a program that never used it gets no `?69h`.
  terminal.writeOutput(Buffer.from('\x1b[?69l'));
  assert.equal(terminal.layoutRestore(), '');
  terminal.restore();
});

test('a notice wider than the screen is wrapped over rows at the top right, whole, and gives the cursor back', async () => {
  const text =
    'Could not open https://example.com: opener xdg-open exited with status 3: xdg-open: no method available for opening ' +
    "'https://example.com/a/very/long/path/that/is/longer/than/a/row/of/this/narrow/pane'; copy it with the palette: Copy link not opened (k)";
  const term = new Terminal({ rows: 24, cols: 60, allowProposedApi: true });
  await write(term, '\x1b[20;5H');
  await write(term, renderNotice({ level: 'error', text }, 60));
  assert.deepEqual({ x: term.buffer.active.cursorX, y: term.buffer.active.cursorY }, { x: 4, y: 19 });
  const shown = lines(term)
    .slice(0, 8)
    .filter((l) => l.trim() !== '');
  assert.ok(shown.length > 2, JSON.stringify(shown));
  // Each row is the same box: starts at the same column, ends at the screen's last column but one.
  const starts = new Set(shown.map((l) => l.length - l.trimStart().length));
  assert.equal(starts.size, 1, JSON.stringify(shown));
  // Read in order, the rows are the notice, every character of it (the URL broken where a row ends).
  const joined = shown.map((l) => l.trim()).join(' ');
  assert.equal(joined.replaceAll(' ', ''), `✗ ${text}`.replaceAll(' ', ''));
  assert.ok(!joined.includes('…'));
});
