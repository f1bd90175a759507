import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Palette, type PaletteAction } from './palette.ts';

const actions: PaletteAction[] = [
  { id: 'detach', title: 'Detach', key: 'd' },
  { id: 'send-palette-key', title: 'Send Ctrl+\\', key: 'palette' },
  { id: 'redraw', title: 'Redraw', key: 'r' },
  { id: 'export', title: 'Export file…', key: 'e', prompt: 'Export which container path?' },
];
const b = (s: string) => Buffer.from(s, 'utf8');

test('palette shortcut runs its action at once and closes', () => {
  const p = new Palette(actions);
  p.open();
  const r = p.input(b('d'));
  assert.equal(r.length, 1);
  assert.equal(r[0]!.type, 'run');
  assert.equal(r[0]!.type === 'run' && r[0]!.action.id, 'detach');
  assert.equal(p.isOpen, false);
});

test('the palette key inside the palette sends the literal palette key', () => {
  const p = new Palette(actions);
  p.open();
  const r = p.paletteKey();
  assert.equal(r.type === 'run' && r.action.id, 'send-palette-key');
});

test('typing a non-shortcut key filters, arrows select, Enter runs the selection', () => {
  const p = new Palette(actions);
  p.open();
  assert.deepEqual(p.input(b('x')), []);
  assert.equal(p.visible().length, 1); // "Export file…" contains an x
  p.input(b('\x7f'));
  assert.equal(p.visible().length, 4);
  p.input(b('/re'));
  assert.deepEqual(p.visible().map((a) => a.id), ['redraw']);
  const r = p.input(b('\r'));
  assert.equal(r[0]?.type === 'run' && r[0].action.id, 'redraw');
});

test('Esc clears the filter first, then closes', () => {
  const p = new Palette(actions);
  p.open();
  p.input(b('/zz'));
  assert.deepEqual(p.input(b('\x1b')), []);
  assert.equal(p.isOpen, true);
  assert.deepEqual(p.input(b('\x1b')), [{ type: 'close' }]);
  assert.equal(p.isOpen, false);
});

test('a prompt action collects a line with ordinary editing and returns it', () => {
  const p = new Palette(actions);
  p.open();
  p.input(b('e'));
  assert.equal(p.isOpen, true);
  p.input(b('reprt.txt'));
  p.input(b('\x1b[D'.repeat(6)));
  p.input(b('o'));
  p.input(b('\x1b[F!\x7f'));
  const r = p.input(b('\r'));
  assert.equal(r[0]?.type === 'run' && r[0].argument, 'report.txt');
});

test('render draws a box with every action and its key inside the screen', () => {
  const p = new Palette(actions);
  p.open();
  const s = p.render(24, 80);
  for (const a of actions) assert.ok(s.includes(a.title), a.title);
  assert.ok(s.includes('Ctrl+\\'));
  for (const m of s.matchAll(/\x1b\[(\d+);(\d+)H/g)) {
    assert.ok(Number(m[1]) >= 1 && Number(m[1]) <= 24);
    assert.ok(Number(m[2]) >= 1 && Number(m[2]) <= 80);
  }
});

test('the box keeps its height whatever the filter, so no stale border is left', () => {
  const p = new Palette(actions);
  p.open();
  const rowsOf = (s: string) => [...s.matchAll(/\x1b\[(\d+);\d+H/g)].map((m) => Number(m[1]));
  const full = rowsOf(p.render(24, 80));
  p.input(b('/zzz'));
  assert.deepEqual(rowsOf(p.render(24, 80)), full);
  p.input(b('\x1b\x1b'));
  p.open();
  p.input(b('e'));
  assert.deepEqual(rowsOf(p.render(24, 80)).slice(0, full.length), full);
});

test('the palette works under a kitty keyboard level or modifyOtherKeys: Esc closes, a shortcut runs, arrows and Enter choose, Ctrl+C closes', () => {
  // Flag 1 (Esc as CSI 27 u), flag 8 (every key a CSI u) with 2 (releases) and 16 (text), and modifyOtherKeys 2.
  const encodings = [
    { esc: '\x1b[27u', d: 'd', down: '\x1b[B', enter: '\r', ctrlC: '\x1b[99;5u' },
    { esc: '\x1b[27u\x1b[27;1:3u', d: '\x1b[100;;100u\x1b[100;1:3u', down: '\x1b[B\x1b[1;1:3B', enter: '\x1b[13u\x1b[13;1:3u', ctrlC: '\x1b[99;5u\x1b[99;5:3u' },
    { esc: '\x1b', d: 'd', down: '\x1b[B', enter: '\r', ctrlC: '\x1b[27;5;99~' },
  ];
  for (const e of encodings) {
    const p = new Palette(actions);
    p.open();
    assert.deepEqual(p.input(b(e.esc)), [{ type: 'close' }], JSON.stringify(e));
    p.open();
    assert.deepEqual(p.input(b(e.d)), [{ type: 'run', action: actions[0] }]);
    p.open();
    assert.deepEqual(p.input(b(e.down + e.down + e.enter)), [{ type: 'run', action: actions[2] }]);
    p.open();
    assert.deepEqual(p.input(b(e.ctrlC)), [{ type: 'close' }]);
  }
});
