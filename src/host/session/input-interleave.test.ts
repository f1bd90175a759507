/**
 * No operator key is lost: a property over random interleavings of the operator's keys (text, arrows, the
 * palette key and what follows it in the palette, Ctrl+V, Escape, bracketed pastes, terminal replies) with
 * the program's output (floods, mode changes, scroll regions, origin mode, synchronized updates, queries) and
 * resizes, the keyboard's bytes cut at random read boundaries. Every key reaches the program exactly once
 * and in order, or does exactly what it names (opens the palette, runs an action, claims the paste key).
 *
 * Time is the test's (mock timers): between two keys a person takes longer than the Escape key's flush
 * (ESCAPE_FLUSH_MS), so a read that ends with a key is followed by that silence; a read that ends inside a
 * key's bytes is followed at once by the rest, as a terminal writes them. Reads may also carry several keys
 * (a reader that fell behind), but never past a lone Escape (only the silence after it makes it one) nor past
 * a paste's end (keys in that read are typed on purpose: input-scan.ts, #afterPaste, tested on its own).
 */
import { mock, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { Disposable } from '../../disposable.ts';
import { ESCAPE_FLUSH_MS, InputRouter } from './input-router.ts';
import { ModalStack } from './modal-stack.ts';
import { PaletteController } from './palette-controller.ts';
import { TerminalFilter } from '../terminal/terminal-filter/filter.ts';
import { splitAt } from '../../../test/helpers/split.ts';

type Key =
  | { k: 'text'; s: string }
  | { k: 'arrow'; s: string }
  | { k: 'escape' }
  | { k: 'paste-key' }
  | { k: 'paste'; s: string }
  /** The palette key, then what the operator presses in the palette. */
  | { k: 'palette'; then: 'escape' | 'palette' | 'redraw' };

type Output = { o: 'flood'; lines: number; width: number } | { o: 'modes'; seq: string } | { o: 'query'; q: Query; after: number };
type Query = 'cpr' | 'da1' | 'osc11' | 'decrqm';

type Step = { key: Key; cuts: number[]; merge: boolean } | { out: Output; cuts: number[] } | { resize: { rows: number; cols: number } } | { release: true };

const QUERIES: Record<Query, { ask: string; reply: string }> = {
  cpr: { ask: '\x1b[6n', reply: '\x1b[12;40R' },
  da1: { ask: '\x1b[c', reply: '\x1b[?64;1;22c' },
  osc11: { ask: '\x1b]11;?\x07', reply: '\x1b]11;rgb:1e1e/1e1e/2e2e\x1b\\' },
  decrqm: { ask: '\x1b[?2026$p', reply: '\x1b[?2026;2$y' },
};

const MODE_CHANGES = [
  '\x1b[5;20r',
  '\x1b[r',
  '\x1b[?6h',
  '\x1b[?6l',
  '\x1b[39;40r\x1b[?6h',
  '\x1b[?2026h',
  '\x1b[?2026l',
  '\x1b[?1049h',
  '\x1b[?1049l',
  '\x1b[?25l',
  '\x1b[?25h',
  '\x1b[1;31m',
  '\x1b[0m',
  '\x1b7',
  '\x1b8',
  '\x1b[?7l',
  '\x1b[?7h',
  '\x1b[H\x1b[2J',
  '\x1b[?1h\x1b=',
];

const textChar = fc.constantFrom(...'abcdefghijklmnopqrstuvwxyz0123456789 ./-', '\r', '\x7f', 'é', '→', '\x03', '\x01');
const key: fc.Arbitrary<Key> = fc.oneof(
  { weight: 4, arbitrary: fc.array(textChar, { minLength: 1, maxLength: 6 }).map((a) => ({ k: 'text' as const, s: a.join('') })) },
  { weight: 2, arbitrary: fc.constantFrom('\x1b[A', '\x1b[B', '\x1bOC', '\x1b[1;5D', '\x1b[3~', '\x1bb').map((s) => ({ k: 'arrow' as const, s })) },
  { weight: 1, arbitrary: fc.constant({ k: 'escape' as const }) },
  { weight: 1, arbitrary: fc.constant({ k: 'paste-key' as const }) },
  {
    weight: 1,
    // Pasted text may hold the palette and paste bytes: pasted, they are text, never keys.
    arbitrary: fc
      .array(fc.oneof(textChar, fc.constantFrom('\x1c', '\x16', '\n')), { minLength: 1, maxLength: 12 })
      .map((a) => ({ k: 'paste' as const, s: a.join('') })),
  },
  { weight: 2, arbitrary: fc.constantFrom('escape' as const, 'palette' as const, 'redraw' as const).map((then) => ({ k: 'palette' as const, then })) },
);
const output: fc.Arbitrary<Output> = fc.oneof(
  { weight: 2, arbitrary: fc.record({ o: fc.constant('flood' as const), lines: fc.integer({ min: 1, max: 200 }), width: fc.integer({ min: 1, max: 200 }) }) },
  { weight: 3, arbitrary: fc.constantFrom(...MODE_CHANGES).map((seq) => ({ o: 'modes' as const, seq })) },
  { weight: 2, arbitrary: fc.record({ o: fc.constant('query' as const), q: fc.constantFrom<Query>('cpr', 'da1', 'osc11', 'decrqm'), after: fc.nat(3) }) },
);
const cuts = fc.array(fc.nat(4096), { maxLength: 3 });
const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ key, cuts, merge: fc.boolean() }) },
  { weight: 3, arbitrary: fc.record({ out: output, cuts }) },
  { weight: 1, arbitrary: fc.record({ resize: fc.record({ rows: fc.integer({ min: 5, max: 60 }), cols: fc.integer({ min: 20, max: 200 }) }) }) },
  { weight: 1, arbitrary: fc.constant({ release: true as const }) },
);

/** A key's UTF-8 bytes as the log shows program input (one character per byte). */
const latin1 = (s: string): string => Buffer.from(s, 'utf8').toString('latin1');

/** The log's program bytes merged into runs, so expected and actual compare whatever the read boundaries. */
function runs(log: string[]): string[] {
  const out: string[] = [];
  for (const e of log) {
    if (e.startsWith('>') && out.length > 0 && out[out.length - 1]!.startsWith('>')) out[out.length - 1] += e.slice(1);
    else out.push(e);
  }
  return out;
}

export function runScenario(steps: Step[], bracketed: boolean): { actual: string[]; expected: string[] } {
  const actual: string[] = [];
  const expected: string[] = [];
  let size = { rows: 40, cols: 120 };
  const filter = new TerminalFilter();
  const palette = new PaletteController({
    terminal: { write: () => true, size: () => size },
    closed: () => actual.push('closed'),
    notify: (_level, text) => actual.push(`notice ${text}`),
  });
  palette.onOpen(() => actual.push('open'));
  const sendInput = (b: Buffer): void => void actual.push(`>${b.toString('latin1')}`);
  const router = new InputRouter({
    scanner: {},
    palette,
    modals: new ModalStack({ palette }),
    sendInput,
    active: () => true,
    drawsOverlay: () => true,
    gesture: () => undefined,
    filter,
  });
  palette.register({ id: 'send-palette-key', title: 'Send the palette key to the program', key: 'palette', run: () => sendInput(Buffer.from([0x1c])) });
  palette.register({ id: 'redraw', title: 'Redraw the screen', key: 'r', run: () => void actual.push('action redraw') });
  // Ctrl+V is claimed as the image paste claims it: input is held (the clipboard is being read) until released.
  const holds: Disposable[] = [];
  router.addHook('pasteKey', () => {
    actual.push('paste-key');
    holds.push(router.hold());
    return true;
  });
  filter.push(Buffer.from(bracketed ? '\x1b[?2004h' : '\x1b[?2004l', 'latin1'));

  /** Keyboard bytes read but not yet pushed (a read carrying several keys). */
  let carry = Buffer.alloc(0);
  const read = (b: Buffer): void => {
    if (b.length > 0) router.push(b);
  };
  /** The reader catches up: what it carried is one read, then a person's pause. */
  const settle = (): void => {
    read(carry);
    carry = Buffer.alloc(0);
    mock.timers.tick(ESCAPE_FLUSH_MS + 5);
  };
  /** Replies the terminal owes, each due after this many more steps. */
  let owed: Array<{ reply: string; in: number }> = [];
  const typeKey = (bytes: string, at: number[], merge: boolean): void => {
    const pieces = splitAt(Buffer.concat([carry, Buffer.from(bytes, 'utf8')]), at);
    carry = Buffer.alloc(0);
    const last = pieces.pop()!;
    for (const p of pieces) read(p);
    if (merge) carry = Buffer.from(last);
    else {
      read(last);
      mock.timers.tick(ESCAPE_FLUSH_MS + 5);
    }
  };
  let paletteOpen = false;
  const answerQueries = (): void => {
    const due = owed.filter((o) => o.in <= 0);
    owed = owed.filter((o) => o.in > 0).map((o) => ({ ...o, in: o.in - 1 }));
    for (const d of due) {
      // A terminal writes a reply whole, between two keys.
      settle();
      read(Buffer.from(d.reply, 'latin1'));
      expected.push(`>${d.reply}`);
    }
  };

  for (const s of steps) {
    answerQueries();
    if ('key' in s) {
      const k = s.key;
      switch (k.k) {
        case 'text':
        case 'arrow':
          typeKey(k.s, s.cuts, s.merge);
          expected.push(`>${latin1(k.s)}`);
          break;
        case 'escape':
          typeKey('\x1b', s.cuts, false);
          expected.push('>\x1b');
          break;
        case 'paste-key':
          typeKey('\x16', s.cuts, s.merge);
          expected.push('paste-key');
          break;
        case 'paste':
          // Nothing read after a paste's end in the same read (see the header).
          typeKey(`\x1b[200~${k.s}\x1b[201~`, s.cuts, false);
          expected.push(bracketed ? `>\x1b[200~${latin1(k.s)}\x1b[201~` : `>${latin1(k.s)}`);
          break;
        case 'palette':
          typeKey('\x1c', s.cuts, s.merge);
          expected.push('open');
          paletteOpen = true;
          // What follows in the palette (the palette's Escape is a lone Escape too).
          typeKey(k.then === 'escape' ? '\x1b' : k.then === 'palette' ? '\x1c' : 'r', s.cuts, k.then === 'escape' ? false : s.merge);
          expected.push('closed');
          if (k.then === 'palette') expected.push('>\x1c');
          if (k.then === 'redraw') expected.push('action redraw');
          paletteOpen = false;
          break;
      }
    } else if ('out' in s) {
      // While the palette is up the host drops the program's output (the capsule repaints it after), so a
      // query made then never reaches the terminal, which then owes nothing.
      if (palette.isOpen) continue;
      const o = s.out;
      const bytes =
        o.o === 'flood'
          ? Array.from({ length: o.lines }, (_, i) => `${String(i).padStart(4, '0')} ${'x'.repeat(o.width)}\r\n`).join('')
          : o.o === 'modes'
            ? o.seq
            : QUERIES[o.q].ask;
      for (const p of splitAt(Buffer.from(bytes, 'latin1'), s.cuts)) filter.push(p);
      if (o.o === 'query') owed.push({ reply: QUERIES[o.q].reply, in: o.after });
    } else if ('resize' in s) {
      size = s.resize;
      if (palette.isOpen) palette.redraw();
    } else {
      settle();
      holds.shift()?.dispose();
    }
  }
  for (owed = owed.map((o) => ({ ...o, in: 0 })); owed.length > 0; ) answerQueries();
  settle();
  // A released hold replays what it held, which may take a new one (a held Ctrl+V): until none is left.
  while (holds.length > 0) holds.shift()!.dispose();
  mock.timers.tick(1_000);
  assert.equal(paletteOpen, false);
  router.dispose();
  return { actual: runs(actual), expected: runs(expected) };
}

test('input routing: every operator key reaches the program exactly once and in order, or does what it names, whatever the output and the read boundaries', () => {
  mock.timers.enable({ apis: ['setTimeout'] });
  try {
    fc.assert(
      fc.property(fc.array(step, { minLength: 1, maxLength: 40 }), fc.boolean(), (steps, bracketed) => {
        const { actual, expected } = runScenario(steps, bracketed);
        assert.deepEqual(actual, expected);
      }),
      { numRuns: 300 },
    );
  } finally {
    mock.timers.reset();
  }
});
