// Capsule processes started by a benchmark, found through their capsule.json, so every run can stop them.
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
