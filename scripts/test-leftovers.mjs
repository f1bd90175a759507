// What a test run left running, found precisely and stopped by pid or by exact name (scripts/run-tests.mjs).
// A run's processes carry its marker in their environment (JACKIN_TEST_RUN, passed on by the test helpers to
// what they start with a clean environment) or run under its temporary directory; its containers are named
// jackin-test-* (test/helpers/podman-image.mjs) and mount something from that directory. Nothing here goes by
// a broad pattern: a process or container of another run, or of the operator, matches neither.
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';

const ENGINES = ['podman', 'docker'];
const CONTAINER_PREFIX = 'jackin-test-';

/** True when `path` is `dir` or lies under it. */
const under = (path, dir) => path === dir || path.startsWith(`${dir}/`);

/**
 * The processes of the run marked `marker` whose temporary directory is `dir`, but for this process (zombies
 * excluded: they hold nothing, and their parent reaps them).
 * @returns {{ pid: number, cmdline: string, cwd: string }[]}
 */
export function runProcesses(marker, dir) {
  const found = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    const read = (f) => {
      try {
        return readFileSync(`/proc/${name}/${f}`, 'latin1');
      } catch {
        return '';
      }
    };
    const stat = read('stat');
    if (stat === '' || / Z /.test(stat.slice(stat.lastIndexOf(')')))) continue;
    const cmdline = read('cmdline')
      .split('\0')
      .filter((a) => a !== '');
    let cwd = '';
    try {
      cwd = readlinkSync(`/proc/${name}/cwd`);
    } catch {
      // Gone, or not ours to read.
    }
    const marked = read('environ').split('\0').includes(`JACKIN_TEST_RUN=${marker}`);
    const inDir = under(cwd, dir) || cmdline.some((a) => a.includes(dir));
    if (marked || inDir) found.push({ pid: Number(name), cmdline: cmdline.join(' '), cwd });
  }
  return found;
}

/**
 * The run's containers on each engine that answers: named jackin-test-*, with a mount from `dir`.
 * @returns {{ engine: string, name: string }[]}
 */
export function runContainers(dir) {
  const found = [];
  for (const engine of ENGINES) {
    const engineSays = (args) => {
      const r = spawnSync(engine, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], timeout: 30_000 });
      return r.status === 0 ? r.stdout.split('\n').filter((l) => l !== '') : [];
    };
    // No such engine, or it does not answer: it runs no container of this run.
    for (const name of engineSays(['ps', '-a', '--filter', `name=${CONTAINER_PREFIX}`, '--format', '{{.Names}}'])) {
      if (!name.startsWith(CONTAINER_PREFIX)) continue;
      const sources = engineSays(['inspect', '--type', 'container', '--format', '{{range .Mounts}}{{.Source}}{{"\\n"}}{{end}}', name]);
      if (sources.some((s) => under(s, dir))) found.push({ engine, name });
    }
  }
  return found;
}

/**
 * Removes containers by their exact names.
 * @returns each container, with whether it was removed.
 */
export function removeContainers(containers) {
  return containers.map(({ engine, name }) => {
    const r = spawnSync(engine, engine === 'podman' ? ['rm', '-f', '-t', '0', name] : ['rm', '-f', name], { stdio: 'ignore', timeout: 60_000 });
    return { engine, name, removed: r.status === 0 };
  });
}

function signal(pid, sig) {
  try {
    process.kill(pid, sig);
  } catch {
    // Exited in the meantime.
  }
}

/**
 * Stops the run's processes, each by its pid: SIGTERM, and SIGKILL for any still there after `graceMs`; again
 * while new ones appear (a test process stopped mid-way may have just started one), for up to `withinMs`.
 * @returns every process it signalled, in order.
 */
export async function stopRunProcesses(marker, dir, { graceMs = 2_000, withinMs = 15_000 } = {}) {
  const stopped = [];
  const seen = new Set();
  const deadline = Date.now() + withinMs;
  for (let procs = runProcesses(marker, dir); procs.length > 0 && Date.now() < deadline; procs = runProcesses(marker, dir)) {
    for (const p of procs) {
      if (!seen.has(p.pid)) stopped.push(p);
      seen.add(p.pid);
      signal(p.pid, 'SIGTERM');
    }
    const pids = new Set(procs.map((p) => p.pid));
    for (const until = Date.now() + graceMs; Date.now() < until; ) {
      const left = runProcesses(marker, dir).filter((p) => pids.has(p.pid));
      if (left.length === 0) break;
      await sleep(100);
    }
    for (const p of runProcesses(marker, dir)) if (pids.has(p.pid)) signal(p.pid, 'SIGKILL');
    await sleep(100);
  }
  return stopped;
}
