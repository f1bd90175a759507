// Capsule processes started by a benchmark, found through their capsule.json, so every run can stop them.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

/** The pids of the capsules under `<home>/sockets/*`. */
export function capsulePids(home) {
  const dir = join(home, 'sockets');
  if (!existsSync(dir)) return [];
  const pids = [];
  for (const name of readdirSync(dir)) {
    try {
      const info = JSON.parse(readFileSync(join(dir, name, 'capsule.json'), 'utf8'));
      if (Number.isInteger(info.pid) && info.pid > 0) pids.push(info.pid);
    } catch {
      // No capsule.json (yet): nothing to stop there.
    }
  }
  return pids;
}

export function isAlive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

export function signal(pid, sig) {
  try {
    process.kill(pid, sig);
  } catch {
    // Already gone.
  }
}

export const TICKS = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;

/** Peak resident set (VmHWM) of a live process in KiB, or undefined once it is gone. */
export function vmHwmKiB(pid) {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : undefined;
  } catch {
    return undefined;
  }
}

/** CPU seconds (user + system) a live process has used, from /proc. */
export function cpuOf(pid) {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(f[11]) + Number(f[12])) / TICKS;
}

/** CPU seconds of this process's children that have been waited for (cutime + cstime). */
function childrenCpu() {
  const f = readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ');
  return (Number(f[13]) + Number(f[14])) / TICKS;
}

/** Runs argv to completion, sampling its VmHWM; its wall time, CPU time, peak and stdout. Throws on a non-zero exit. */
export async function timedChild(argv, env) {
  const c0 = childrenCpu();
  const t0 = performance.now();
  const child = spawn(argv[0], argv.slice(1), { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (b) => (out += b));
  child.stderr.on('data', (b) => (err += b));
  let peak = 0;
  const timer = setInterval(() => (peak = Math.max(peak, vmHwmKiB(child.pid) ?? 0)), 20);
  const code = await new Promise((r) => child.once('exit', (c) => r(c)));
  clearInterval(timer);
  const seconds = (performance.now() - t0) / 1000;
  if (code !== 0) throw new Error(`${argv.join(' ')} failed (${code}): ${out} ${err}`);
  return { seconds, cpu: childrenCpu() - c0, peakKiB: peak, out };
}
