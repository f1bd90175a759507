import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { shellQuote } from './tmux.ts';

/** A recorder opener for JACKIN_OPENER: appends its last argument (the URL) as one line to a file. */
export function recordingOpener(t: TestContext): { env: Record<string, string>; opened: () => string[] } {
  const dir = mkdtempSync(join(tmpdir(), 'jackin-links-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const log = join(dir, 'opened.txt');
  const script = join(dir, 'record-opener');
  writeFileSync(script, `#!/bin/sh\nprintf '%s\\n' "$1" >> ${shellQuote(log)}\n`);
  chmodSync(script, 0o755);
  return {
    env: { JACKIN_OPENER: script },
    opened: () =>
      existsSync(log)
        ? readFileSync(log, 'utf8')
            .split('\n')
            .filter((l) => l !== '')
        : [],
  };
}
