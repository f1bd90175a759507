/**
 * The program's colours cannot hide or restyle what the host draws: with every one of the 16 colours and the
 * default foreground and background set to the background, the palette, a confirmation and a notice are drawn
 * with the operator's own colours (the program's reset while host UI is up, put back after), in colour and
 * under NO_COLOR, and the bytes of the drawing itself are the same as for a program that set no colour.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { setHostColour } from '../../ui/host-draw.ts';
import { HostTerminal } from '../terminal/terminal.ts';
import { ConfirmController } from './confirm-controller.ts';
import { NoticeOverlay } from './notice-overlay.ts';
import { PaletteController } from './palette-controller.ts';

const BG = 'rgb:10/10/10';
/** All 16 colours, OSC 10 and OSC 11 set to the background the program learned (its OSC 11 query passes). */
const HOSTILE = `\x1b]4;${Array.from({ length: 16 }, (_, i) => `${i};${BG}`).join(';')}\x07\x1b]10;${BG}\x07\x1b]11;${BG}\x1b\\`;

/** The colours a terminal would use after `stream`: what OSC 4/10/11 set and OSC 104/110/111 did not reset. */
function colourState(stream: string): { palette: Record<number, string>; fg: string | null; bg: string | null } {
  const state = { palette: {} as Record<number, string>, fg: null as string | null, bg: null as string | null };
  for (const m of stream.matchAll(/\x1b\](\d+)(?:;([^\x07\x1b]*))?(?:\x07|\x1b\\)/gu)) {
    const f = (m[2] ?? '').split(';').filter((x) => x !== '');
    switch (m[1]) {
      case '4':
        for (let i = 0; i + 1 < f.length; i += 2) if (f[i + 1] !== '?') state.palette[Number(f[i])] = f[i + 1]!;
        break;
      case '10':
        if (f[0] !== '?') state.fg = f[0] ?? null;
        if (f[1] !== undefined && f[1] !== '?') state.bg = f[1];
        break;
      case '11':
        if (f[0] !== '?') state.bg = f[0] ?? null;
        break;
      case '104':
        if (f.length === 0) state.palette = {};
        for (const x of f) delete state.palette[Number(x)];
        break;
      case '110':
        state.fg = null;
        break;
      case '111':
        state.bg = null;
        break;
    }
  }
  return state;
}

const OPERATOR = { palette: {}, fg: null, bg: null };
const PROGRAM = { palette: Object.fromEntries(Array.from({ length: 16 }, (_, i) => [i, BG])), fg: BG, bg: BG };

function setup() {
  let out = '';
  const stdout = new Writable({ write: (c: Buffer, _e, cb) => ((out += c.toString('latin1')), cb()) });
  const terminal = new HostTerminal({ stdin: process.stdin, stdout: Object.assign(stdout, { rows: 30, columns: 100 }) });
  const mark = { at: 0 };
  return {
    terminal,
    /** Everything written since the last call. */
    since: () => {
      const s = out.slice(mark.at);
      mark.at = out.length;
      return s;
    },
    all: () => out,
  };
}

/** Strips the colour sequences: what remains is the drawing. */
const drawing = (s: string) => s.replace(/\x1b\](?:4|10|11|104|110|111)(?:;[^\x07\x1b]*)?(?:\x07|\x1b\\)/gu, '');

for (const colour of [true, false]) {
  test(`${colour ? 'in colour' : 'under NO_COLOR'}: the palette, a prompt and a notice are drawn with the operator's colours, never the program's`, async (t) => {
    setHostColour(colour);
    t.after(() => setHostColour(true));
    t.mock.timers.enable({ apis: ['setTimeout'] });
    const draws: Record<string, string> = {};
    for (const hostile of [false, true]) {
      const s = setup();
      if (hostile) s.terminal.writeOutput(Buffer.from(HOSTILE));
      assert.deepEqual(colourState(s.all()), hostile ? PROGRAM : OPERATOR);
      s.since();

      const palette = new PaletteController({ terminal: s.terminal, closed: () => undefined, notify: () => undefined });
      palette.register({ id: 'd', title: 'Detach', key: 'd', run: () => undefined });
      palette.open();
      const p = s.since();
      assert.deepEqual(colourState(s.all()), OPERATOR, 'while the palette is up');
      palette.handle({ type: 'bytes', bytes: Buffer.from('\x1b') });
      s.since();
      assert.deepEqual(colourState(s.all()), hostile ? PROGRAM : OPERATOR, "the program's colours back after");

      const confirm = new ConfirmController({ terminal: s.terminal, closed: () => undefined });
      const answer = confirm.ask({ kind: 'url', target: 'https://evil.example/steal' });
      const c = s.since();
      assert.deepEqual(colourState(s.all()), OPERATOR, 'while the prompt is up');
      confirm.handle({ type: 'bytes', bytes: Buffer.from('\x1b') });
      assert.equal(await answer, false);
      s.since();
      assert.deepEqual(colourState(s.all()), hostile ? PROGRAM : OPERATOR);

      let now = 0;
      const notices = new NoticeOverlay({ terminal: s.terminal, modals: { anyOpen: false }, repaint: () => undefined, now: () => now });
      notices.post('success', 'Opened https://good.example');
      const n = s.since();
      assert.deepEqual(colourState(s.all()), OPERATOR, 'while the notice is up');
      // The program's colour changes while a notice is up wait, and are the ones put back.
      s.terminal.writeOutput(Buffer.from(`\x1b]11;rgb:20/20/20\x07x`));
      assert.equal(s.since(), 'x');
      assert.deepEqual(colourState(s.all()), OPERATOR);
      now += 3000;
      t.mock.timers.tick(3000);
      assert.deepEqual(colourState(s.all()), hostile ? { ...PROGRAM, bg: 'rgb:20/20/20' } : { ...OPERATOR, bg: 'rgb:20/20/20' });
      notices.dispose();

      for (const [k, v] of Object.entries({ palette: p, confirm: c, notice: n })) {
        const key = `${k}`;
        if (!hostile) draws[key] = drawing(v);
        else assert.equal(drawing(v), draws[key], `the ${k}'s drawing does not depend on the program's colours`);
      }
      s.terminal.restore();
    }
  });
}
