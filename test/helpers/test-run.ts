import { chmodSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * What scripts/run-tests.mjs gives a test run: its own temporary directory (TMPDIR) and a marker
 * (JACKIN_TEST_RUN). Helpers that start a process with a clean environment add these, so that the check at
 * the end of the run finds the process if a test leaves it running, and its temporary files land in the
 * run's directory. Empty when the tests run without the script.
 */
export function testRunEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const k of ['TMPDIR', 'JACKIN_TEST_RUN'] as const) {
    const v = process.env[k];
    if (v !== undefined && v !== '') env[k] = v;
  }
  return env;
}

/**
 * Removes a test's temporary directory at the end of the test. Never throws: a failure must not stop the
 * cleanup hooks registered after this one, and the run's leftover check (scripts/run-tests.mjs) reports
 * whatever stays. Retries while a process that was just stopped still writes there.
 */
export function removeTestDir(path: string): void {
  try {
    rmSync(path, { recursive: true, force: true, maxRetries: 10, retryDelay: 50 });
  } catch {
    // Reported by the leftover check.
  }
}

/**
 * A temporary directory for one test (its real path, named `<prefix>XXXXXX`), removed when the test ends
 * (removeTestDir). `shared`: writable by every user, for a container's user or the non-root operator (the
 * tests run as root).
 */
export function testDir(t: { after: (fn: () => void) => void }, prefix: string, { shared = false }: { shared?: boolean } = {}): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
  if (shared) chmodSync(dir, 0o777);
  t.after(() => removeTestDir(dir));
  return dir;
}
