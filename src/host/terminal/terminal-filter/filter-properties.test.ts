// Properties of the terminal filter: split invariance, and a differential check against the independent
// reference in test/helpers/terminal-reference.ts. The fuzzer (npm run fuzz) runs mutated streams.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { TerminalFilter } from './filter.ts';
import type { FilterEvent } from './context.ts';
import { referenceText, referenceViolations, TEXT_CHARS, TOKENS, type StreamToken } from '../../../../test/helpers/terminal-reference.ts';
import { fuzzTerminalFilter } from '../../../../test/helpers/terminal-fuzz.ts';
import { splitAt } from '../../../../test/helpers/split.ts';

const token = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...TOKENS) },
  {
    weight: 2,
    arbitrary: fc.array(fc.constantFrom(...TEXT_CHARS), { minLength: 1, maxLength: 6 }).map((cs): StreamToken => ({ s: cs.join(''), kind: 'text' })),
  },
);
const stream = fc.array(token, { maxLength: 40 });

function filterAll(chunks: Buffer[], graphics = false, bell = false): { out: Buffer; events: FilterEvent[] } {
  const events: FilterEvent[] = [];
  const f = new TerminalFilter({
    graphics,
    now: () => 0,
    onEvent: (e) => events.push(e),
    hostNeeds: { mouseCapture: true, bracketedPaste: true, focusReports: false },
  });
  // Bell events (JACKIN_NOTIFY_BELL) and desktop-only notifications take other paths through the filter.
  f.bellEvents = bell;
  f.notifyTerminal = !bell;
  const parts = chunks.map((c) => f.push(c));
  parts.push(f.end());
  return { out: Buffer.concat(parts), events };
}

test('terminal filter property: splitting the stream at any bytes never changes the output or the events', () => {
  fc.assert(
    fc.property(stream, fc.array(fc.nat(), { maxLength: 12 }), fc.boolean(), fc.boolean(), (tokens, cuts, graphics, bell) => {
      const bytes = Buffer.from(tokens.map((t) => t.s).join(''), 'latin1');
      const whole = filterAll([bytes], graphics, bell);
      const split = filterAll(splitAt(bytes, cuts), graphics, bell);
      assert.deepEqual(split.out, whole.out);
      assert.deepEqual(split.events, whole.events);
    }),
    { numRuns: 1500 },
  );
});

test('terminal filter property: one byte at a time gives the same output as the whole stream', () => {
  fc.assert(
    fc.property(stream, (tokens) => {
      const bytes = Buffer.from(tokens.map((t) => t.s).join(''), 'latin1');
      const whole = filterAll([bytes]);
      const bytewise = filterAll([...bytes].map((b) => Buffer.from([b])));
      assert.deepEqual(bytewise.out, whole.out);
    }),
    { numRuns: 300 },
  );
});

test('terminal filter differential: the reference finds only allowed controls, all the text, and every kept sequence in order', () => {
  fc.assert(
    fc.property(stream, (tokens) => {
      const bytes = Buffer.from(tokens.map((t) => t.s).join(''), 'latin1');
      const { out } = filterAll([bytes]);
      assert.deepEqual(referenceViolations(out), []);
      const text = tokens
        .filter((t) => t.kind === 'text')
        .map((t) => t.s)
        .join('');
      assert.equal(referenceText(out), text);
      // Every kept sequence appears, in 7-bit form and in order; nothing of a dropped one does.
      const s = out.toString('latin1');
      let at = 0;
      for (const t of tokens) {
        if (t.kind !== 'keep') continue;
        const found = s.indexOf(t.out!, at);
        assert.ok(found >= 0, `kept ${JSON.stringify(t.s)} missing from ${JSON.stringify(s)}`);
        at = found + t.out!.length;
      }
      for (const t of tokens) if (t.kind === 'drop' && t.s.length > 3) assert.ok(!s.includes(t.s), `dropped ${JSON.stringify(t.s)} present`);
    }),
    { numRuns: 1500 },
  );
});

test('terminal filter reference: catches what the policy forbids (the oracle can fail)', () => {
  for (const bad of [
    '\x1b[21t',
    '\x1b]52;c;YQ==\x07',
    '\x1bPq#0~\x1b\\',
    '\x1b[?1016h',
    '\x9b31m',
    '\xc2\x9d0;x\x07',
    '\x1b]8;;file:///x\x07',
    '\x05',
    'x\x1b',
  ]) {
    assert.notDeepEqual(referenceViolations(Buffer.from(bad, 'latin1')), [], JSON.stringify(bad));
  }
  assert.deepEqual(referenceViolations(Buffer.from('\x1b[31m\xe2\x94\x80\x1b]8;;https://a.example/\x1b\\', 'latin1')), []);
});

test('terminal filter fuzz: 5,000 mutated escape streams, no exception, only allowed controls, bounded state', () => {
  const s = fuzzTerminalFilter(5_000, 0x7e41);
  assert.equal(s.streams, 5_000);
  // The mutations must reach copy offers, drops and plenty of passed output, not just break everything.
  assert.ok(s.copyOffers > 100 && s.dropped > 2000 && s.outputBytes > 100_000, JSON.stringify(s));
});
