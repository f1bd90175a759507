// Keystroke round trip: write one byte to the operator's side, the program echoes it, time until the echo
// arrives back on the operator's side.
import { setTimeout as sleep } from 'node:timers/promises';
import { median, quantile } from './stats.mjs';

/** The echo program: raw mode so each byte is read as it arrives, no line discipline echo, `cat` echoes. */
export const ECHO_PROGRAM = ['sh', '-c', 'stty raw -echo; printf "BENCH-%s\\n" READY; exec cat'];

/** Round trips measured in `session` (started with ECHO_PROGRAM and ready): `count` keys, `gapMs` apart. */
async function roundTrips(session, count, gapMs) {
  const letters = 'abcdefghijklmnopqrstuvwxyz';
  const times = [];
  for (let i = 0; i < count; i++) {
    const ch = letters[i % letters.length];
    const seen = session.pty.waitForText(ch, { timeoutMs: 5000 });
    const t0 = process.hrtime.bigint();
    session.pty.write(ch);
    await seen;
    times.push(Number(process.hrtime.bigint() - t0) / 1e6);
    await sleep(gapMs);
  }
  return times;
}

/**
 * Keystroke round trips of several variants, taking turns. Every variant's session is started first and
 * stays up: `warmup` discarded keys in each, then `turns` turns in which each session in order gets
 * `samples / turns` keys, `gapMs` apart (a typist's keys are apart; back-to-back probes would measure a busy
 * pipeline instead). The machine's state drifts over a run (on a two-CPU virtual machine one session's p50
 * differed from the next one's of the same build by up to 0.4 ms), so measuring each variant's keys all at
 * once compared one variant's slow spell with another's quick one; in turns, every spell falls on all of them
 * alike. The sessions stay up between turns so each keeps what it learned: a new session per turn measured
 * jackin's first keys over and over, while its JIT still compiles the paths a key takes (in one session of
 * 2,000 keys here, the p50 of the first 200 was 0.2 to 0.4 ms above that of the last 200). Sets
 * `results[id].latency` to the p50 and p99 of all its keys, with the p50 of each turn (`turnP50`), and
 * `results[id].error` on failure.
 */
export async function latencyInTurns(variants, results, { samples, turns, log, section, warmup = 20, gapMs = 5, timeoutMs = 30_000 }) {
  const perTurn = Math.ceil(samples / turns);
  const sessions = new Map();
  const fail = (v, e) => {
    results[v.id].error = e instanceof Error ? e.message : String(e);
    log(`${section}: ${v.label}: failed: ${results[v.id].error}`);
  };
  try {
    for (const v of variants) {
      if (results[v.id].error) continue;
      try {
        const session = await v.start(ECHO_PROGRAM);
        sessions.set(v.id, session);
        await session.pty.waitForText('BENCH-READY', { timeoutMs });
        await roundTrips(session, warmup, gapMs);
      } catch (e) {
        fail(v, e);
      }
    }
    const times = Object.fromEntries(variants.map((v) => [v.id, []]));
    const turnP50 = Object.fromEntries(variants.map((v) => [v.id, []]));
    for (let t = 0; t < turns; t++) {
      for (const v of variants) {
        if (results[v.id].error) continue;
        try {
          const turn = await roundTrips(sessions.get(v.id), perTurn, gapMs);
          times[v.id].push(...turn);
          turnP50[v.id].push(quantile(turn, 0.5));
        } catch (e) {
          fail(v, e);
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
  } finally {
    // Every session is stopped, even when one stop fails (a container that will not go, say).
    const stops = await Promise.allSettled([...sessions.values()].map((session) => session.stop()));
    for (const s of stops)
      if (s.status === 'rejected') log(`${section}: stopping a session failed: ${s.reason instanceof Error ? s.reason.message : String(s.reason)}`);
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
