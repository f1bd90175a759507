import { existsSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';
import { unconfirmedCapsulePid } from '../../src/host/instances/capsule-process.ts';
import { pollUntil } from './poll.ts';

/** What `jackin-capsule serve` writes to `<run>/capsule.json` (backbone contract). */
interface CapsuleInfo {
  pid: number;
  name: string;
  program: string[];
  workspace: string;
  startedAt: string;
  /** The capsule's PID namespace: a capsule in a container reports a pid of that namespace. */
  pidNamespace?: string | null;
}

export function runDir(jackinHome: string, name: string): string {
  return join(jackinHome, 'sockets', name);
}

/**
 * Waits until the instance has staged exactly one pasted image (read in its run directory, which a container
 * sees bind-mounted as /jackin/run) and returns that file's container path.
 */
export async function onlyStagedImage(jackinHome: string, name: string): Promise<string> {
  const clipboardDir = join(runDir(jackinHome, name), 'clipboard');
  const [file] = await pollUntil(
    'one staged image',
    () => (existsSync(clipboardDir) && readdirSync(clipboardDir).length === 1 ? readdirSync(clipboardDir) : undefined),
    { timeoutMs: 60_000 },
  );
  return `/jackin/run/clipboard/${file!}`;
}

function readCapsuleInfo(jackinHome: string, name: string): CapsuleInfo | undefined {
  const file = join(runDir(jackinHome, name), 'capsule.json');
  if (!existsSync(file)) return undefined;
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as CapsuleInfo;
  } catch {
    // Being written right now: the caller polls again.
    return undefined;
  }
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Waits for the capsule `name` to publish its capsule.json and returns its pid. */
export async function capsulePid(jackinHome: string, name: string, timeoutMs = 10_000): Promise<number> {
  return pollUntil(
    `capsule ${name} to write ${join(runDir(jackinHome, name), 'capsule.json')}`,
    () => {
      const info = readCapsuleInfo(jackinHome, name);
      return info !== undefined && Number.isInteger(info.pid) && info.pid > 0 ? info.pid : undefined;
    },
    { timeoutMs },
  );
}

/**
 * Stops every capsule a test started under `jackinHome`. Capsules run detached from the terminal (they must
 * survive a detach), so killing tmux does not end them: without this, each test would leak a daemon.
 * SIGTERM first so a capsule removes its socket, SIGKILL if it is still there after two seconds.
 */
export async function stopCapsules(jackinHome: string): Promise<void> {
  const socketsDir = join(jackinHome, 'sockets');
  if (!existsSync(socketsDir)) return;
  const pids: number[] = [];
  for (const name of readdirSync(socketsDir)) {
    const info = readCapsuleInfo(jackinHome, name);
    // A capsule in a container reports its pid there (often 1 or 2): never signal that host pid. Containers
    // are removed by the tests that started them, by name.
    if (info?.pidNamespace != null && info.pidNamespace !== readlinkSync('/proc/self/ns/pid')) continue;
    // capsule.json is the capsule's word (a test may write a hostile one naming pid 1): signal only a process
    // that shows it serves this run directory, as `jackin stop` does.
    if (info === undefined || !Number.isInteger(info.pid) || !isAlive(info.pid)) continue;
    if ((await unconfirmedCapsulePid(info.pid, join(socketsDir, name))) === null) pids.push(info.pid);
  }
  for (const pid of pids) signal(pid, 'SIGTERM');
  try {
    await pollUntil('capsules to stop after SIGTERM', () => pids.every((p) => !isAlive(p)), { timeoutMs: 2000 });
  } catch {
    for (const pid of pids) signal(pid, 'SIGKILL');
  }
}

function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch {
    // Exited in the meantime.
  }
}
