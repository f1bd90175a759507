/**
 * Puts text on the host clipboard, for copy offers (docs/terminal-policy.md, "Copy offers"). Only ever
 * called on an operator gesture (or JACKIN_COPY=allow). Backends: wl-copy, xclip, pbcopy, clip.exe
 * (Windows and WSL), `command:<argv>` (run with JACKIN_CLIPBOARD_OP=write-text, the text on stdin), and,
 * where no clipboard is reachable (an SSH session), an OSC 52 that jackin writes to its own terminal.
 * The backend is chosen by the same rules as for reading (select.ts).
 */
import { spawn } from 'node:child_process';
import { JackinError } from '../../../errors.ts';
import { describeCommand, type HelperCommand } from './run-helper.ts';
import { XCLIP_INSTALL, WL_PASTE_INSTALL } from './argv.ts';
import { chooseBackend, detectWsl, type BackendChoice } from './select.ts';

/** A stuck helper must not hold the action forever. */
const WRITE_TIMEOUT_MS = 10_000;

export interface ClipboardTextWriter {
  /** The backend's name, for notices ("xclip", "your terminal (OSC 52)"). */
  readonly name: string;
  readonly reason: string;
  /** Puts exactly `text` on the clipboard. Throws JackinError (E_CLIPBOARD_BACKEND_MISSING, E_CLIPBOARD_WRITE_FAILED, E_CLIPBOARD_TIMEOUT). */
  write(text: string): Promise<void>;
}

/** The program that writes text for a backend, and how the text is encoded on its stdin. Pure. */
export function textWriteCommand(choice: BackendChoice): { cmd: HelperCommand; encoding: 'utf8' | 'utf16le-bom'; install: string } | null {
  switch (choice.kind) {
    case 'xclip':
      return { cmd: { file: 'xclip', args: ['-selection', 'clipboard', '-in'] }, encoding: 'utf8', install: XCLIP_INSTALL };
    case 'wl-paste':
      return { cmd: { file: 'wl-copy', args: ['--type', 'text/plain;charset=utf-8'] }, encoding: 'utf8', install: WL_PASTE_INSTALL };
    case 'macos':
      return { cmd: { file: 'pbcopy', args: [] }, encoding: 'utf8', install: 'pbcopy ships with macOS in /usr/bin; check PATH' };
    case 'windows':
      // clip.exe takes UTF-16LE with a byte order mark as Unicode text (plain bytes would be read in the OEM code page).
      return { cmd: { file: 'clip.exe', args: [] }, encoding: 'utf16le-bom', install: 'clip.exe ships with Windows; under WSL, keep the Windows PATH' };
    case 'command':
      return { cmd: { file: choice.argv[0]!, args: choice.argv.slice(1) }, encoding: 'utf8', install: 'check the JACKIN_CLIPBOARD command' };
    default:
      return null;
  }
}

/** The OSC 52 sequence that asks jackin's own terminal to set its clipboard to `text`. */
export function osc52Write(text: string): Buffer {
  return Buffer.from(`\x1b]52;c;${Buffer.from(text, 'utf8').toString('base64')}\x1b\\`, 'latin1');
}

/** Runs `cmd` with `input` on stdin; resolves when it exits 0. Waits for exit, not for closed pipes (xclip and wl-copy fork to serve the selection). */
function runWriter(cmd: HelperCommand, input: Buffer, env: NodeJS.ProcessEnv, install: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd.file, [...cmd.args], { stdio: ['pipe', 'ignore', 'ignore'], env: { ...env, JACKIN_CLIPBOARD_OP: 'write-text' } });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new JackinError('E_CLIPBOARD_TIMEOUT', `${describeCommand(cmd)} did not finish within ${WRITE_TIMEOUT_MS / 1000} s`));
    }, WRITE_TIMEOUT_MS);
    child.on('error', (e: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      reject(
        e.code === 'ENOENT'
          ? new JackinError('E_CLIPBOARD_BACKEND_MISSING', `${cmd.file} not found; ${install}`)
          : new JackinError('E_CLIPBOARD_WRITE_FAILED', `${describeCommand(cmd)}: ${e.message}`),
      );
    });
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve();
      else reject(new JackinError('E_CLIPBOARD_WRITE_FAILED', `${describeCommand(cmd)} failed (${signal ?? `exit ${code}`})`));
    });
    child.stdin.on('error', () => {}); // a helper that exits early: its exit status tells
    child.stdin.end(input);
  });
}

/**
 * The writer for `choice`. `writeTerminal` writes jackin's own bytes to the operator's terminal (used
 * when no clipboard is reachable: the terminal, local or at the other end of SSH, may set its own).
 */
export function createTextWriter(choice: BackendChoice, reason: string, env: NodeJS.ProcessEnv, writeTerminal: (bytes: Buffer) => void): ClipboardTextWriter {
  // The terminal's clipboard is written the way it is when none is reachable: OSC 52.
  if (choice.kind === 'unavailable' || choice.kind === 'terminal') {
    return { name: 'your terminal (OSC 52)', reason, write: async (text) => writeTerminal(osc52Write(text)) };
  }
  const command = textWriteCommand(choice);
  if (command === null) {
    return {
      name: 'none',
      reason,
      write: async () => {
        throw new JackinError('E_CLIPBOARD_BACKEND_MISSING', `the host clipboard is turned off (${reason})`);
      },
    };
  }
  return {
    name: command.cmd.file,
    reason,
    write: (text) => {
      const input = command.encoding === 'utf8' ? Buffer.from(text, 'utf8') : Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')]);
      return runWriter(command.cmd, input, env, command.install);
    },
  };
}

/** The platform's text writer, chosen from the process environment. */
export function selectTextWriter(env: NodeJS.ProcessEnv, writeTerminal: (bytes: Buffer) => void): ClipboardTextWriter {
  const { choice, reason } = chooseBackend({ env, platform: process.platform, wsl: detectWsl(env) });
  return createTextWriter(choice, reason, env, writeTerminal);
}
