/**
 * Local instances: one directory per instance under $JACKIN_HOME/sockets/, holding `capsule.json` and
 * `jackin.sock`. An instance is live when its socket answers; its `status` reply says whether a client is
 * attached. A directory whose socket does not answer is stale (the capsule died without cleaning up).
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { controlRequest } from '../transport/control-request.ts';
import { connectSocket } from '../transport/socket.ts';

export type InstanceState = 'live' | 'stale';

export interface InstanceInfo {
  name: string;
  state: InstanceState;
  socket: string;
  runDir: string;
  /** The program's argv, from the status reply or capsule.json. */
  program: string[] | null;
  pid: number | null;
  workspace: string | null;
  startedAt: string | null;
  /** From the status reply; null when the capsule did not answer the control request. */
  attached: boolean | null;
}

/** $JACKIN_HOME, default ~/.jackin. */
export function jackinHome(env: NodeJS.ProcessEnv = process.env): string {
  const h = env['JACKIN_HOME'];
  return h !== undefined && h.length > 0 ? h : join(homedir(), '.jackin');
}

/** How long `ls` waits on one instance; a live capsule answers at once. */
export const PROBE_TIMEOUT_MS = 1_000;

function asRecord(v: unknown): Record<string, unknown> | null {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
}
function str(v: unknown): string | null {
  return typeof v === 'string' ? v : null;
}
function argv(v: unknown): string[] | null {
  return Array.isArray(v) && v.every((x) => typeof x === 'string') ? (v as string[]) : null;
}

async function readCapsuleJson(runDir: string): Promise<Record<string, unknown> | null> {
  try {
    return asRecord(JSON.parse(await readFile(join(runDir, 'capsule.json'), 'utf8')));
  } catch {
    return null;
  }
}

/** True when something accepts connections on `socket`. */
export async function socketAnswers(socket: string, timeoutMs = PROBE_TIMEOUT_MS): Promise<boolean> {
  try {
    (await connectSocket(socket, { timeoutMs })).destroy();
    return true;
  } catch {
    return false;
  }
}

/** Describes one instance directory. */
export async function probeInstance(home: string, name: string): Promise<InstanceInfo> {
  const runDir = join(home, 'sockets', name);
  const socket = join(runDir, 'jackin.sock');
  const meta = await readCapsuleJson(runDir);
  const info: InstanceInfo = {
    name,
    state: 'stale',
    socket,
    runDir,
    program: argv(meta?.['program']),
    pid: typeof meta?.['pid'] === 'number' ? meta['pid'] : null,
    workspace: str(meta?.['workspace']),
    startedAt: str(meta?.['startedAt']),
    attached: null,
  };
  let status: Record<string, unknown> | null = null;
  try {
    status = asRecord(await controlRequest(socket, { method: 'status' }, { timeoutMs: PROBE_TIMEOUT_MS }));
  } catch {
    // A capsule without the control channel still counts as live if it accepts connections.
    if (await socketAnswers(socket)) info.state = 'live';
    return info;
  }
  info.state = 'live';
  if (status?.['ok'] === true) {
    if (typeof status['attached'] === 'boolean') info.attached = status['attached'];
    info.program = argv(status['program']) ?? info.program;
    if (typeof status['pid'] === 'number') info.pid = status['pid'];
    info.workspace = str(status['workspace']) ?? info.workspace;
  }
  return info;
}

/** Every instance directory under $JACKIN_HOME/sockets, sorted by name. */
export async function listInstances(home: string): Promise<InstanceInfo[]> {
  let names: string[];
  try {
    const entries = await readdir(join(home, 'sockets'), { withFileTypes: true });
    names = entries.filter((e) => e.isDirectory()).map((e) => e.name).sort();
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw e;
  }
  // A capsule that ended cleanly removed its socket and capsule.json (its log stays for diagnosis): that
  // is a finished instance, not a stale one. A crashed capsule leaves them behind and is listed as stale.
  const present = (dir: string, file: string) => stat(join(home, 'sockets', dir, file)).then(() => true, () => false);
  const kept = await Promise.all(names.map(async (n) => (await present(n, 'jackin.sock')) || (await present(n, 'capsule.json'))));
  return Promise.all(names.filter((_, i) => kept[i]).map((n) => probeInstance(home, n)));
}
