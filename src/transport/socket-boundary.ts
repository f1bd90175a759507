/**
 * A capsule socket across a VM boundary (Docker Desktop, colima, a Podman machine): the run directory is
 * shared with a Linux VM, so the capsule's files show up on the host, but a Unix socket bound in the VM is
 * only a name there: connecting to it is refused (or it is not even a socket on the host's side). Waiting
 * for it is pointless; the engine's exec relay reaches the capsule. The evidence is the run directory
 * itself: the capsule writes capsule.json only once it listens, so a capsule.json beside a socket file that
 * refuses the host means the capsule is up and out of reach. The finding is remembered per instance, for as
 * long as the same socket file is there (a new capsule binds a new one), so later commands relay at once.
 */
import { lstat, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { JackinError } from '../errors.ts';
import { checkInstanceName } from './instance-paths.ts';

/** What connect(2) says of a socket bound in another kernel: refused, or a file that is not a socket here. */
const UNREACHABLE_CODES = new Set(['ECONNREFUSED', 'ENOTSOCK', 'EOPNOTSUPP', 'ENOTSUP']);

function causeCode(e: JackinError): string | undefined {
  return (e.cause as NodeJS.ErrnoException | undefined)?.code;
}

/** The socket file's identity: a new capsule's socket is a new file. */
async function socketIdentity(path: string): Promise<string | null> {
  try {
    const st = await lstat(path);
    return st.isDirectory() ? null : `${st.dev}:${st.ino}:${st.mtimeMs}`;
  } catch {
    return null;
  }
}

/**
 * True when `refusal` (a connect to `socketPath` that failed) is a VM boundary: the socket file is there, it
 * refused in a way no listening capsule on this host would, and the capsule's capsule.json is beside it.
 * `jackin run --image` removes both before it starts a container, so the ones it sees are its capsule's.
 */
export async function acrossVmBoundary(socketPath: string, refusal: JackinError): Promise<boolean> {
  const code = causeCode(refusal);
  if (code === undefined || !UNREACHABLE_CODES.has(code)) return false;
  if ((await socketIdentity(socketPath)) === null) return false;
  try {
    return (await lstat(join(dirname(socketPath), 'capsule.json'))).isFile();
  } catch {
    return false;
  }
}

/** The reason said with --verbose (and in the relay's own failure). */
export function boundaryReason(socketPath: string): string {
  return `socket ${socketPath} is there and its capsule is up (capsule.json), but it does not connect from this host: the run directory is shared across a VM boundary (Docker Desktop, colima, a Podman machine)`;
}

function memoPath(home: string, instance: string): string {
  return join(home, 'relayed', `${checkInstanceName(instance)}.json`);
}

/** Remembers that `socketPath` of `instance` does not connect from this host. Best effort. */
export async function rememberBoundary(home: string, instance: string, socketPath: string): Promise<void> {
  const identity = await socketIdentity(socketPath);
  if (identity === null) return;
  const file = memoPath(home, instance);
  try {
    await mkdir(dirname(file), { recursive: true, mode: 0o700 });
    await writeFile(file, `${JSON.stringify({ socket: socketPath, identity })}\n`, { mode: 0o600 });
  } catch {
    // Not remembered: the next command finds the boundary again, a moment later.
  }
}

/**
 * True when `socketPath` is the very socket file found out of reach before; a memo for another file (a new
 * capsule's) is dropped.
 */
export async function rememberedBoundary(home: string, instance: string, socketPath: string): Promise<boolean> {
  const file = memoPath(home, instance);
  let memo: unknown;
  try {
    memo = JSON.parse(await readFile(file, 'utf8'));
  } catch {
    return false;
  }
  const m = memo as { socket?: unknown; identity?: unknown } | null;
  const identity = await socketIdentity(socketPath);
  if (m !== null && m.socket === socketPath && identity !== null && m.identity === identity) return true;
  await rm(file, { force: true }).catch(() => undefined);
  return false;
}

/** Forgets what was remembered of `instance` (its instance is removed). */
export async function forgetBoundary(home: string, instance: string): Promise<void> {
  await rm(memoPath(home, instance), { force: true }).catch(() => undefined);
}
