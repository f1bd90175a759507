// Keystroke round trip: write one byte to the operator's side, the program echoes it, time until the echo
// arrives back on the operator's side.
import { setTimeout as sleep } from 'node:timers/promises';
import { median, quantile } from './stats.mjs';

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
    return { p50: quantile(times, 0.5), p99: quantile(times, 0.99), samples: times.length, times };
  } finally {
    await session.stop();
  }
}

/**
 * Round trips of several variants, taking turns: each turn starts a new session of every variant in order
 * and measures `samples / turns` keys in it. The machine's state drifts over a run (on a two-CPU virtual
 * machine one session's p50 differed from the next one's of the same build by up to 0.4 ms), so measuring
 * each variant's keys all at once compared one variant's slow spell with another's quick one; in turns,
 * every spell falls on all of them alike. Sets `results[id].latency` to the p50 and p99 of all its keys, with
 * the p50 of each turn (`turnP50`), and `results[id].error` on failure.
 */
export async function latencyInTurns(variants, results, { samples, turns, log, section }) {
  const perTurn = Math.ceil(samples / turns);
  const times = Object.fromEntries(variants.map((v) => [v.id, []]));
  const turnP50 = Object.fromEntries(variants.map((v) => [v.id, []]));
  for (let t = 0; t < turns; t++) {
    for (const v of variants) {
      const r = results[v.id];
      if (r.error) continue;
      try {
        const m = await measureLatency(v, { samples: perTurn });
        times[v.id].push(...m.times);
        turnP50[v.id].push(m.p50);
      } catch (e) {
        r.error = e instanceof Error ? e.message : String(e);
        log(`${section}: ${v.label}: failed: ${r.error}`);
      }
    }
  }
  for (const v of variants) {
    const r = results[v.id];
    if (r.error || times[v.id].length === 0) continue;
    const all = times[v.id];
    r.latency = { p50: quantile(all, 0.5), p99: quantile(all, 0.99), samples: all.length, turnP50: turnP50[v.id] };
    log(`${section}: ${v.label}: p50 ${r.latency.p50.toFixed(3)} ms, p99 ${r.latency.p99.toFixed(3)} ms (${all.length} keys in ${turns} turns)`);
  }
}

/** `a - b` of each turn's p50 (index i of both is the same turn), and their median, as text. */
export function turnOverheads(a, b) {
  const pa = a?.latency?.turnP50 ?? [];
  const pb = b?.latency?.turnP50 ?? [];
  const d = pa.slice(0, pb.length).map((x, i) => x - pb[i]);
  if (d.length === 0) return 'n/a';
  return `${d.map((x) => x.toFixed(3)).join(', ')} ms (median ${median(d).toFixed(3)})`;
}
