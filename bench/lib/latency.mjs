// Keystroke round trip: write one byte to the operator's side, the program echoes it, time until the echo
// arrives back on the operator's side.
import { setTimeout as sleep } from 'node:timers/promises';
import { quantile } from './stats.mjs';

/** The echo program: raw mode so each byte is read as it arrives, no line discipline echo, `cat` echoes. */
export const ECHO_PROGRAM = ['sh', '-c', 'stty raw -echo; printf "BENCH-%s\\n" READY; exec cat'];

/**
 * Measures `samples` round trips after `warmup` discarded ones, `gapMs` apart (a typist's keys are apart;
 * back-to-back probes would measure a busy pipeline instead).
 */
export async function measureLatency(variant, { samples, warmup = 20, gapMs = 5, timeoutMs = 20_000 }) {
  const session = await variant.start(ECHO_PROGRAM);
  try {
    await session.pty.waitForText('BENCH-READY', { timeoutMs });
    const letters = 'abcdefghijklmnopqrstuvwxyz';
    const times = [];
    for (let i = 0; i < warmup + samples; i++) {
      const ch = letters[i % letters.length];
      const seen = session.pty.waitForText(ch, { timeoutMs: 5000 });
      const t0 = process.hrtime.bigint();
      session.pty.write(ch);
      await seen;
      const t1 = process.hrtime.bigint();
      if (i >= warmup) times.push(Number(t1 - t0) / 1e6);
      await sleep(gapMs);
    }
    return { p50: quantile(times, 0.5), p99: quantile(times, 0.99), samples: times.length };
  } finally {
    await session.stop();
  }
}
