/**
 * The local side of an --ssh test: jackin's environment for reaching the test sshd (`ssh -F CFG`, nothing
 * of the operator's), and the test's own shared-connection sockets. A long TMPDIR puts jackin's control
 * directory in /tmp/jackin-ssh-<uid>, shared by every test running at once (and left, empty, as jackin
 * leaves it for an operator): a test counts only its own socket there, and never removes the directory.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { controlName, parseSshTarget, sshCommand, sshControlDir } from '../../src/host/instances/ssh.ts';
import { SSH_TEST_HOST, type TestSshd } from './sshd.mjs';
import { testRunEnv } from './test-run.ts';
import { shellQuote } from './tmux.ts';

/** JACKIN_SSH_COMMAND for the test sshd. */
export function testSshCommand(sshd: TestSshd): string {
  return `ssh -F ${shellQuote(sshd.clientConfig)}`;
}

/**
 * This test's shared connections to the test host: the entries of jackin's control directory named for the
 * test's JACKIN_SSH_COMMANDs (the socket, and ssh's `<name>.<random>` while it binds one).
 */
export function ownControlSockets(jackinHome: string, ...sshCommands: string[]): () => string[] {
  const dir = sshControlDir(jackinHome);
  const names = sshCommands.map((c) => controlName(sshCommand({ JACKIN_SSH_COMMAND: c }), parseSshTarget(SSH_TEST_HOST)));
  return () => {
    try {
      return readdirSync(dir).filter((e) => names.some((n) => e.startsWith(n)));
    } catch {
      return [];
    }
  };
}

export function sshClient(sshd: TestSshd, home: string, extra: Record<string, string> = {}): { env: Record<string, string>; sockets: () => string[] } {
  const jackinHome = join(home, '.jackin');
  const env = {
    ...testRunEnv(),
    PATH: process.env['PATH'] ?? '/usr/bin:/bin',
    HOME: home,
    JACKIN_HOME: jackinHome,
    JACKIN_SSH_COMMAND: testSshCommand(sshd),
    ...extra,
  };
  return { env, sockets: ownControlSockets(jackinHome, env.JACKIN_SSH_COMMAND) };
}
