/**
 * Mutation fuzzing of the host's terminal filter. Streams are built from the token catalogue of
 * terminal-reference.ts (sequences of every kind, in 7-bit, 8-bit C1 and UTF-8 C1 forms, and text),
 * mutated (bit flips, byte changes, inserted random runs, deletions, cut sequences, long strings), and fed
 * in random slices. Invariants: no exception; the output holds only controls the policy allows (checked
 * by the independent reference); the filter's held state stays under its cap. Deterministic per seed.
 */
import { TerminalFilter } from '../../src/host/terminal/terminal-filter/filter.ts';
import { MAX_OSC52_BYTES } from '../../src/host/terminal/terminal-filter/osc-policy.ts';
import { Rng } from './frame-fuzz.ts';
import { referenceViolations, TEXT_CHARS, TOKENS } from './terminal-reference.ts';

export interface TerminalFuzzStats {
  streams: number;
  inputBytes: number;
  outputBytes: number;
  copyOffers: number;
  dropped: number;
  maxHeld: number;
}

const INTRODUCERS = ['\x1b', '\x1b[', '\x1b]', '\x1bP', '\x1b_', '\x9b', '\x9d', '\x90', '\xc2', '\xc2\x9b', '\xc2\x9d', '\x1b\\', '\x9c', '\x07', '\x18'];

function piece(rng: Rng): string {
  switch (rng.int(10)) {
    case 0:
      return rng.bytes(1 + rng.int(12)).toString('latin1');
    case 1:
      return INTRODUCERS[rng.int(INTRODUCERS.length)]!;
    case 2:
    case 3:
    case 4: {
      let t = '';
      for (let n = 1 + rng.int(8); n > 0; n--) t += TEXT_CHARS[rng.int(TEXT_CHARS.length)];
      return t;
    }
    case 5:
      // A long string: bigger than the OSC cap now and then, or a huge sequence parameter list.
      return rng.int(2) === 0 ? `\x1b]${rng.int(2) === 0 ? '52;c;' : '2;'}${'QUFB'.repeat(rng.int(4000))}` : `\x1b[${'1;'.repeat(rng.int(400))}m`;
    default:
      return TOKENS[rng.int(TOKENS.length)]!.s;
  }
}

function mutate(rng: Rng, b: Buffer): Buffer {
  if (b.length === 0) return b;
  const out = Buffer.from(b);
  switch (rng.int(5)) {
    case 0:
      out[rng.int(out.length)]! ^= 1 << rng.int(8);
      return out;
    case 1:
      out[rng.int(out.length)] = rng.int(256);
      return out;
    case 2: {
      const at = rng.int(out.length + 1);
      return Buffer.concat([out.subarray(0, at), rng.bytes(1 + rng.int(8)), out.subarray(at)]);
    }
    case 3: {
      const at = rng.int(out.length);
      return Buffer.concat([out.subarray(0, at), out.subarray(Math.min(out.length, at + 1 + rng.int(6)))]);
    }
    default:
      return out.subarray(0, rng.int(out.length + 1));
  }
}

/** Runs `streams` mutated streams through fresh filters. Throws, naming the seed, on a broken invariant. */
export function fuzzTerminalFilter(streams: number, seed: number): TerminalFuzzStats {
  const rng = new Rng(seed);
  const stats: TerminalFuzzStats = { streams: 0, inputBytes: 0, outputBytes: 0, copyOffers: 0, dropped: 0, maxHeld: 0 };
  while (stats.streams < streams) {
    stats.streams += 1;
    const parts: Buffer[] = [];
    for (let n = 1 + rng.int(12); n > 0; n--) {
      const p = Buffer.from(piece(rng), 'latin1');
      parts.push(rng.int(3) === 0 ? mutate(rng, p) : p);
    }
    const input = Buffer.concat(parts);
    const f = new TerminalFilter({
      now: () => 0,
      hostNeeds: { mouseCapture: rng.int(2) === 0, bracketedPaste: true, focusReports: rng.int(2) === 0 },
      onEvent: (e) => {
        if (e.type === 'copy-offer') stats.copyOffers += 1;
        else if (e.type === 'dropped') stats.dropped += 1;
      },
    });
    const out: Buffer[] = [];
    try {
      let at = 0;
      while (at < input.length) {
        const step = 1 + rng.int(Math.max(1, Math.min(256, input.length - at)));
        out.push(f.push(input.subarray(at, at + step)));
        at += step;
        if (f.heldBytes > MAX_OSC52_BYTES + 1024) throw new Error(`filter holds ${f.heldBytes} bytes`);
        stats.maxHeld = Math.max(stats.maxHeld, f.heldBytes);
      }
      out.push(f.end());
    } catch (e) {
      throw new Error(`seed ${seed}, stream ${stats.streams}: ${String(e)} on ${JSON.stringify(input.toString('latin1').slice(0, 300))}`, { cause: e });
    }
    const output = Buffer.concat(out);
    const problems = referenceViolations(output);
    if (problems.length > 0) {
      throw new Error(`seed ${seed}, stream ${stats.streams}: ${problems.join('; ')} for input ${JSON.stringify(input.toString('latin1').slice(0, 300))}`);
    }
    stats.inputBytes += input.length;
    stats.outputBytes += output.length;
  }
  return stats;
}
