/**
 * The run directory and its socket (design.md section 5): directory 0700, socket 0600 from the moment it
 * exists, and a leftover socket file replaced only when nothing answers on it.
 */
import { chmod, lstat, mkdir, unlink } from 'node:fs/promises';
import { connect, type Server } from 'node:net';
import { JackinError } from '../errors.ts';

export const SOCKET_NAME = 'jackin.sock';
export const CAPSULE_INFO_NAME = 'capsule.json';
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
  const outcome = await new Promise<'refused' | 'live' | 'gone'>((resolve) => {
    const s = connect(path);
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
      resolve(e.code === 'ECONNREFUSED' ? 'refused' : e.code === 'ENOENT' ? 'gone' : 'live');
    });
  });
  if (outcome === 'live') {
    throw new JackinError('E_CAPSULE_RUNNING', `another capsule is already listening on ${path}; stop it or pass another --run-dir`);
  }
  if (outcome === 'refused') await unlink(path).catch(() => undefined);
}

/** Listens on a Unix socket that is 0600 from creation: the umask covers the bind, chmod makes sure. */
export async function listenPrivate(server: Server, path: string): Promise<void> {
  const previous = process.umask(0o177);
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(path, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } finally {
    process.umask(previous);
  }
  await chmod(path, 0o600);
}
