import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ScreenModel } from './screen-model.ts';

async function feed(m: ScreenModel, s: string): Promise<void> {
  m.write(Buffer.from(s, 'utf8'));
  await m.settle();
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
    'line one\r\n\x1b[1;31mred\x1b[0m and plain\r\nthird é漢\r\n' +
      '\x1b[?2004h\x1b[?1004h\x1b[?1002h\x1b[?1006h\x1b[?1h\x1b[?25l\x1b[5 q\x1b[3;5H',
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
