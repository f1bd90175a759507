/**
 * NO_COLOR (https://no-color.org) for what the host draws over the session: the palette, a confirmation
 * prompt and notices, rendered into a real terminal model (xterm headless), keep to bold, faint, underline and
 * reverse video when colour is off, and are in colour otherwise.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import xh from '@xterm/headless';
import { colourFromEnv, hostDrawn, setHostColour, withoutColour } from '../../ui/host-draw.ts';
import { renderNotice } from '../../ui/notices.ts';
import { ConfirmPrompt } from './confirm-prompt.ts';
import { Palette } from './palette.ts';

const { Terminal } = xh;

function write(term: InstanceType<typeof Terminal>, s: string): Promise<void> {
  return new Promise((resolve) => term.write(s, resolve));
}

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
  for (const [id, title, key] of [
    ['a', 'Detach', 'd'],
    ['b', 'Paste image', 'v'],
  ] as const)
    palette.register({ id, title, key });
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
