import { readdirSync, readFileSync } from 'node:fs';

/**
 * Times a process was woken up so far: the voluntary and involuntary context switches of all its threads
 * (`/proc/<pid>/task/<tid>/status`). The main thread alone would miss a timer or signal handled on another
 * thread (libuv's pool, V8's workers, node-pty's exit watcher). Linux only, like the rest of the e2e suite.
 */
export function wakeups(pid: number): number {
  let total = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    let status: string;
    try {
      status = readFileSync(`/proc/${pid}/task/${tid}/status`, 'latin1');
    } catch {
      continue; // the thread ended meanwhile
    }
    for (const m of status.matchAll(/^(?:non)?voluntary_ctxt_switches:\s+(\d+)$/gm)) total += Number(m[1]);
  }
  return total;
}

/** The pids whose parent is `ppid` (from /proc/<pid>/stat). */
export function childPids(ppid: number): number[] {
  const out: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${name}/stat`, 'latin1');
    } catch {
      continue;
    }
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(fields[1]) === ppid) out.push(Number(name));
  }
  return out;
}
