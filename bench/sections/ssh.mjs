// Issue 47: keystroke round trip and output throughput of `jackin run --ssh HOST -- PROGRAM` against the same
// program under plain `ssh -tt HOST PROGRAM`, both over a real OpenSSH server on loopback (the tests' sshd,
// test/helpers/sshd.mjs: its own host key and client key, nothing of the operator's), the variants taking turns.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { SSH_TEST_HOST, startSshd } from '../../test/helpers/sshd.mjs';
import { latencyInTurns, turnOverheads } from '../lib/latency.mjs';
import { isAlive, signal } from '../lib/processes.mjs';
import { spawnOnPty } from '../lib/pty-process.mjs';
import { makeTextFile, throughputInTurns } from '../lib/throughput.mjs';
import { fmt, median, ratio } from '../lib/stats.mjs';
import { REPO_ROOT, shq } from '../lib/variants.mjs';

export const id = 'ssh';
export const title = 'SSH: jackin run --ssh against plain ssh -tt, over OpenSSH on loopback';

const JACKIN_BIN = join(REPO_ROOT, 'bin', 'jackin.js');

function env(extra = {}) {
  return { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/root', LANG: 'C.UTF-8', TERM: 'xterm-256color', ...extra };
}

/** The pid of capsule `name` on the remote side ([] when it wrote none). */
function capsulePid(remoteJackinHome, name) {
  try {
    const { pid } = JSON.parse(readFileSync(join(remoteJackinHome, 'sockets', name, 'capsule.json'), 'utf8'));
    return Number.isInteger(pid) && pid > 0 ? [pid] : [];
  } catch {
    return [];
  }
}

/** The baseline: `ssh -tt -F CFG testhost 'PROGRAM'`, a new connection per session (what an operator types). */
function plainSsh(clientConfig) {
  return {
    id: 'ssh',
    label: 'ssh -tt',
    async start(argv) {
      const p = spawnOnPty('ssh', ['-tt', '-F', clientConfig, SSH_TEST_HOST, argv.map(shq).join(' ')], { env: env() });
      return {
        pty: p,
        async stop() {
          p.kill();
        },
      };
    },
  };
}

/**
 * The subject: `jackin run --ssh testhost --name N -- PROGRAM`, one JACKIN_HOME for every session (so each
 * reuses the runtime's manifest and, within 10 s, the shared connection, as an operator's commands do). The
 * capsule runs detached on the remote side: stop() ends it by its pid there, then the session.
 */
function jackinSsh(clientConfig, home, remoteJackinHome) {
  let n = 0;
  return {
    id: 'jackin',
    label: 'jackin run --ssh',
    async start(argv) {
      const name = `bench-ssh-${process.pid}-${++n}`;
      const p = spawnOnPty(process.execPath, [JACKIN_BIN, 'run', '--ssh', SSH_TEST_HOST, '--name', name, '--', ...argv], {
        env: env({ JACKIN_HOME: home, JACKIN_SSH_COMMAND: `ssh -F ${shq(clientConfig)}`, JACKIN_PASTE_KEY: 'none', JACKIN_HINT: 'off' }),
      });
      return {
        pty: p,
        async stop() {
          const pids = capsulePid(remoteJackinHome, name);
          for (const pid of pids) signal(pid, 'SIGTERM');
          for (let i = 0; i < 100 && pids.some(isAlive); i++) await sleep(20);
          for (const pid of pids) signal(pid, 'SIGKILL');
          p.kill();
        },
      };
    },
  };
}

export async function run({ quick, log }) {
  const latencySamples = quick ? 200 : 2000;
  const latencyTurns = quick ? 2 : 5;
  const mib = quick ? 16 : 64;
  const runs = quick ? 1 : 5;
  // The sshd and its directory are stopped and removed by these hooks, in order, at the end.
  const hooks = [];
  const home = mkdtempSync(join(tmpdir(), 'jackin-bench-ssh-'));
  const results = {};
  let file;
  try {
    const sshd = await startSshd({ after: (fn) => hooks.push(fn) });
    const variants = [plainSsh(sshd.clientConfig), jackinSsh(sshd.clientConfig, home, sshd.remoteJackinHome)];
    for (const v of variants) results[v.id] = { label: v.label, rates: [], coldRates: [] };
    // The first --ssh command copies the runtime (about 110 MB) to the remote's cache: done before any timing.
    log('ssh: copying the runtime to the test sshd once (jackin run --ssh -d)');
    const warm = await promisify(execFile)(process.execPath, [JACKIN_BIN, 'run', '--ssh', SSH_TEST_HOST, '-d', '--name', 'bench-ssh-warm', '--', 'true'], {
      env: env({ JACKIN_HOME: home, JACKIN_SSH_COMMAND: `ssh -F ${shq(sshd.clientConfig)}` }),
      timeout: 120_000,
    });
    log(`ssh: ${warm.stderr.trim().split('\n').at(-1) ?? ''}`);
    file = await makeTextFile(mib);
    log(`ssh: ${latencySamples} keystrokes per variant, in ${latencyTurns} turns`);
    await latencyInTurns(variants, results, { samples: latencySamples, turns: latencyTurns, log, section: 'ssh' });
    await throughputInTurns(variants, results, file, { runs, log, section: 'ssh' });
    for (const v of variants) {
      const r = results[v.id];
      if (r.rates.length > 0) r.throughput = { mibPerSecond: median(r.rates), coldMibPerSecond: median(r.coldRates), runs: r.rates.length, mib };
    }
  } finally {
    file?.cleanup();
    for (const fn of hooks) await fn();
    rmSync(home, { recursive: true, force: true });
  }
  return { data: results, markdown: render(results, { latencySamples, latencyTurns, mib, runs }) };
}

function render(res, { latencySamples, latencyTurns, mib, runs }) {
  const s = res.ssh ?? {};
  const j = res.jackin ?? {};
  const row = (name, get, digits) => `| ${name} | ${fmt(get(s), digits)} | ${fmt(get(j), digits)} | ${ratio(get(j), get(s))} |`;
  const each = (rates) => (rates ?? []).map((x) => fmt(x, 1)).join(', ');
  const errors = [s, j].filter((r) => r.error).map((r) => `- ${r.label} failed: ${r.error}`);
  return [
    '| measure | ssh -tt | jackin run --ssh | jackin / ssh |',
    '|---|---:|---:|---:|',
    row('keystroke round trip p50 (ms)', (r) => r.latency?.p50, 3),
    row('keystroke round trip p99 (ms)', (r) => r.latency?.p99, 3),
    row(`output throughput, cat of ${mib} MiB in a running session (MiB/s)`, (r) => r.throughput?.mibPerSecond, 1),
    row(`output throughput, the first cat of ${mib} MiB of a new session (MiB/s)`, (r) => r.throughput?.coldMibPerSecond, 1),
    '',
    `Throughput of each run in a running session (MiB/s): ssh ${each(s.rates)}; jackin ${each(j.rates)}. First cat of each new session: ssh ${each(s.coldRates)}; jackin ${each(j.coldRates)}.`,
    '',
    `p50 round-trip overhead over ssh -tt within each turn: ${turnOverheads(j, s)}.`,
    ...(errors.length ? ['', 'Failures:', '', ...errors] : []),
    '',
    "Method: the tests' OpenSSH server (test/helpers/sshd.mjs) on a loopback port, its own host and client keys; " +
      "the bench process owns a PTY (120×30) and plays the operator's terminal. " +
      "`ssh -tt -F CFG testhost 'PROGRAM'` opens a connection per session and runs the program on sshd's PTY; " +
      '`jackin run --ssh testhost -- PROGRAM` starts a capsule detached on the remote side (the runtime copied there once, before any timing) ' +
      "and attaches through `jackin-capsule attach-proxy` over ssh: the program's PTY is the capsule's, and its bytes cross the capsule, the relay, ssh, sshd and the host. " +
      `Round trip: \`sh -c 'stty raw -echo; exec cat'\`; ${latencySamples} keys per variant, 5 ms apart, in ${latencyTurns} turns (each session started first and kept up, 20 warm-up keys); ` +
      `throughput: \`cat\` of ${mib} MiB of base64 text lines, ${runs} run(s) per variant taking turns, each a new session printing the file twice (first flood, then running session), as in the attach section.`,
  ].join('\n');
}
