// Issue 3: keystroke round trip and output throughput of `jackin run`, against the same program on a
// direct PTY, under `script` (the two PTYs of any relay, nothing else) and inside tmux, all measured in this run.
import { ALL_VARIANTS, jackinOn } from '../lib/variants.mjs';
import { latencyInTurns, turnOverheads } from '../lib/latency.mjs';
import { makeTextFile, throughputInTurns } from '../lib/throughput.mjs';
import { fmt, median, ratio } from '../lib/stats.mjs';

export const id = 'attach';
export const title = 'Attach: keystroke round trip and output throughput';

/**
 * `nodes`: the Nodes to run jackin under, `[{ version, path }]`, the bench's own first (the `jackin run`
 * column); each other one (`--node VERSION`) is one more jackin variant taking its turn with the others.
 */
export async function run({ quick, log, nodes = [{ version: process.versions.node, path: process.execPath }] }) {
  const others = nodes
    .slice(1)
    .map((n) => ({ version: n.version, variant: jackinOn({ id: `jackin@${n.version}`, label: `jackin run (Node ${n.version})`, nodePath: n.path }) }));
  const variants = [...ALL_VARIANTS, ...others.map((o) => o.variant)];
  const latencySamples = quick ? 200 : 2000;
  const latencyTurns = quick ? 2 : 5;
  const mib = quick ? 16 : 64;
  // Nine turns: on two CPUs one turn's jackin / direct ratio ranged from 0.49 to 0.86 (15 turns measured).
  const runs = quick ? 1 : 9;
  // Coloured output, reported beside the targets: fewer turns (tmux parses it slowly).
  const colouredRuns = quick ? 1 : 5;
  const results = {};
  const coloured = {};
  const file = await makeTextFile(mib);
  const colouredFile = await makeTextFile(mib, { coloured: true });
  try {
    for (const v of variants) results[v.id] = { label: v.label, rates: [], coldRates: [] };
    log(`attach: ${latencySamples} keystrokes per variant, in ${latencyTurns} turns`);
    await latencyInTurns(variants, results, { samples: latencySamples, turns: latencyTurns, log, section: 'attach' });
    await throughputInTurns(variants, results, file, { runs, log, section: 'attach' });
    for (const v of ALL_VARIANTS) coloured[v.id] = { label: v.label, rates: [], coldRates: [] };
    await throughputInTurns(ALL_VARIANTS, coloured, colouredFile, { runs: colouredRuns, log, section: 'attach (coloured)' });
    for (const set of [results, coloured]) {
      for (const v of variants) {
        const r = set[v.id];
        if (r === undefined) continue;
        if (r.rates.length > 0) r.throughput = { mibPerSecond: median(r.rates), coldMibPerSecond: median(r.coldRates), runs: r.rates.length, mib };
        if (r.cpu?.length) r.machineCpu = { msPerMiB: median(r.cpu.map((c) => c.msPerMiB)), busyShare: median(r.cpu.map((c) => c.busyShare)) };
      }
    }
  } finally {
    file.cleanup();
    colouredFile.cleanup();
  }
  const markdown = render(results, coloured, { latencySamples, latencyTurns, mib, runs, colouredRuns });
  return { data: { ...results, coloured }, markdown: others.length === 0 ? markdown : `${markdown}\n\n${renderNodes(results, others, mib)}` };
}

/** The same measures of jackin under each other Node, against the bench's own, from the same turns. */
function renderNodes(res, others, mib) {
  const own = res.jackin ?? {};
  const d = res.direct ?? {};
  const measures = [
    ['keystroke round trip p50 (ms)', (r) => r.latency?.p50, 3],
    ['p50 round-trip overhead over the direct PTY (ms)', (r) => (r.latency?.p50 ?? NaN) - (d.latency?.p50 ?? NaN), 3],
    ['keystroke round trip p99 (ms)', (r) => r.latency?.p99, 3],
    [`output throughput, cat of ${mib} MiB in a running session (MiB/s)`, (r) => r.throughput?.mibPerSecond, 1],
    [`output throughput, the first cat of ${mib} MiB of a new session (MiB/s)`, (r) => r.throughput?.coldMibPerSecond, 1],
    ['machine CPU time per MiB of output, running session (ms)', (r) => r.machineCpu?.msPerMiB, 1],
  ];
  const cols = others.map((o) => res[o.variant.id] ?? {});
  const head = `| measure | jackin run (Node ${process.versions.node}, the table above) | ${others.map((o) => `Node ${o.version}`).join(' | ')} | ${others.map((o) => `Node ${o.version} / ${process.versions.node}`).join(' | ')} |`;
  const lines = [
    `Under other Nodes (\`--node\`), in the same turns as the variants above: jackin and its capsule run on that Node, which refuses the code caches this Node's build made and compiles the bundles as usual.`,
    '',
    head,
    `|---|---:|${others.map(() => '---:').join('|')}|${others.map(() => '---:').join('|')}|`,
    ...measures.map(
      ([name, get, digits]) =>
        `| ${name} | ${fmt(get(own), digits)} | ${cols.map((c) => fmt(get(c), digits)).join(' | ')} | ${cols.map((c) => ratio(get(c), get(own))).join(' | ')} |`,
    ),
    '',
    ...others.map(
      (o, i) =>
        `Node ${o.version}, throughput of each run in a running session (MiB/s): ${(cols[i].rates ?? []).map((x) => fmt(x, 1)).join(', ')}; within each turn against the direct PTY: ${turnRatios(cols[i].rates, d.rates)}.`,
    ),
  ];
  const errors = cols.filter((r) => r.error).map((r) => `- ${r.label} failed: ${r.error}`);
  return [...lines, ...(errors.length ? ['', 'Failures:', '', ...errors] : [])].join('\n');
}

function render(res, col, { latencySamples, latencyTurns, mib, runs, colouredRuns }) {
  const d = res.direct ?? {};
  const s = res.script ?? {};
  const t = res.tmux ?? {};
  const j = res.jackin ?? {};
  const row = (name, get, digits, [dr, sr, tr, jr] = [d, s, t, j]) => {
    const [dv, sv, tv, jv] = [get(dr), get(sr), get(tr), get(jr)];
    return `| ${name} | ${fmt(dv, digits)} | ${fmt(sv, digits)} | ${fmt(tv, digits)} | ${fmt(jv, digits)} | ${ratio(jv, dv)} | ${ratio(jv, sv)} | ${ratio(jv, tv)} |`;
  };
  const c = [col.direct ?? {}, col.script ?? {}, col.tmux ?? {}, col.jackin ?? {}];
  const p50 = (r) => r.latency?.p50;
  const p99 = (r) => r.latency?.p99;
  const tput = (r) => r.throughput?.mibPerSecond;
  const cold = (r) => r.throughput?.coldMibPerSecond;
  const cpuPerMiB = (r) => r.machineCpu?.msPerMiB;
  const busy = (r) => (r.machineCpu ? 100 * r.machineCpu.busyShare : undefined);
  const each = (rates) => (rates ?? []).map((x) => fmt(x, 1)).join(', ');
  const lines = [
    '| measure | direct PTY | script (two PTYs) | tmux | jackin run | jackin / direct | jackin / script | jackin / tmux |',
    '|---|---:|---:|---:|---:|---:|---:|---:|',
    row('keystroke round trip p50 (ms)', p50, 3),
    row('keystroke round trip p99 (ms)', p99, 3),
    row(`output throughput, cat of ${mib} MiB in a running session (MiB/s)`, tput, 1),
    row(`output throughput, the first cat of ${mib} MiB of a new session (MiB/s)`, cold, 1),
    row('machine CPU time per MiB of output, running session (ms, all processes and the kernel)', cpuPerMiB, 1),
    row('machine busy during that cat (% of all CPUs)', busy, 0),
    row(`output throughput, coloured cat of ${mib} MiB (SGR on every line) in a running session (MiB/s)`, tput, 1, c),
    row('machine CPU time per MiB of that coloured output (ms)', cpuPerMiB, 1, c),
    '',
    `Throughput of each run in a running session (MiB/s): direct ${each(d.rates)}; script ${each(s.rates)}; tmux ${each(t.rates)}; jackin ${each(j.rates)}. ` +
      `First cat of each new session: direct ${each(d.coldRates)}; script ${each(s.coldRates)}; tmux ${each(t.coldRates)}; jackin ${each(j.coldRates)}.`,
    '',
    `jackin / direct within each turn (running session): ${turnRatios(j.rates, d.rates)}.`,
    '',
    `script / direct within each turn (running session): ${turnRatios(s.rates, d.rates)}.`,
    '',
    `p50 round-trip overhead over the direct PTY within each turn: jackin ${turnOverheads(j, d)}; script ${turnOverheads(s, d)}.`,
    '',
  ];
  const overhead = p50(j) - p50(d);
  const targets = [
    `- p50 round-trip overhead over the direct PTY: ${fmt(overhead, 3)} ms (target < 1 ms): ${verdict(overhead, overhead < 1)}`,
    `- throughput against tmux: ${ratio(tput(j), tput(t))} (target ≥ 1×): ${verdict(tput(j) / tput(t), tput(j) >= tput(t))}`,
    `- throughput against the direct PTY: ${ratio(tput(j), tput(d))} (aim ≥ 0.70×): ${verdict(tput(j) / tput(d), tput(j) >= 0.7 * tput(d))}`,
    `- the first cat of a new session (reported, not a target): ${ratio(cold(j), cold(d))} of the direct PTY, ${ratio(cold(j), cold(t))} of tmux`,
    `- machine CPU per MiB (reported, not a target): jackin ${ratio(cpuPerMiB(j), cpuPerMiB(d))} of the direct PTY's. ` +
      'While a flood keeps the machine busy (the row above), throughput is about the inverse of this cost.',
    `- the two-PTY floor (reported, not a target): \`script\`, a C relay that does nothing but copy its PTY to the operator's, reaches ${ratio(tput(s), tput(d))} of the direct PTY's throughput at ${ratio(cpuPerMiB(s), cpuPerMiB(d))} its CPU per MiB, with ${fmt(p50(s) - p50(d), 3)} ms of p50 round-trip overhead; ` +
      `jackin reaches ${ratio(tput(j), tput(s))} of script's throughput at ${ratio(cpuPerMiB(j), cpuPerMiB(s))} its CPU per MiB. ` +
      'Any relay, jackin included, crosses a second PTY; script shows what that alone costs on this machine.',
    `- coloured output (reported, not a target; median of ${colouredRuns} turn(s)): jackin ${ratio(tput(c[3]), tput(c[0]))} of the direct PTY, ${ratio(tput(c[3]), tput(c[1]))} of script, ${ratio(tput(c[3]), tput(c[2]))} of tmux.`,
  ];
  const errors = [...Object.values(res), ...c].filter((r) => r.error).map((r) => `- ${r.label} failed: ${r.error}`);
  return [
    ...lines,
    'Targets (reported, not asserted):',
    '',
    ...targets,
    ...(errors.length ? ['', 'Failures:', '', ...errors] : []),
    '',
    "Method: the bench process owns a PTY (`@lydell/node-pty`, 120×30) and plays the operator's terminal. " +
      `Round trip: \`sh -c 'stty raw -echo; exec cat'\`; ${latencySamples} keys per variant, 5 ms apart, in ${latencyTurns} turns (one session of each variant, started first and kept up, 20 warm-up keys in each; in every turn each session in order gets ` +
      `${Math.ceil(latencySamples / latencyTurns)} keys; p50 and p99 over all of a variant's keys); ` +
      'time from writing one byte to the PTY until the echoed byte is read back. ' +
      `Throughput: \`cat\` of ${mib} MiB of base64 text lines in a cooked terminal, median of ${runs} run(s), the variants taking turns ` +
      '(coloured: the same lines in two colours, `ESC[32m`, `ESC[1;34m`, and `ESC[0m` at the end of each); ' +
      'time from the go key until an end marker printed after the file is read back; machine CPU: busy clock ticks of all CPUs ' +
      '(every /proc/stat state but idle, iowait and steal) over the same span, median per variant. Each run is one new session whose program ' +
      'prints the file twice, a go key before each: the first is the first flood of a new session (a new capsule still ' +
      'compiling its hot paths, a new tmux server), the second the same flood in a running session, which the targets use. ' +
      'script (util-linux) runs as `script --quiet --return --command CMD /dev/null`; ' +
      'tmux 3.3 runs with `-f /dev/null`, status line off, its client attached to the PTY; ' +
      '`jackin run` starts its capsule locally and attaches to it.',
  ].join('\n');
}

/** The ratio a / b of each turn (the variants take turns, so index i of both is the same turn), and their median. */
function turnRatios(a = [], b = []) {
  const r = a.slice(0, b.length).map((x, i) => x / b[i]);
  if (r.length === 0) return 'n/a';
  return `${r.map((x) => x.toFixed(2)).join(', ')} (median ${median(r).toFixed(2)})`;
}

function verdict(value, ok) {
  if (!Number.isFinite(value)) return 'n/a';
  return ok ? 'met' : 'not met';
}
