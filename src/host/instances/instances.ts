/**
 * Local instances: one directory per instance under $JACKIN_HOME/sockets/, holding `capsule.json` and
 * `jackin.sock`. An instance is live when its socket answers; its `status` reply says whether a client is
 * attached. A directory whose socket does not answer is stale (the capsule died without cleaning up); one
 * whose socket refuses us (another user's, typically a capsule running as root in a container) is
 * inaccessible: it may well be live, and must never be called stale or removed.
 */
import { constants, readlinkSync } from 'node:fs';
import { open, readdir, stat, type FileHandle } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { readControlReply, STATUS_METHOD, type StatusRead } from '../../protocol/index.ts';
import { controlRequest } from '../../transport/control-request.ts';
import { connectSocket, isPermissionDenied, socketOwner } from '../../transport/socket.ts';
import { runDirSocketPath, SOCKET_NAME } from '../../transport/instance-paths.ts';

export type InstanceState = 'live' | 'stale' | 'inaccessible';

export interface InstanceInfo {
  name: string;
  state: InstanceState;
  socket: string;
  runDir: string;
  /** The program's argv, from the status reply or capsule.json. */
  program: string[] | null;
  /** The capsule's pid on this host; null when unknown or when it runs in another PID namespace (a container). */
  pid: number | null;
  /** The capsule's pid inside its container, when it runs in another PID namespace; else null. */
  containerPid: number | null;
  workspace: string | null;
  startedAt: string | null;
  /** From the status reply; null when the capsule did not answer the control request. */
  attached: boolean | null;
  /** The socket's owner uid when the state is inaccessible, else null. */
  owner: number | null;
}

/** The STATE column of `jackin ls` (and doctor's wording). */
export function describeState(i: Pick<InstanceInfo, 'state' | 'owner'>): string {
  return i.state === 'inaccessible' ? `not accessible (owned by uid ${i.owner ?? '?'})` : i.state;
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

/** Largest capsule.json read; the capsule writes a few hundred bytes. */
export const MAX_CAPSULE_JSON_BYTES = 64 * 1024;

/**
 * capsule.json, or null. A container can write anything in its run directory, so the file is opened without
 * following a symlink and without waiting (a FIFO nobody writes to), and read only when it is a regular file
 * of at most MAX_CAPSULE_JSON_BYTES: a symlink to /dev/zero or a huge file would otherwise be read whole.
 */
async function readCapsuleJson(runDir: string): Promise<Record<string, unknown> | null> {
  let handle: FileHandle | undefined;
  try {
    handle = await open(join(runDir, 'capsule.json'), constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
    const st = await handle.stat();
    if (!st.isFile() || st.size > MAX_CAPSULE_JSON_BYTES) return null;
    const buf = Buffer.alloc(MAX_CAPSULE_JSON_BYTES + 1);
    const { bytesRead } = await handle.read(buf, 0, buf.length, 0);
    if (bytesRead > MAX_CAPSULE_JSON_BYTES) return null;
    return asRecord(JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(buf.subarray(0, bytesRead))));
  } catch {
    return null;
  } finally {
    await handle?.close().catch(() => undefined);
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
  const socket = runDirSocketPath(runDir);
  const meta = await readCapsuleJson(runDir);
  const info: InstanceInfo = {
    name,
    state: 'stale',
    socket,
    runDir,
    program: argv(meta?.['program']),
    pid: typeof meta?.['pid'] === 'number' ? meta['pid'] : null,
    containerPid: null,
    workspace: str(meta?.['workspace']),
    startedAt: str(meta?.['startedAt']),
    attached: null,
    owner: null,
  };
  // capsule.json says which PID namespace the capsule is in; only a pid of ours is reported as `pid`.
  const ns = str(meta?.['pidNamespace']);
  const foreignPid = ns !== null && ns !== ownPidNamespace();
  const place = (): InstanceInfo => {
    if (foreignPid) {
      info.containerPid = info.pid;
      info.pid = null;
    }
    return info;
  };
  let reply: unknown;
  try {
    reply = await controlRequest(socket, STATUS_METHOD, {}, { timeoutMs: PROBE_TIMEOUT_MS });
  } catch (e) {
    if (isPermissionDenied(e)) {
      info.state = 'inaccessible';
      info.owner = socketOwner(socket);
      return place();
    }
    // A capsule without the control channel still counts as live if it accepts connections.
    if (await socketAnswers(socket)) info.state = 'live';
    return place();
  }
  info.state = 'live';
  // A capsule that answers but refuses, or answers wrong, is live; its status adds nothing then.
  let status: StatusRead | null = null;
  try {
    status = readControlReply(STATUS_METHOD, reply);
  } catch {
    status = null;
  }
  if (status !== null) {
    if (status.attached !== null) info.attached = status.attached;
    info.program = status.program ?? info.program;
    if (status.pid !== null) info.pid = status.pid;
    info.workspace = status.workspace ?? info.workspace;
  }
  return place();
}

/**
 * True when the capsule of `runDir` runs in this host's network namespace, so its loopback is the host's (a
 * capsule `jackin run` started here): a port "of the container's loopback" is then a port of the host's,
 * and forwarding it would connect the forward to itself. capsule.json names the capsule's pid and PID
 * namespace (the capsule's word); the network namespace is read by the host itself, from /proc. A capsule
 * that names a pid not its own can only turn the login forward off for itself. Off Linux (no /proc), a
 * capsule with no PID namespace (so not one of a Linux container or VM) whose pid is alive counts.
 */
export async function capsuleSharesHostNetwork(runDir: string): Promise<boolean> {
  const meta = await readCapsuleJson(runDir);
  const pid = meta?.['pid'];
  if (typeof pid !== 'number' || !Number.isSafeInteger(pid) || pid <= 0) return false;
  const ns = str(meta?.['pidNamespace']);
  if (ns !== ownPidNamespace()) return false;
  let own: string;
  try {
    own = readlinkSync('/proc/self/ns/net');
  } catch {
    return ns === null && processAlive(pid);
  }
  try {
    return readlinkSync(`/proc/${pid}/ns/net`) === own;
  } catch {
    return false;
  }
}

/**
 * True when capsule.json names a pid of this host's PID namespace: the capsule ran here, not in a container
 * (whose capsule may still be starting when its socket does not answer yet).
 */
export async function capsuleInHostPidNamespace(runDir: string): Promise<boolean> {
  const meta = await readCapsuleJson(runDir);
  return typeof meta?.['pid'] === 'number' && str(meta['pidNamespace']) === ownPidNamespace() && ownPidNamespace() !== null;
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

let ownNs: string | null | undefined;
function ownPidNamespace(): string | null {
  if (ownNs === undefined) {
    try {
      ownNs = readlinkSync('/proc/self/ns/pid');
    } catch {
      ownNs = null;
    }
  }
  return ownNs;
}

/** Every instance directory under $JACKIN_HOME/sockets, sorted by name. */
export async function listInstances(home: string): Promise<InstanceInfo[]> {
  let names: string[];
  try {
    const entries = await readdir(join(home, 'sockets'), { withFileTypes: true });
    names = entries
      .filter((e) => e.isDirectory())
      .map((e) => e.name)
      .sort();
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw e;
  }
  // A capsule that ended cleanly removed its socket and capsule.json (its log stays for diagnosis): that
  // is a finished instance, not a stale one. A crashed capsule leaves them behind and is listed as stale.
  const present = (dir: string, file: string) =>
    stat(join(home, 'sockets', dir, file)).then(
      () => true,
      () => false,
    );
  const kept = await Promise.all(names.map(async (n) => (await present(n, SOCKET_NAME)) || (await present(n, 'capsule.json'))));
  return Promise.all(names.filter((_, i) => kept[i]).map((n) => probeInstance(home, n)));
}
