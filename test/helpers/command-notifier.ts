/**
 * A `JACKIN_NOTIFIER=command:` recorder for tests: a script that appends one line per call, its arguments
 * joined by `|` (jackin runs it as `<script> --from-jackin -- <title> <body>`). The directory is removed
 * when the test ends.
 */
import type { TestContext } from 'node:test';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { shellQuote } from './tmux.ts';

export function commandNotifier(t: TestContext): { env: Record<string, string>; calls: () => string[] } {
  const dir = mkdtempSync(join(tmpdir(), 'jackin-notifier-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const log = join(dir, 'calls.txt');
  const script = join(dir, 'record-notifier');
  writeFileSync(script, `#!/bin/sh\nIFS='|'; printf '%s\\n' "$*" >> ${shellQuote(log)}\n`);
  chmodSync(script, 0o755);
  return {
    env: { JACKIN_NOTIFIER: `command:${script} --from-jackin` },
    calls: () =>
      existsSync(log)
        ? readFileSync(log, 'utf8')
            .split('\n')
            .filter((l) => l !== '')
        : [],
  };
}
