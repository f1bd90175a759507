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
  assert.deepEqual(
    p.visible().map((a) => a.id),
    ['redraw'],
  );
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
    {
      esc: '\x1b[27u\x1b[27;1:3u',
      d: '\x1b[100;;100u\x1b[100;1:3u',
      down: '\x1b[B\x1b[1;1:3B',
      enter: '\x1b[13u\x1b[13;1:3u',
      ctrlC: '\x1b[99;5u\x1b[99;5:3u',
    },
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

test('a pending entry is drawn dim and cannot be chosen; the palette stays open and its footer says why', () => {
  const p = new Palette([...actions, { id: 'offer', title: 'Open offered link (reading the offer…)', key: 'u', pending: true }]);
  p.open();
  assert.deepEqual(p.input(b('u')), [{ type: 'pending', action: { id: 'offer', title: 'Open offered link (reading the offer…)', key: 'u', pending: true } }]);
  assert.equal(p.isOpen, true);
  p.setStatus('still reading the offer', 'offer');
  // Another entry changing leaves the line: it is about this one.
  p.register({ id: 'redraw', title: 'Redraw', key: 'r' });
  assert.match(p.render(24, 80), /still reading the offer/);
  assert.match(p.render(24, 80), /still reading the offer/);
  assert.match(p.render(24, 80), /\x1b\[0;90;40m u +Open offered link \(reading/);
  // Its target was read: the entry is choosable, and the line about its earlier state goes.
  p.register({ id: 'offer', title: 'Open offered link: https://example.com/', key: 'u' });
  assert.doesNotMatch(p.render(24, 80), /still reading the offer/);
  assert.equal(p.input(b('u'))[0]?.type, 'run');
});

test("an entry's suffix is never cut; the box grows for a long entry up to its widest, then the title is cut and not shown whole", () => {
  const login = { id: 'offer', title: 'Open offered link: http://localhost:7803/', suffix: ' (forwards port 7803)', key: 'u' };
  const p = new Palette([...actions, login]);
  p.open();
  assert.match(p.render(30, 160), /Open offered link: http:\/\/localhost:7803\/ \(forwards port 7803\)/);
  assert.equal(p.titleShownWhole('offer', 160), true);
  // A narrow terminal draws a narrower box: the title is cut, the suffix still shows.
  assert.match(p.render(30, 60), /Open offered link: http:\/… \(forwards port 7803\)/);
  assert.equal(p.titleShownWhole('offer', 60), false);
  p.register({ ...login, title: `Open offered link: http://localhost:7803/${'x'.repeat(40)}` });
  assert.match(p.render(30, 160), /Open offered link: http:\/\/localhost:7803\/x*… \(forwards port 7803\)/);
  assert.equal(p.titleShownWhole('offer', 160), false);
});
