/**
 * `JACKIN_CLIPBOARD=command:<argv>`: any program that prints the clipboard image's bytes on stdout and
 * exits 0; empty output means no image; a non-zero exit is a failure. The argv is split shell-like and
 * run without a shell.
 */
import { JackinError } from '../../../errors.ts';
import { describeCommand, runHelper, type HelperCommand } from './run-helper.ts';
import type { ClipboardReader, ReadLimits } from './types.ts';

export function createCommandReader(argv: readonly string[], limits: ReadLimits, env: NodeJS.ProcessEnv, reason: string): ClipboardReader {
  const [file, ...args] = argv;
  if (file === undefined) throw new TypeError('command reader needs a non-empty argv');
  const cmd: HelperCommand = { file, args };
  return {
    name: 'command',
    reason,
    async readImage() {
      const r = await runHelper(cmd, {
        timeoutMs: limits.timeoutMs,
        maxBytes: limits.maxBytes,
        overflowCode: 'E_IMAGE_TOO_LARGE',
        installHint: 'check the command in JACKIN_CLIPBOARD (command:<argv>)',
        env,
      });
      if (r.exitCode !== 0) {
        throw new JackinError('E_CLIPBOARD_READ_FAILED', `${describeCommand(cmd)} failed (${r.signal ?? `exit ${r.exitCode}`}): ${r.stderr || 'no message'}`);
      }
      if (r.stdout.length === 0) return null;
      return { kind: 'image', bytes: r.stdout, mimeType: 'application/octet-stream', offered: [] };
    },
    // The command contract carries image bytes only.
    readPath: async () => null,
  };
}
