/**
 * A real OpenSSH server (Debian's openssh-server) on a loopback port, for the tests of `--ssh`: its own
 * host key and an authorized key made with ssh-keygen in a temporary directory, and an ssh client config
 * (`ssh -F <clientConfig> testhost`) that needs nothing of the operator's (no ~/.ssh, no agent, no known
 * hosts). The tests run as root in CI: root may log in, by key only. `SetEnv` gives the remote sessions a
 * JACKIN_HOME and XDG_CACHE_HOME in the temporary directory, so the remote side of a test never writes to
 * the real home. Stopped by pid, with the capsules left running on the remote side; the directory is
 * removed with the test.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import { stopCapsules } from './capsules.ts';
import { freePort, probePort } from './free-port.ts';
import { pollUntil } from './poll.ts';
import { testDir } from './test-run.ts';

/** The Host alias the client config names. */
export const SSH_TEST_HOST = 'testhost';

export interface TestSshd {
  /** The temporary directory holding keys, configs and the remote side's homes. */
  readonly dir: string;
  readonly port: number;
  /** An ssh client config: `ssh -F <clientConfig> testhost` logs in. */
  readonly clientConfig: string;
  /** The remote session's JACKIN_HOME and XDG_CACHE_HOME (both in `dir`). */
  readonly remoteJackinHome: string;
  readonly remoteCacheHome: string;
  /** How many connections sshd serves now (the listener's children: one per connection). */
  connections(): number;
  /** Kills the sshd and every connection it serves now, and what runs under them (SIGKILL, by pid). */
  kill(): Promise<void>;
  /** Starts a new sshd on the same port with the same keys (after kill()). */
  restart(): Promise<void>;
}

function sshdConfig(dir: string, port: number, remoteJackinHome: string, remoteCacheHome: string, path: string | undefined): string {
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

function clientConfigText(dir: string, port: number, user: string): string {
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
function parents(): Map<number, number> {
  const parentOf = new Map<number, number>();
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
function children(pid: number): number[] {
  return [...parents()].filter(([, parent]) => parent === pid).map(([child]) => child);
}

/** Every process under `pid` now. */
function descendants(pid: number): number[] {
  const parentOf = parents();
  const found: number[] = [];
  const walk = (p: number): void => {
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
 * Starts sshd on a free loopback port; stopped and removed when the test ends. `remotePath`: the PATH of the
 * remote sessions (a test puts a stand-in `uname` first), instead of sshd's default.
 */
export async function startSshd(t: { after: (fn: () => void | Promise<void>) => void }, { remotePath }: { remotePath?: string } = {}): Promise<TestSshd> {
  let child: ChildProcess | null = null;
  // sshd puts each connection in a session of its own (setsid), so its process group is the listener alone:
  // a dropped link is the listener and every process under it killed, each by its pid.
  const kill = async (): Promise<void> => {
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
  let remoteHome: string | null = null;
  // Registered before the directory (testDir's own hook removes it; hooks run in order): the server and the
  // capsules a test left running on the remote side are gone before their files.
  t.after(async () => {
    await kill();
    if (remoteHome !== null) await stopCapsules(remoteHome);
  });
  const dir = testDir(t, 'jackin-sshd-');
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

  const start = async (): Promise<void> => {
    const c = spawn('/usr/sbin/sshd', ['-D', '-e', '-f', config], { detached: true, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    c.stderr!.on('data', (d: Buffer) => (stderr = (stderr + d.toString('utf8')).slice(-4000)));
    child = c;
    await pollUntil('sshd to listen', async () => {
      if (c.exitCode !== null) throw new Error(`sshd exited with status ${c.exitCode}: ${stderr}`);
      return (await probePort(port)) === 'open';
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
