/**
 * The local side of an --ssh test: jackin's environment for reaching the test sshd (`ssh -F CFG`, nothing
 * of the operator's), and its shared-connection directory, removed after the test when it lies outside the
 * test's home (a long TMPDIR puts it in /tmp/jackin-ssh-<uid>).
 */
import { rmdirSync } from 'node:fs';
import { join } from 'node:path';
import { sshControlDir } from '../../src/host/instances/ssh.ts';
import type { TestSshd } from './sshd.mjs';
import { testRunEnv } from './test-run.ts';
import { shellQuote } from './tmux.ts';

export function sshClient(
  t: { after: (fn: () => void) => void },
  sshd: TestSshd,
  home: string,
  extra: Record<string, string> = {},
): { env: Record<string, string>; controlDir: string } {
  const jackinHome = join(home, '.jackin');
  const env = {
    ...testRunEnv(),
    PATH: process.env['PATH'] ?? '/usr/bin:/bin',
    HOME: home,
    JACKIN_HOME: jackinHome,
    JACKIN_SSH_COMMAND: `ssh -F ${shellQuote(sshd.clientConfig)}`,
    ...extra,
  };
  const controlDir = sshControlDir(jackinHome);
  if (!controlDir.startsWith(home)) {
    t.after(() => {
      try {
        rmdirSync(controlDir);
      } catch {
        // Not empty (another run's connection) or gone: the run's leftover check says which.
      }
    });
  }
  return { env, controlDir };
}
