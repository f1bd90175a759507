import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { shellQuote } from './tmux.ts';

/**
 * A recorder clipboard for JACKIN_CLIPBOARD=command: (the host's text writer runs it with the text on stdin
 * and JACKIN_CLIPBOARD_OP=write-text): each write is appended to a log, ended by a NUL byte.
 */
export function recordingClipboard(t: TestContext): { env: Record<string, string>; written: () => string[] } {
  const dir = mkdtempSync(join(tmpdir(), 'jackin-clip-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const log = join(dir, 'written.bin');
  const script = join(dir, 'record-clipboard');
  writeFileSync(script, `#!/bin/sh\n[ "$JACKIN_CLIPBOARD_OP" = write-text ] || exit 1\ncat >> ${shellQuote(log)}\nprintf '\\000' >> ${shellQuote(log)}\n`);
  chmodSync(script, 0o755);
  return {
    env: { JACKIN_CLIPBOARD: `command:${script}` },
    written: () => (existsSync(log) ? readFileSync(log, 'utf8').split('\0').slice(0, -1) : []),
  };
}
