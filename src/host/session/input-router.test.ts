import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Gesture } from './feature-session.ts';
import { ESCAPE_FLUSH_MS, InputRouter, REPLY_FLUSH_MS } from './input-router.ts';
import { ModalStack } from './modal-stack.ts';
import { PaletteController } from './palette-controller.ts';
import { initialProgramModes } from '../terminal/terminal-filter/modes.ts';
import { ReplyExpectations } from '../terminal/terminal-filter/replies.ts';

function setup(initialOverlay: boolean | null = true) {
  let drawsOverlay = initialOverlay;
  const typed: string[] = [];
  const gestures: Gesture[] = [];
  const drawn: string[] = [];
  const notices: string[] = [];
  let active = true;
  const replies = new ReplyExpectations();
  const program = initialProgramModes();
  const palette = new PaletteController({
    terminal: { write: (b: Buffer) => drawn.push(b.toString('utf8')) > 0, size: () => ({ rows: 24, cols: 80 }) },
    closed: () => undefined,
    notify: (_l, text) => notices.push(text),
  });
  const router = new InputRouter({
    scanner: {},
    palette,
    modals: new ModalStack({ palette }),
    sendInput: (b) => typed.push(b.toString('latin1')),
    active: () => active,
    drawsOverlay: () => drawsOverlay,
    gesture: (g) => gestures.push(g),
    filter: { expectations: replies, program },
  });
  return {
    router,
    palette,
    typed,
    gestures,
    drawn,
    notices,
    replies,
    program,
    stop: () => (active = false),
    welcome: (ours: boolean) => ((drawsOverlay = ours), router.welcomed()),
  };
}

test('input router: typed bytes go to the program; nothing once the session is inactive', () => {
  const s = setup();
  s.router.push(Buffer.from('ls\r'));
  assert.deepEqual(s.typed, ['ls\r']);
  s.stop();
  s.router.push(Buffer.from('x'));
  assert.deepEqual(s.typed, ['ls\r']);
});

test('input router: hooks of a kind are asked newest first; an unclaimed event goes through; a disposed hook is not asked', () => {
  const s = setup();
  const asked: string[] = [];
  const older = s.router.addHook('pasteKey', () => (asked.push('older'), true));
  const newer = s.router.addHook('pasteKey', () => (asked.push('newer'), false));
  s.router.push(Buffer.from([0x16]));
  assert.deepEqual(asked, ['newer', 'older']);
  assert.deepEqual(s.typed, [], 'claimed by the older hook');
  older.dispose();
  s.router.push(Buffer.from([0x16]));
  assert.deepEqual(asked, ['newer', 'older', 'newer']);
  assert.deepEqual(s.typed, ['\x16'], 'unclaimed: the raw bytes reach the program');
  newer.dispose();
  s.router.push(Buffer.from([0x16]));
  assert.deepEqual(asked, ['newer', 'older', 'newer']);
  assert.deepEqual(s.typed, ['\x16', '\x16']);
});

test('input router: input held while a hold is open follows in order when the last one is released', () => {
  const s = setup();
  let hold1 = { dispose: () => undefined as void };
  // A hook that starts holding: the rest of the same read waits with later keys.
  s.router.addHook('pasteKey', () => {
    hold1 = s.router.hold();
    return true;
  });
  s.router.push(Buffer.from('a\x16b'));
  const hold2 = s.router.hold();
  s.router.push(Buffer.from('c'));
  assert.deepEqual(s.typed, ['a']);
  hold1.dispose();
  hold1.dispose();
  assert.deepEqual(s.typed, ['a'], 'still held by the second hold; a second dispose changes nothing');
  hold2.dispose();
  assert.deepEqual(s.typed.join(''), 'abc');
});

test('input router: the palette key opens our palette (a gesture) and the palette takes the keys while open', () => {
  const s = setup(true);
  let ran = 0;
  s.palette.register({ id: 'x', title: 'X', key: 'x', run: () => void ran++ });
  s.router.push(Buffer.from([0x1c]));
  assert.deepEqual(s.gestures, ['palette-key']);
  assert.equal(s.palette.isOpen, true);
  assert.ok(s.drawn.length > 0, 'the palette was drawn');
  s.router.push(Buffer.from('x'));
  assert.equal(ran, 1);
  assert.equal(s.palette.isOpen, false);
  assert.deepEqual(s.typed, [], 'no key reached the program');
});

test('input router: with an upstream capsule the palette key goes to the program', () => {
  const s = setup(false);
  s.router.push(Buffer.from([0x1c]));
  assert.deepEqual(s.gestures, ['palette-key']);
  assert.equal(s.palette.isOpen, false);
  assert.deepEqual(s.typed, ['\x1c']);
});

test('input router: a palette key read before the Welcome waits for it, with every key after it, then opens our palette', () => {
  const s = setup(null);
  let ran = 0;
  s.palette.register({ id: 'x', title: 'X', key: 'x', run: () => void ran++ });
  s.router.push(Buffer.from('a\x1cx'));
  s.router.push(Buffer.from('b'));
  assert.deepEqual(s.typed, ['a'], 'the key before it went out; the palette key and the keys after it wait');
  assert.equal(s.palette.isOpen, false);
  assert.deepEqual(s.gestures, []);
  s.welcome(true);
  assert.deepEqual(s.gestures, ['palette-key']);
  assert.equal(ran, 1, 'the x after the palette key chose the palette action');
  assert.deepEqual(s.typed, ['a', 'b'], 'the palette key never reached the program; the later key follows in order');
  // A second Welcome changes nothing; a palette key after it acts at once.
  s.welcome(true);
  s.router.push(Buffer.from([0x1c]));
  assert.equal(s.palette.isOpen, true);
});

test('input router: a palette key held for the Welcome of an upstream capsule goes to it, in order', () => {
  const s = setup(null);
  s.router.push(Buffer.from('a\x1cb'));
  assert.deepEqual(s.typed, ['a']);
  s.welcome(false);
  assert.deepEqual(s.typed.join(''), 'a\x1cb');
  assert.equal(s.palette.isOpen, false);
  assert.deepEqual(s.gestures, ['palette-key']);
});

test('input router: a paste key, a paste and a click read before the Welcome wait for it, then reach the hooks in order', () => {
  const s = setup(null);
  const seen: string[] = [];
  s.router.addHook('pasteKey', () => (seen.push('paste-key'), true));
  s.router.addHook('paste', (ev) => (seen.push(`paste:${ev.type === 'paste' ? ev.content.toString() : ''}`), true));
  s.router.addHook('mouse', () => (seen.push('mouse'), true));
  s.router.push(Buffer.from('a\x16b'));
  s.router.push(Buffer.from('\x1b[200~/tmp/x.png\x1b[201~c'));
  s.router.push(Buffer.from('\x1b[<0;3;4M'));
  assert.deepEqual(seen, [], 'no hook acted before the Welcome');
  assert.deepEqual(s.typed, ['a'], 'the key before the paste key went out; everything after it waits');
  s.welcome(true);
  assert.deepEqual(seen, ['paste-key', 'paste:/tmp/x.png', 'mouse']);
  assert.deepEqual(s.typed, ['a', 'b', 'c'], 'typed keys follow in order');
});

test('palette controller: a disposed action leaves the palette; a failing action becomes an error notice', async () => {
  const s = setup();
  const chosen: string[] = [];
  s.palette.onChoose((a) => chosen.push(a.id));
  const gone = s.palette.register({ id: 'gone', title: 'Gone', key: 'g', run: () => undefined });
  s.palette.register({ id: 'fails', title: 'Fails', key: 'f', run: () => Promise.reject(new Error('no such file')) });
  gone.dispose();
  s.palette.open();
  s.palette.handle({ type: 'bytes', bytes: Buffer.from('g') });
  assert.equal(s.palette.isOpen, true, 'g is no shortcut any more: it filters');
  s.palette.handle({ type: 'palette-key', source: 'c0', raw: Buffer.from([0x1c]) });
  s.palette.open();
  s.palette.handle({ type: 'bytes', bytes: Buffer.from('f') });
  assert.deepEqual(chosen.slice(-1), ['fails']);
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(s.notices, ['Fails: no such file']);
});

test("input router: keys after a paste's end that waited behind a hold are sent as typed, never scanned again into triggers", () => {
  const s = setup();
  let hold = { dispose: () => undefined as void };
  // An image path paste starts a hold; the palette key and `u` came in the same read, after the paste.
  s.router.addHook('paste', () => {
    hold = s.router.hold();
    return true;
  });
  s.router.push(Buffer.from('\x1b[200~/tmp/shot.png\x1b[201~\x1cu', 'latin1'));
  assert.deepEqual(s.typed, []);
  hold.dispose();
  assert.deepEqual(s.typed, ['\x1cu']);
  assert.equal(s.palette.isOpen, false);
  assert.deepEqual(s.gestures, []);
  // A read of its own, held and released, is scanned: the palette key there is the operator's.
  hold = s.router.hold();
  s.router.push(Buffer.from([0x1c]));
  hold.dispose();
  assert.equal(s.palette.isOpen, true);
});

test('input router: a terminal reply goes to the program only when due, and never acts as keys', () => {
  const s = setup();
  const reply = '\x1bP>|term\x1c\x16\x1b\\';
  s.router.push(Buffer.from(`a${reply}b`, 'latin1'));
  assert.deepEqual(s.typed, ['a', 'b']);
  assert.equal(s.palette.isOpen, false);
  assert.deepEqual(s.gestures, []);
  s.replies.expect('xtversion');
  s.router.push(Buffer.from(reply, 'latin1'));
  assert.deepEqual(s.typed, ['a', 'b', reply]);
  // An OSC 52 reply (clipboard contents) is never forwarded, even with a colour reply due.
  s.replies.expect('osc-color');
  s.router.push(Buffer.from('\x1b]52;c;U0VDUkVU\x07', 'latin1'));
  assert.equal(s.typed.length, 3);
  // Focus reports only while the program asked for focus reporting.
  s.router.push(Buffer.from('\x1b[I'));
  s.program.focus = true;
  s.router.push(Buffer.from('\x1b[O'));
  assert.deepEqual(s.typed.slice(3), ['\x1b[O']);
});

test('input router: an unclaimed paste goes in brackets only when the program asked for them', () => {
  const s = setup();
  s.router.push(Buffer.from('\x1b[200~pasted\x1b[201~'));
  s.program.bracketedPaste = true;
  s.router.push(Buffer.from('\x1b[200~again\x1b[201~'));
  assert.deepEqual(s.typed, ['pasted', '\x1b[200~again\x1b[201~']);
  // A paste too long to hold streams through, with its markers only when the program asked for them.
  const big = 'x'.repeat(1024 * 1024 + 10);
  for (const bracketed of [false, true]) {
    s.program.bracketedPaste = bracketed;
    s.typed.length = 0;
    s.router.push(Buffer.from(`\x1b[200~${big}\x1b[201~`));
    const got = s.typed.join('');
    assert.equal(got, bracketed ? `\x1b[200~${big}\x1b[201~` : big, `bracketed: ${bracketed}`);
  }
});

test('input router: a string reply held across reads waits for its rest longer than a lone Escape does', (t) => {
  t.mock.timers.enable({ apis: ['setTimeout'] });
  const s = setup();
  // An OSC 52 reply in two reads with a pause between them longer than the Escape wait.
  s.router.push(Buffer.from('\x1b]52;c;T1BFUkFU', 'latin1'));
  t.mock.timers.tick(ESCAPE_FLUSH_MS * 4);
  s.router.push(Buffer.from('T1I=\x1c\x07x', 'latin1'));
  assert.deepEqual(s.typed, ['x']);
  assert.equal(s.palette.isOpen, false);
  // A lone Escape still goes out after the short wait.
  s.router.push(Buffer.from('\x1b'));
  t.mock.timers.tick(ESCAPE_FLUSH_MS);
  assert.deepEqual(s.typed, ['x', '\x1b']);
  // A reply whose rest never comes is dropped after the longer wait, and typing resumes.
  s.router.push(Buffer.from('\x1bP>|term', 'latin1'));
  t.mock.timers.tick(REPLY_FLUSH_MS);
  s.router.push(Buffer.from('y'));
  assert.deepEqual(s.typed, ['x', '\x1b', 'y']);
});

test('input router: while a feature holds input and asks a question, what is typed answers it and is not kept for the program', () => {
  const s = setup();
  const answered: string[] = [];
  let open = false;
  const router = new InputRouter({
    scanner: {},
    palette: s.palette,
    sendInput: (b) => s.typed.push(b.toString('latin1')),
    active: () => true,
    drawsOverlay: () => true,
    gesture: () => undefined,
    filter: { expectations: s.replies, program: s.program },
    modals: new ModalStack({
      palette: s.palette,
      prompt: {
        get isOpen() {
          return open;
        },
        handle: (ev) => {
          if (ev.type === 'bytes') answered.push(ev.bytes.toString('latin1'));
          if (ev.type === 'bytes' && ev.bytes.toString('latin1') === '\r') open = false;
        },
        redraw: () => undefined,
      },
    }),
  });
  const hold = router.hold();
  router.push(Buffer.from('before '));
  open = true; // the feature asks the operator
  router.push(Buffer.from('x'));
  router.push(Buffer.from('\r'));
  assert.deepEqual(answered, ['x', '\r'], 'the prompt saw the keys typed while it was up');
  router.push(Buffer.from('after'));
  assert.deepEqual(answered, ['x', '\r'], 'once it closed, keys wait for the program again');
  assert.deepEqual(s.typed, []);
  hold.dispose();
  assert.deepEqual(s.typed, ['before ', 'after'], 'the program gets what was typed before and after the prompt, not the answer');
});

test('input router: with the palette open, no mouse report of any encoding or button byte runs a shortcut', () => {
  const s = setup();
  const ran: string[] = [];
  for (const key of 'abcdefghijklmnopqrstuvwxyz0123456789') s.palette.register({ id: key, title: `action ${key}`, key, run: () => void ran.push(key) });
  // Each report on a freshly opened palette (no filter typed yet), so a letter would run its action.
  for (let cb = 0x20; cb <= 0xff; cb++) {
    for (const report of [
      Buffer.from([0x1b, 0x5b, 0x4d, cb, 0x35, 0x36]),
      Buffer.from(`\x1b[${cb};21;22M`, 'latin1'),
      Buffer.from(`\x1b[<${cb - 32};21;22M`, 'latin1'),
    ]) {
      s.palette.open();
      s.router.push(report);
    }
  }
  assert.deepEqual(ran, []);
  assert.equal(s.palette.isOpen, true);
  assert.deepEqual(s.typed, []);
});

test('input router: an unclaimed report reaches the program in the encoding it asked for, or not at all', () => {
  const s = setup();
  s.router.push(Buffer.from('\x1b[<0;5;6M'));
  assert.deepEqual(s.typed, [], 'the program asked for no mouse reports');
  s.program.mouse = 1000;
  s.router.push(Buffer.from('\x1b[<0;5;6M'));
  assert.deepEqual(s.typed, ['\x1b[M %&'], 'legacy: the program did not ask for SGR');
  s.program.sgrMouse = true;
  s.router.push(Buffer.from('\x1b[Ma%&'));
  assert.deepEqual(s.typed, ['\x1b[M %&', '\x1b[<65;5;6M']);
});

test("input router: keys typed in the same read after the palette key's action reach the program", () => {
  const s = setup();
  s.palette.register({ id: 'noop', title: 'Nothing', key: 'n', run: () => undefined });
  s.router.push(Buffer.from('\x1cnls\r'));
  assert.equal(s.palette.isOpen, false);
  assert.deepEqual(s.typed, ['ls\r']);
});

test('input router: an Escape and a Ctrl+V read apart while input is held stay two keys when replayed', (t) => {
  t.mock.timers.enable({ apis: ['setTimeout'] });
  const s = setup();
  const claimed: string[] = [];
  const holds: Array<{ dispose(): void }> = [];
  s.router.addHook('pasteKey', (ev) => (claimed.push(ev.type === 'bytes' ? '' : ev.raw.toString('latin1')), holds.push(s.router.hold()), true));
  s.router.push(Buffer.from([0x16]));
  s.router.push(Buffer.from([0x1b]));
  t.mock.timers.tick(ESCAPE_FLUSH_MS + 5);
  s.router.push(Buffer.from([0x16]));
  // An arrow key split across two reads, no silence between: one key.
  s.router.push(Buffer.from('\x1b['));
  s.router.push(Buffer.from('A'));
  while (holds.length > 0) holds.shift()!.dispose();
  t.mock.timers.tick(1000);
  assert.deepEqual(claimed, ['\x16', '\x16'], 'the second Ctrl+V is the paste key, not Alt+Ctrl+V');
  assert.deepEqual(s.typed.join(''), '\x1b\x1b[A');
});

test('input router: a tap sees every read first, even while input is held; an OSC 5522 packet the scanner finds goes to the taps, never the program', () => {
  const s = setup();
  const seen: string[] = [];
  const bodies: string[] = [];
  const tap = s.router.addTap({
    take: (chunk) => (seen.push(chunk.toString('latin1')), Buffer.from(chunk.toString('latin1').replace('ANSWER', ''), 'latin1')),
    reply: (body) => bodies.push(body.toString('latin1')),
  });
  const hold = s.router.hold();
  s.router.push(Buffer.from('aANSWERb'));
  assert.deepEqual(seen, ['aANSWERb']);
  assert.deepEqual(s.typed, []);
  hold.dispose();
  assert.deepEqual(s.typed, ['ab']);
  // A read the tap takes whole is no read at all.
  s.router.push(Buffer.from('ANSWER'));
  assert.deepEqual(s.typed, ['ab']);
  s.router.push(Buffer.from('\x1b]5522;type=read:status=OK\x1b\\x'));
  assert.deepEqual(bodies, ['5522;type=read:status=OK']);
  assert.deepEqual(s.typed, ['ab', 'x']);
  tap.dispose();
  s.router.push(Buffer.from('\x1b]5522;type=read:status=DONE\x07'));
  assert.deepEqual(bodies, ['5522;type=read:status=OK']);
  assert.deepEqual(s.typed, ['ab', 'x']);
});
