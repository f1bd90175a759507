// Issue 8 item 4: keystroke round trip through `jackin run` while a large `jackin export` from the same
// instance and continuous program output run at the same time, against the same measurement with nothing
// else running (and with the output alone, to tell the two loads apart). Target: p99 < 20 ms under load.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { spawnOnPty } from '../lib/pty-process.mjs';
import { fmt, quantile } from '../lib/stats.mjs';
import { writeRandomFile } from '../lib/files.mjs';
import { capsulePids, isAlive } from '../lib/processes.mjs';

export const id = 'fairness';
export const title = 'Fairness: keystroke round trip under a concurrent export and program output';

const root = fileURLToPath(new URL('../..', import.meta.url));
const JACKIN = join(root, 'bin', 'jackin.js');
const MiB = 1024 * 1024;
const LETTERS = 'abcdefghijklmnopqrstuvwxyz';

// The program: raw mode; each key comes back as `<k>`; with FLOOD_BYTES set, a line of digits (never `<`)
// every FLOOD_MS as well, from the first key on (the warm-up keys), so the flood cannot scroll the READY
// marker away before the operator's side has attached. Markers and flood cannot be confused, so a round
// trip is the marker's arrival.
const PROGRAM = `
const bytes = Number(process.env.FLOOD_BYTES || 0);
const every = Number(process.env.FLOOD_MS || 2);
let flooding = false;
process.stdin.setRawMode(true);
process.stdin.on('data', (b) => {
  for (const c of b.toString('latin1')) process.stdout.write('<' + c + '>');
  if (bytes > 0 && !flooding) {
    flooding = true;
    const line = '0123456789 '.repeat(Math.ceil(bytes / 11)).slice(0, bytes - 1) + '\\n';
    setInterval(() => process.stdout.write(line), every);
  }
});
process.stdout.write('BENCH-' + 'READY\\n');
`;

function baseEnv(extra) {
  return { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/root', LANG: 'C.UTF-8', TERM: 'xterm-256color', ...extra };
}

/** `jackin run` of the program in `ws`, with a known JACKIN_HOME so `jackin export --from` can reach it. */
async function startSession(base, name, flood) {
  const home = join(base, `home-${name}`);
  const ws = join(base, 'ws');
  const p = spawnOnPty(process.execPath, [JACKIN, 'run', '--name', name, '--', process.execPath, join(base, 'program.cjs')], {
    cwd: ws,
    env: baseEnv({ JACKIN_HOME: home, JACKIN_PASTE_KEY: 'none', FLOOD_BYTES: String(flood.bytes), FLOOD_MS: String(flood.everyMs) }),
  });
  const session = {
    pty: p,
    home,
    async stop() {
      for (const pid of capsulePids(home)) {
        try {
          process.kill(pid, 'SIGTERM');
        } catch {
          // Already gone.
        }
      }
      for (let i = 0; i < 100 && capsulePids(home).some(isAlive); i++) await sleep(20);
      for (const pid of capsulePids(home)) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // Already gone.
        }
      }
      p.kill();
    },
  };
  try {
    await p.waitForText('BENCH-READY', { timeoutMs: 30_000 });
  } catch (e) {
    // Leave no capsule or program running (a flooding program would skew every later measurement).
    await session.stop();
    throw e;
  }
  return session;
}

async function keystrokes(pty, { samples, warmup = 20, gapMs = 5 }) {
  const times = [];
  for (let i = 0; i < warmup + samples; i++) {
    const marker = `<${LETTERS[i % LETTERS.length]}>`;
    const seen = pty.waitForText(marker, { timeoutMs: 10_000 });
    const t0 = process.hrtime.bigint();
    pty.write(marker[1]);
    await seen;
    if (i >= warmup) times.push(Number(process.hrtime.bigint() - t0) / 1e6);
    await sleep(gapMs);
  }
  return { p50: quantile(times, 0.5), p99: quantile(times, 0.99), max: Math.max(...times), samples: times.length };
}

/** Runs `jackin export` of `file` again and again until stop() (so every sample sees an export running). */
function exportLoop(home, name, file, out) {
  let stopping = false;
  let child;
  const stats = { completed: 0, failed: 0, bytes: 0, seconds: 0, lastError: '' };
  const done = (async () => {
    while (!stopping) {
      const t0 = performance.now();
      child = spawn(process.execPath, [JACKIN, 'export', '--from', name, file, '--to', out, '--json'], {
        env: { ...process.env, JACKIN_HOME: home },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let text = '';
      child.stdout.on('data', (b) => (text += b));
      child.stderr.on('data', (b) => (text += b));
      const code = await new Promise((r) => child.once('exit', (c) => r(c)));
      if (stopping) break;
      if (code === 0) {
        stats.completed++;
        stats.seconds += (performance.now() - t0) / 1000;
        try {
          const r = JSON.parse(text.trim().split('\n')[0]);
          stats.bytes += r.bytes;
          rmSync(r.destination, { force: true });
        } catch {
          // Counted as completed; the size is unknown.
        }
      } else {
        stats.failed++;
        stats.lastError = text.slice(0, 300);
        await sleep(200);
      }
    }
  })();
  return {
    stats,
    async stop() {
      stopping = true;
      child?.kill('SIGINT');
      await done;
    },
  };
}

export async function run({ quick, log }) {
  const fileMiB = quick ? 256 : 1024;
  const samples = quick ? 300 : 2000;
  const flood = { bytes: 1024, everyMs: 2 };
  const base = mkdtempSync(join(tmpdir(), 'jackin-bench-fairness-'));
  mkdirSync(join(base, 'ws'));
  writeFileSync(join(base, 'program.cjs'), PROGRAM);
  const data = { fileMiB, samples, flood };
  try {
    log(`fairness: writing a ${fileMiB} MiB file`);
    writeRandomFile(join(base, 'ws', 'big.bin'), fileMiB * MiB);

    for (const [key, withFlood, withExport] of [
      ['idle', false, false],
      ['output', true, false],
      ['loaded', true, true],
    ]) {
      const name = `fair-${key}-${process.pid}`;
      const s = await startSession(base, name, withFlood ? flood : { bytes: 0, everyMs: 0 });
      let loop;
      try {
        if (withExport) {
          loop = exportLoop(s.home, name, 'big.bin', join(base, 'out'));
          await sleep(300); // the first export is under way
        }
        log(`fairness: ${key}: ${samples} keystrokes${withFlood ? ', program output' : ''}${withExport ? `, ${fileMiB} MiB exports in a loop` : ''}`);
        data[key] = await keystrokes(s.pty, { samples });
        if (loop) {
          await loop.stop();
          data.exports = loop.stats;
        }
        log(`fairness: ${key}: p50 ${fmt(data[key].p50, 3)} ms, p99 ${fmt(data[key].p99, 3)} ms`);
      } catch (e) {
        data[key] = { error: e instanceof Error ? e.message : String(e) };
        log(`fairness: ${key}: failed: ${data[key].error}`);
        await loop?.stop();
      } finally {
        await s.stop();
      }
    }
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
  return { data, markdown: render(data) };
}

function render(d) {
  const row = (label, r) => (r?.error ? `| ${label} | failed: ${r.error} | | |` : `| ${label} | ${fmt(r?.p50, 3)} | ${fmt(r?.p99, 3)} | ${fmt(r?.max, 1)} |`);
  const e = d.exports ?? { completed: 0, failed: 0, bytes: 0, seconds: 0 };
  const rate = e.seconds > 0 ? e.bytes / MiB / e.seconds : Number.NaN;
  const p99 = d.loaded?.p99;
  return [
    `| keystroke round trip through \`jackin run\` | p50 (ms) | p99 (ms) | max (ms) |`,
    `|---|---:|---:|---:|`,
    row('nothing else running (baseline)', d.idle),
    row(`program output (${d.flood.bytes} B every ${d.flood.everyMs} ms)`, d.output),
    row(`program output + ${d.fileMiB} MiB \`jackin export\` in a loop`, d.loaded),
    '',
    `${d.samples} keys 5 ms apart after 20 warm-up keys; the program echoes each key as \`<k>\` in raw mode. ` +
      `Under load, \`jackin export --from\` the same instance ran back to back for the whole measurement: ` +
      `${e.completed} completed (${fmt(rate, 0)} MiB/s each while measured), ${e.failed} failed${e.failed ? ` (last: ${e.lastError})` : ''}.`,
    '',
    `- p99 under concurrent export and output < 20 ms: ${fmt(p99, 3)} ms — ${Number.isFinite(p99) && p99 < 20 ? 'met' : '**missed**'}`,
    '',
  ].join('\n');
}
