// Issue 39: what idle sessions cost. Several `jackin run -- bash` sessions, attached (each host on a PTY of
// the bench) and left alone, against a bare `node` and a tmux server holding as many bash sessions with
// as many attached clients, all in the same run: wake-ups per second (context switches of every thread,
// /proc/<pid>/task/*/status), CPU, and memory (/proc/<pid>/smaps_rollup: RSS, PSS, anonymous). Then where
// the capsule's memory above a bare node goes (bench/lib/idle-probe.mjs).
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { capsulePids, cpuOf } from '../lib/processes.mjs';
import { spawnOnPty } from '../lib/pty-process.mjs';
import { fmt } from '../lib/stats.mjs';
import { jackin, REPO_ROOT } from '../lib/variants.mjs';

export const id = 'idle';
export const title = 'Idle: wake-ups and memory of idle attached sessions, against a bare node and tmux';

const PROMPT = 'idle$ ';
const SHELL = ['env', `PS1=${PROMPT}`, 'bash', '--norc', '--noprofile'];

function wakeups(pid) {
  let total = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const status = readFileSync(`/proc/${pid}/task/${tid}/status`, 'latin1');
      for (const m of status.matchAll(/^(?:non)?voluntary_ctxt_switches:\s+(\d+)$/gm)) total += Number(m[1]);
    } catch {
      // the thread ended
    }
  }
  return total;
}

function memory(pid) {
  const rollup = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
  const mib = (field) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(rollup)?.[1] ?? NaN) / 1024;
  return { rss: mib('Rss'), pss: mib('Pss'), anon: mib('Anonymous') };
}

/** A tmux server with `n` bash sessions, each with a client attached on a PTY of its own. */
async function tmuxSessions(n) {
  const dir = mkdtempSync(join(tmpdir(), 'jackin-bench-idle-tmux-'));
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/root', LANG: 'C.UTF-8', TERM: 'xterm-256color', TMUX_TMPDIR: dir };
  const socket = `idle-${process.pid}`;
  const command = SHELL.map((a) => (a.includes(' ') || a.includes('$') ? `'${a}'` : a)).join(' ');
  const clients = [];
  for (let i = 0; i < n; i++) {
    const first = i === 0 ? ['-f', '/dev/null', 'start-server', ';', 'set-option', '-g', 'status', 'off', ';'] : [];
    const p = spawnOnPty('tmux', ['-L', socket, ...first, 'new-session', command], { env });
    await p.waitForText(PROMPT);
    clients.push(p);
  }
  const server = Number(execFileSync('tmux', ['-L', socket, 'display-message', '-p', '#{pid}'], { env, encoding: 'utf8' }).trim());
  return {
    server,
    clients,
    stop() {
      try {
        execFileSync('tmux', ['-L', socket, 'kill-server'], { env, stdio: 'ignore' });
      } catch {
        // already gone
      }
      for (const c of clients) c.kill();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A bare node doing nothing (reading a pipe that never delivers), with `flags`. */
function bareNode(flags) {
  const child = spawn(process.execPath, [...flags, '-e', 'process.stdin.resume()'], { stdio: ['pipe', 'ignore', 'ignore'] });
  return { pid: child.pid, stop: () => child.kill('SIGKILL') };
}

export async function run({ quick, log }) {
  const { CAPSULE_NODE_FLAGS } = await import('../../dist/host/instances/container-run-argv.js');
  const n = quick ? 2 : 4;
  // Long enough for start-up work to end (V8 collects a few times in the seconds after a start: a session
  // watched 5 s after its start woke 2 to 4 times a second, one watched 15 s after, 0.1).
  const settleMs = quick ? 2_000 : 20_000;
  const windowMs = quick ? 5_000 : 30_000;
  const stops = [];
  const rows = [];
  try {
    log(`idle: starting ${n} jackin sessions, a tmux server with ${n} sessions, bare nodes`);
    const sessions = [];
    for (let i = 0; i < n; i++) {
      const s = await jackin.start(SHELL);
      stops.push(() => s.stop());
      await s.pty.waitForText(PROMPT);
      sessions.push(s);
    }
    const tmux = await tmuxSessions(n);
    stops.push(() => tmux.stop());
    const bare = bareNode([]);
    const bareFlags = bareNode(CAPSULE_NODE_FLAGS);
    stops.push(bare.stop, bareFlags.stop);
    const watched = [
      ...sessions.map((s, i) => ({ what: 'capsule', i, pid: capsulePids(s.home)[0] })),
      ...sessions.map((s, i) => ({ what: 'attached host (jackin)', i, pid: s.pty.pid })),
      { what: 'bare node', i: 0, pid: bare.pid },
      { what: `bare node ${CAPSULE_NODE_FLAGS.join(' ')}`, i: 0, pid: bareFlags.pid },
      { what: `tmux server (${n} sessions)`, i: 0, pid: tmux.server },
      ...tmux.clients.map((c, i) => ({ what: 'tmux client (attached)', i, pid: c.pid })),
    ];
    await sleep(settleMs);
    const before = watched.map((w) => ({ wake: wakeups(w.pid), cpu: cpuOf(w.pid) }));
    log(`idle: watching for ${windowMs / 1000} s`);
    await sleep(windowMs);
    watched.forEach((w, k) => {
      rows.push({
        ...w,
        wakeupsPerS: (wakeups(w.pid) - before[k].wake) / (windowMs / 1000),
        cpuPct: ((cpuOf(w.pid) - before[k].cpu) / (windowMs / 1000)) * 100,
        ...memory(w.pid),
      });
    });
  } finally {
    for (const stop of stops.reverse()) await stop();
  }
  const probe = JSON.parse(
    execFileSync(process.execPath, ['--expose-gc', ...CAPSULE_NODE_FLAGS, join(REPO_ROOT, 'bench', 'lib', 'idle-probe.mjs'), REPO_ROOT], { encoding: 'utf8' }),
  );
  return { data: { sessions: n, windowMs, rows, probe }, markdown: render(rows, probe, n, windowMs) };
}

function render(rows, probe, n, windowMs) {
  const groups = new Map();
  for (const r of rows) groups.set(r.what, [...(groups.get(r.what) ?? []), r]);
  const bare = rows.find((r) => r.what === 'bare node');
  const range = (xs, digits = 1) => {
    const lo = Math.min(...xs);
    const hi = Math.max(...xs);
    return lo === hi ? fmt(lo, digits) : `${fmt(lo, digits)}–${fmt(hi, digits)}`;
  };
  const out = [
    `${n} idle \`jackin run -- bash\` sessions, each attached on a PTY of the bench, and a tmux server with ${n} bash sessions and ${n} attached clients, watched for ${windowMs / 1000} s after settling, same run. Wake-ups: context switches of every thread. Memory from /proc/<pid>/smaps_rollup (MiB; a range over the ${n} processes).`,
    '',
    '| process | wake-ups/s | CPU % | RSS | PSS | anonymous | anonymous above bare node |',
    '|---|---|---|---|---|---|---|',
  ];
  for (const [what, rs] of groups) {
    out.push(
      `| ${what} | ${range(
        rs.map((r) => r.wakeupsPerS),
        2,
      )} | ${range(
        rs.map((r) => r.cpuPct),
        2,
      )} | ${range(rs.map((r) => r.rss))} | ${range(rs.map((r) => r.pss))} | ${range(rs.map((r) => r.anon))} | ${range(rs.map((r) => r.anon - bare.anon))} |`,
    );
  }
  out.push(
    '',
    "Where the capsule's memory goes (bench/lib/idle-probe.mjs: one process with the capsule's flags, after full collections, each step added to the previous):",
    '',
  );
  out.push('| step | anonymous | + anonymous | V8 heap used | V8 heap total | V8 code space | external |', '|---|---|---|---|---|---|---|');
  let prev = null;
  for (const p of probe) {
    const mib = (b) => fmt(b / 1048576, 1);
    out.push(
      `| ${p.step} | ${fmt(p.anonKiB / 1024, 1)} | ${prev === null ? '' : `+${fmt((p.anonKiB - prev.anonKiB) / 1024, 1)}`} | ${mib(p.heapUsed)} | ${mib(p.heapTotal)} | ${fmt(p.codeSpace / 1048576, 2)} | ${mib(p.external)} |`,
    );
    prev = p;
  }
  return out.join('\n');
}
