import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import pty from '@lydell/node-pty';
import { JACKIN_BIN } from './jackin-cli.ts';
import { shellQuote } from './tmux.ts';
import { testDir } from './test-run.ts';

/**
 * Runs jackin with stdin and stdout on a PTY (an attach needs a terminal: E_NOT_A_TERMINAL otherwise) and
 * stderr in a file, as when stderr is redirected: returns its exit status and its stderr bytes.
 */
export function jackinStderrOffTerminal(
  t: { after: (fn: () => void) => void },
  args: string[],
  env: NodeJS.ProcessEnv,
): Promise<{ code: number; stderr: Buffer }> {
  const errFile = join(testDir(t, 'jackin-stderr-'), 'stderr');
  const line = `exec ${[process.execPath, JACKIN_BIN, ...args].map(shellQuote).join(' ')} 2>${shellQuote(errFile)}`;
  return new Promise((resolve) => {
    const term = pty.spawn('/bin/sh', ['-c', line], { name: 'xterm-256color', cols: 200, rows: 30, env: env as Record<string, string>, encoding: null });
    t.after(() => {
      try {
        term.kill();
      } catch {
        // already gone
      }
    });
    // Read, so the terminal never fills.
    term.onData(() => undefined);
    term.onExit(({ exitCode }) => resolve({ code: exitCode, stderr: readFileSync(errFile) }));
  });
}
