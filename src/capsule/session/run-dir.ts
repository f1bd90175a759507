/**
 * The run directory and its socket (design.md section 5): directory 0700, socket 0600 from the moment it
 * exists, and a leftover socket file replaced only when nothing answers on it.
 */
import { chmod, chown, lstat, mkdir, stat, unlink } from 'node:fs/promises';
import { connect, type Server } from 'node:net';
import { JackinError } from '../../errors.ts';
import { socketAddress, type SocketAddress } from '../../transport/socket-address.ts';

export const CAPSULE_INFO_NAME = 'capsule.json';
const DEFAULT_RUN_DIR = '/jackin/run';

export function defaultRunDir(env: NodeJS.ProcessEnv = process.env): string {
  const v = env['JACKIN_RUN_DIR'];
  return v !== undefined && v !== '' ? v : DEFAULT_RUN_DIR;
}
/** How long a probe of a leftover socket may take before we call it live but stuck. */
const STALE_PROBE_TIMEOUT_MS = 1000;

/** Creates the run directory (0700), or tightens an existing one; refuses a symlink or a non-directory. */
export async function prepareRunDir(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const st = await lstat(dir);
  if (!st.isDirectory()) {
    throw new JackinError('E_RUN_DIR', `run directory ${dir} is not a directory (a symlink or file is in the way); remove it or pass --run-dir`);
  }
  await chmod(dir, 0o700);
}

/** The address of the socket at `path` (socket-address.ts: a long path through its directory); E_SOCKET_PATH when none fits. */
function addressFor(path: string): SocketAddress {
  try {
    return socketAddress(path);
  } catch (e) {
    throw new JackinError('E_SOCKET_PATH', `${(e as Error).message}; pass a shorter --run-dir (or JACKIN_RUN_DIR)`, { cause: e });
  }
}

/** Removes a leftover socket at `path` if nothing listens on it; throws E_CAPSULE_RUNNING if something does. */
export async function clearStaleSocket(path: string): Promise<void> {
  let st;
  try {
    st = await lstat(path);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw e;
  }
  if (!st.isSocket()) {
    throw new JackinError('E_SOCKET_PATH', `${path} exists and is not a socket; remove it or pass another --run-dir`);
  }
  const { address, release } = addressFor(path);
  const outcome = await new Promise<'refused' | 'live' | 'gone' | 'forbidden'>((resolve) => {
    const s = connect(address);
    const timer = setTimeout(() => {
      s.destroy();
      resolve('live');
    }, STALE_PROBE_TIMEOUT_MS);
    s.once('connect', () => {
      clearTimeout(timer);
      s.destroy();
      resolve('live');
    });
    s.once('error', (e: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      resolve(e.code === 'ECONNREFUSED' ? 'refused' : e.code === 'ENOENT' ? 'gone' : e.code === 'EACCES' || e.code === 'EPERM' ? 'forbidden' : 'live');
    });
  }).finally(release);
  if (outcome === 'live') {
    throw new JackinError('E_CAPSULE_RUNNING', `another capsule is already listening on ${path}; stop it or pass another --run-dir`);
  }
  // A socket we may not connect to (left by a capsule that ran as another user, typically root before a
  // SIGKILL) cannot be told live from stale, and waiting would block this start for good: it is replaced.
  // The directory is ours (0700), so only a capsule started in the same run directory loses its socket.
  if (outcome === 'forbidden') await removeForeign(path);
  if (outcome === 'refused') await unlink(path).catch(() => undefined);
}

/** Unlinks a file another user left in the run directory; a clear error when even that is refused. */
export async function removeForeign(path: string): Promise<void> {
  try {
    await unlink(path);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return;
    throw new JackinError(
      'E_RUN_DIR',
      `cannot replace ${path} left by another user (${code}): remove it as its owner (sudo rm ${path}) or pass another --run-dir`,
      { cause: e },
    );
  }
}

/**
 * A capsule running as root (the default user of most images) hands the files the host opens (the socket,
 * capsule.json) to the owner of the run directory: the operator, whose host user could not open a root-owned
 * 0600 socket otherwise, nor replace it after a crash. No-op when not root or when the owner is root.
 */
export async function handToRunDirOwner(runDir: string, paths: readonly string[]): Promise<void> {
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) return;
  const owner = await stat(runDir);
  if (owner.uid === 0) return;
  for (const p of paths) await chown(p, owner.uid, owner.gid);
}

/** Listens on a Unix socket that is 0600 from creation: the umask covers the bind, chmod makes sure. */
export async function listenPrivate(server: Server, path: string): Promise<void> {
  const { address, release } = addressFor(path);
  const previous = process.umask(0o177);
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(address, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } finally {
    process.umask(previous);
    release();
  }
  await chmod(path, 0o600);
}
