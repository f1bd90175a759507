/**
 * A real OpenSSH server (Debian's openssh-server) on a loopback port, for the tests of `--ssh`: its own
 * host key and an authorized key made with ssh-keygen in a temporary directory, and an ssh client config
 * (`ssh -F <clientConfig> testhost`) that needs nothing of the operator's (no ~/.ssh, no agent, no known
 * hosts). The tests run as root in CI: root may log in, by key only. `SetEnv` gives the remote sessions a
 * JACKIN_HOME and XDG_CACHE_HOME in the temporary directory, so the remote side of a test never writes to
 * the real home. Stopped by pid, with the capsules left running on the remote side; the directory is
 * removed with the test.
 *
 * Plain JavaScript (with sshd.d.mts for the tests) so that bench/ (plain Node) starts the same server: it
 * imports nothing of the tests' TypeScript helpers, and has small copies of what it needs of them.
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

/** The Host alias the client config names. */
export const SSH_TEST_HOST = 'testhost';

/** A port free on the loopback now (bound and released). */
async function freePort() {
  const s = createServer();
  await new Promise((r) => s.listen({ host: '127.0.0.1', port: 0 }, () => r(undefined)));
  const { port } = s.address();
  await new Promise((r) => s.close(() => r(undefined)));
  return port;
}

/** Whether something accepts a connection on the loopback's `port` now. */
function listening(port) {
  return new Promise((resolve) => {
    const s = connect({ host: '127.0.0.1', port }, () => {
      s.destroy();
      resolve(true);
    });
    s.on('error', () => resolve(false));
  });
}

/** Polls `probe` until it is true, or throws after `timeoutMs` naming `description`. */
async function pollUntil(description, probe, { timeoutMs = 10_000 } = {}) {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${description}`);
    await sleep(20);
  }
}

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return e.code === 'EPERM';
  }
}

function signal(pid, sig) {
  try {
    process.kill(pid, sig);
  } catch {
    // Already gone.
  }
}

/**
 * Stops the capsules left running under the remote side's JACKIN_HOME: SIGTERM, then SIGKILL after 2 s.
 * Only a process whose command line names its run directory (`--run-dir DIR`) is signalled: capsule.json is
 * the capsule's word.
 */
async function stopRemoteCapsules(jackinHome) {
  const sockets = join(jackinHome, 'sockets');
  if (!existsSync(sockets)) return;
  const pids = [];
  for (const name of readdirSync(sockets)) {
    try {
      const { pid } = JSON.parse(readFileSync(join(sockets, name, 'capsule.json'), 'utf8'));
      if (!Number.isInteger(pid) || pid <= 0) continue;
      if (readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(`\0--run-dir\0${join(sockets, name)}\0`)) pids.push(pid);
    } catch {
      // No capsule.json, or its process gone.
    }
  }
  for (const pid of pids) signal(pid, 'SIGTERM');
  try {
    await pollUntil('the remote capsules to stop after SIGTERM', () => pids.every((p) => !alive(p)), { timeoutMs: 2000 });
  } catch {
    for (const pid of pids) signal(pid, 'SIGKILL');
  }
}

function sshdConfig(dir, port, remoteJackinHome, remoteCacheHome, path) {
  return [
    `Port ${port}`,
    'ListenAddress 127.0.0.1',
    `HostKey ${join(dir, 'host_key')}`,
    `PidFile ${join(dir, 'sshd.pid')}`,
    `AuthorizedKeysFile ${join(dir, 'authorized_keys')}`,
    // Keys only: no password, no PAM (the test's root has no password and needs no session modules).
    'PermitRootLogin prohibit-password',
    'PasswordAuthentication no',
    'KbdInteractiveAuthentication no',
    'UsePAM no',
    // The key files live in a temporary directory, whose modes StrictModes would judge by the parents'.
    'StrictModes no',
    'AllowTcpForwarding yes',
    'X11Forwarding no',
    'PrintMotd no',
    'PrintLastLog no',
    'LogLevel ERROR',
    `SetEnv JACKIN_HOME=${remoteJackinHome} XDG_CACHE_HOME=${remoteCacheHome}${path !== undefined ? ` PATH=${path}` : ''}`,
    '',
  ].join('\n');
}

function clientConfigText(dir, port, user) {
  return [
    `Host ${SSH_TEST_HOST}`,
    '  HostName 127.0.0.1',
    `  Port ${port}`,
    `  User ${user}`,
    `  IdentityFile ${join(dir, 'client_key')}`,
    '  IdentitiesOnly yes',
    `  UserKnownHostsFile ${join(dir, 'known_hosts')}`,
    '  GlobalKnownHostsFile /dev/null',
    '  StrictHostKeyChecking yes',
    '  BatchMode yes',
    '  LogLevel ERROR',
    '',
  ].join('\n');
}

/** Each process's parent now, from /proc. */
function parents() {
  const parentOf = new Map();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // The fields after the command name, which is in parentheses and may hold blanks: state, ppid, ...
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      parentOf.set(Number(entry), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // Gone meanwhile.
    }
  }
  return parentOf;
}

/** The processes whose parent is `pid`. */
function children(pid) {
  return [...parents()].filter(([, parent]) => parent === pid).map(([child]) => child);
}

/** Every process under `pid` now. */
function descendants(pid) {
  const parentOf = parents();
  const found = [];
  const walk = (p) => {
    for (const [child, parent] of parentOf) {
      if (parent === p) {
        found.push(child);
        walk(child);
      }
    }
  };
  walk(pid);
  return found;
}

/**
 * Starts sshd on a free loopback port; stopped and removed when the test ends (`t.after`: a test's context,
 * or the bench's own list of hooks). `remotePath`: the PATH of the remote sessions (a test puts a stand-in
 * `uname` first), instead of sshd's default.
 */
export async function startSshd(t, { remotePath } = {}) {
  /** @type {import('node:child_process').ChildProcess | null} */
  let child = null;
  // sshd puts each connection in a session of its own (setsid), so its process group is the listener alone:
  // a dropped link is the listener and every process under it killed, each by its pid.
  const kill = async () => {
    const c = child;
    if (c === null || c.pid === undefined) return;
    child = null;
    if (c.exitCode !== null || c.signalCode !== null) return;
    const exited = new Promise((r) => c.once('exit', r));
    for (const pid of [c.pid, ...descendants(c.pid)]) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // Already gone.
      }
    }
    await exited;
  };
  let remoteHome = null;
  // Registered before the directory (testDir's own hook removes it; hooks run in order): the server and the
  // capsules a test left running on the remote side are gone before their files.
  t.after(async () => {
    await kill();
    if (remoteHome !== null) await stopRemoteCapsules(remoteHome);
  });
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'jackin-sshd-')));
  t.after(() => {
    try {
      rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 50 });
    } catch {
      // The test run's leftover check reports what stays.
    }
  });
  const port = await freePort();
  const remoteJackinHome = join(dir, 'remote-jackin');
  const remoteCacheHome = join(dir, 'remote-cache');
  remoteHome = remoteJackinHome;
  mkdirSync(remoteJackinHome, { mode: 0o700 });
  mkdirSync(remoteCacheHome, { mode: 0o700 });
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'jackin-test-host', '-f', join(dir, 'host_key')]);
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'jackin-test-client', '-f', join(dir, 'client_key')]);
  writeFileSync(join(dir, 'authorized_keys'), execFileSync('cat', [join(dir, 'client_key.pub')]), { mode: 0o600 });
  const hostPub = execFileSync('cat', [join(dir, 'host_key.pub')], { encoding: 'utf8' }).trim();
  writeFileSync(join(dir, 'known_hosts'), `[127.0.0.1]:${port} ${hostPub}\n`, { mode: 0o600 });
  const config = join(dir, 'sshd_config');
  writeFileSync(config, sshdConfig(dir, port, remoteJackinHome, remoteCacheHome, remotePath), { mode: 0o600 });
  const clientConfig = join(dir, 'ssh_config');
  writeFileSync(clientConfig, clientConfigText(dir, port, userInfo().username), { mode: 0o600 });
  // Debian's sshd refuses to start without its privilege separation directory.
  mkdirSync('/run/sshd', { recursive: true, mode: 0o755 });

  const start = async () => {
    const c = spawn('/usr/sbin/sshd', ['-D', '-e', '-f', config], { detached: true, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    c.stderr.on('data', (d) => (stderr = (stderr + d.toString('utf8')).slice(-4000)));
    child = c;
    await pollUntil('sshd to listen', async () => {
      if (c.exitCode !== null) throw new Error(`sshd exited with status ${c.exitCode}: ${stderr}`);
      return listening(port);
    });
  };
  await start();
  return {
    dir,
    port,
    clientConfig,
    remoteJackinHome,
    remoteCacheHome,
    connections: () => (child?.pid === undefined ? 0 : children(child.pid).length),
    kill,
    restart: start,
  };
}
