import type { ChildProcess } from 'node:child_process';

/** Sends SIGTERM (or `signal`) to a process a test started (a display server, a capsule) and waits for it to exit. */
export function stopChild(child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill(signal);
  });
}
