// Output throughput: the program writes a large text file to its terminal; time from the go key until the
// end marker printed after it reaches the operator's side (tmux may coalesce screen updates, so the
// marker, not a byte count, is what ends the measurement for every variant alike).
import { createWriteStream, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { once } from 'node:events';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { median } from './stats.mjs';
import { TICKS } from './processes.mjs';

/** The end markers are this followed by FIRST and SECOND. */
const END_MARKER = 'BENCH-END-OF-';
const MIB = 1024 * 1024;

/**
 * Writes `mib` MiB of base64 text in 76-column lines (what `base64` prints) and returns its path. With
 * `coloured`, each line is drawn in two colours and ends with a reset (`ESC[32m`, `ESC[1;34m`, `ESC[0m`:
 * what `ls --color`, compilers and test runners print), and the file ends with a whole line.
 */
export async function makeTextFile(mib, { coloured = false } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'jackin-bench-data-'));
  const path = join(dir, 'output.txt');
  const out = createWriteStream(path);
  let written = 0;
  const total = mib * MIB;
  while (written < total) {
    const lines = [];
    let chunk = 0;
    while (chunk < 64 * 1024 && written + chunk < total) {
      const text = randomBytes(57).toString('base64');
      const line = coloured ? `\x1b[32m${text.slice(0, 40)}\x1b[1;34m${text.slice(40)}\x1b[0m\n` : `${text}\n`;
      lines.push(line);
      chunk += line.length;
    }
    const text = coloured ? lines.join('') : lines.join('').slice(0, total - written);
    written += text.length;
    if (!out.write(text)) await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
  return { path, bytes: written, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * The machine's CPU time so far, from the first line of /proc/stat (in clock ticks): `busy` is user, nice,
 * system, irq and softirq (not idle, iowait, or steal: time the hypervisor gave to another guest), `all` every
 * state. Undefined where there is no /proc/stat (not Linux).
 */
function machineTicks() {
  let line;
  try {
    line = readFileSync('/proc/stat', 'latin1').split('\n', 1)[0];
  } catch {
    return undefined;
  }
  const t = line.trim().split(/\s+/).slice(1, 9).map(Number);
  const all = t.reduce((a, b) => a + b, 0);
  return { busy: all - t[3] - t[4] - t[7], all };
}

/**
 * Runs `cat file` through `variant` `runs` times; each run is one session whose program prints the file
 * twice, a go key before each. The first `cat` is the first flood of a new session (a new capsule still
 * compiling its hot paths, a new tmux server); the second, the same flood in a session that is already
 * running, the steady state of an agent that has been at work for a while. Reports both medians in MiB/s.
 */
export async function measureThroughput(variant, file, { runs, timeoutMs = 120_000 }) {
  // The program stays alive after the last marker (`read stop`): node-pty drops output still unread when
  // the program exits and the PTY closes, which would lose the marker.
  const program = [
    'sh',
    '-c',
    `stty -echo; printf "BENCH-%s\\n" READY; read go; cat "$0"; printf "\\nBENCH-END-OF-%s\\n" FIRST; read go; cat "$0"; printf "\\nBENCH-END-OF-%s\\n" SECOND; read stop`,
    file.path,
  ];
  const cold = [];
  const warm = [];
  const warmCpu = [];
  const timed = async (pty, marker, cpu) => {
    const done = pty.waitForText(marker, { timeoutMs });
    const before = machineTicks();
    const t0 = process.hrtime.bigint();
    pty.write('\r');
    await done;
    const rate = file.bytes / MIB / (Number(process.hrtime.bigint() - t0) / 1e9);
    const after = machineTicks();
    if (cpu && before && after && after.all > before.all) {
      // Ticks summed over all CPUs: the machine's busy share, and its busy CPU time per MiB of output.
      const busy = after.busy - before.busy;
      cpu.push({ busyShare: busy / (after.all - before.all), msPerMiB: (busy * 1000) / TICKS / (file.bytes / MIB) });
    }
    return rate;
  };
  for (let r = 0; r < runs; r++) {
    const session = await variant.start(program);
    try {
      await session.pty.waitForText('BENCH-READY', { timeoutMs: 20_000 });
      cold.push(await timed(session.pty, `${END_MARKER}FIRST`));
      warm.push(await timed(session.pty, `${END_MARKER}SECOND`, warmCpu));
    } finally {
      await session.stop();
    }
  }
  return {
    mibPerSecond: median(warm),
    coldMibPerSecond: median(cold),
    runs: warm.length,
    mib: file.bytes / MIB,
    cpuMsPerMiB: warmCpu.length ? median(warmCpu.map((c) => c.msPerMiB)) : undefined,
    busyShare: warmCpu.length ? median(warmCpu.map((c) => c.busyShare)) : undefined,
  };
}

/**
 * Throughput of every variant, `runs` times, the variants taking turns (a, b, c, a, ...), so a machine that
 * gets slower or faster during the run affects them alike. Each run's figures go to `results[v.id].rates`
 * (running session) and `.coldRates` (first flood); a failure to `.error`, and that variant stops.
 * `session(v, r)` may wrap a variant (to read something before its session stops).
 */
export async function throughputInTurns(variants, results, file, { runs, log, section, session = (v) => v }) {
  for (let i = 0; i < runs; i++) {
    for (const v of variants) {
      const r = results[v.id];
      if (r.error !== undefined) continue;
      try {
        const one = await measureThroughput(session(v, r), file, { runs: 1 });
        r.rates.push(one.mibPerSecond);
        r.coldRates.push(one.coldMibPerSecond);
        if (one.cpuMsPerMiB !== undefined) (r.cpu ??= []).push({ msPerMiB: one.cpuMsPerMiB, busyShare: one.busyShare });
        log(
          `${section}: ${v.label}: cat of ${Number.isInteger(one.mib) ? one.mib : one.mib.toFixed(1)} MiB, run ${i + 1}/${runs}: ${one.mibPerSecond.toFixed(1)} MiB/s running, ${one.coldMibPerSecond.toFixed(1)} MiB/s first`,
        );
      } catch (e) {
        r.error = e instanceof Error ? e.message : String(e);
        log(`${section}: ${v.label}: failed: ${r.error}`);
      }
    }
  }
}
