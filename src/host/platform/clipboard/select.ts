/**
 * Chooses the clipboard backend once per process: `JACKIN_CLIPBOARD` forces one, else WAYLAND_DISPLAY →
 * wl-paste, DISPLAY → xclip, macOS → osascript helper, Windows or WSL → PowerShell helper; with none of
 * these in a session reached over SSH (SSH_CONNECTION or SSH_TTY), the operator's terminal (OSC 5522).
 */
import { readFileSync } from 'node:fs';
import { JackinError } from '../../../errors.ts';
import { isOffWord } from '../../../policy/env-switch.ts';
import { DEFAULT_MAX_IMAGE_BYTES } from '../../../policy/image-signature.ts';
import { createCommandReader } from './command-reader.ts';
import { createMacosReader, WindowsReader } from './native-reader.ts';
import { splitShellWords } from '../shell-words.ts';
import { createWlPasteReader, createXclipReader } from './targets-reader.ts';
import { TerminalClipboardReader, type TerminalLink } from './terminal-reader.ts';
import type { ClipboardReader, ReadLimits } from './types.ts';

export type BackendChoice =
  | { kind: 'xclip' }
  | { kind: 'wl-paste' }
  | { kind: 'macos' }
  | { kind: 'windows'; wsl: boolean }
  | { kind: 'none' }
  /** The operator's terminal, through the kitty clipboard protocol (terminal-reader.ts). */
  | { kind: 'terminal' }
  | { kind: 'command'; argv: string[] }
  | { kind: 'unavailable' };

export interface ChoiceInput {
  env: NodeJS.ProcessEnv;
  platform: NodeJS.Platform;
  /** True under WSL (see detectWsl). */
  wsl: boolean;
}

/** Reading a large image through a helper takes well under a second; a stuck owner must not hang Ctrl+V. */
const DEFAULT_CLIPBOARD_TIMEOUT_MS = 10_000;

const DEFAULT_READ_LIMITS: ReadLimits = {
  timeoutMs: DEFAULT_CLIPBOARD_TIMEOUT_MS,
  maxBytes: DEFAULT_MAX_IMAGE_BYTES,
};

const FORCED = ['wl-paste', 'xclip', 'macos', 'windows', 'terminal', 'none'] as const;

/** The backend and why (an off-word is none); throws E_BAD_CLIPBOARD_BACKEND for an unknown JACKIN_CLIPBOARD value. Pure. */
export function chooseBackend({ env, platform, wsl }: ChoiceInput): { choice: BackendChoice; reason: string } {
  const forced = env.JACKIN_CLIPBOARD?.trim();
  if (forced !== undefined && forced !== '') {
    if (forced.startsWith('command:')) {
      const argv = splitShellWords(forced.slice('command:'.length));
      if (argv.length === 0) {
        throw new JackinError('E_BAD_CLIPBOARD_BACKEND', 'JACKIN_CLIPBOARD=command: needs a command, e.g. command:my-clip --png');
      }
      return { choice: { kind: 'command', argv }, reason: 'JACKIN_CLIPBOARD=command:' };
    }
    const name = isOffWord(forced) ? 'none' : FORCED.find((f) => f === forced);
    if (name === undefined) {
      throw new JackinError(
        'E_BAD_CLIPBOARD_BACKEND',
        `JACKIN_CLIPBOARD=${JSON.stringify(forced)} is not a backend; use one of ${FORCED.join(', ')} or command:<argv>`,
      );
    }
    const reason = `JACKIN_CLIPBOARD=${forced}`;
    switch (name) {
      case 'windows':
        return { choice: { kind: 'windows', wsl: platform !== 'win32' }, reason };
      case 'wl-paste':
      case 'xclip':
      case 'macos':
      case 'terminal':
      case 'none':
        return { choice: { kind: name }, reason };
      default: {
        const never: never = name;
        throw new TypeError(`unexpected backend ${String(never)}`);
      }
    }
  }
  if (env.WAYLAND_DISPLAY) return { choice: { kind: 'wl-paste' }, reason: 'WAYLAND_DISPLAY is set' };
  if (env.DISPLAY) return { choice: { kind: 'xclip' }, reason: 'DISPLAY is set' };
  if (platform === 'darwin') return { choice: { kind: 'macos' }, reason: 'macOS' };
  if (platform === 'win32') return { choice: { kind: 'windows', wsl: false }, reason: 'Windows' };
  if (wsl) return { choice: { kind: 'windows', wsl: true }, reason: 'WSL without a display' };
  // No clipboard here, and the operator sits at the other end of SSH: their terminal may send its clipboard.
  if (env.SSH_CONNECTION || env.SSH_TTY) {
    return {
      choice: { kind: 'terminal' },
      reason: `no local clipboard and the session is remote (${env.SSH_CONNECTION ? 'SSH_CONNECTION' : 'SSH_TTY'} is set)`,
    };
  }
  return { choice: { kind: 'unavailable' }, reason: 'neither WAYLAND_DISPLAY nor DISPLAY is set' };
}

/** True under WSL: its env markers, else the kernel release naming Microsoft. */
export function detectWsl(env: NodeJS.ProcessEnv = process.env): boolean {
  if (process.platform !== 'linux') return false;
  if (env.WSL_DISTRO_NAME || env.WSL_INTEROP) return true;
  try {
    return /microsoft/i.test(readFileSync('/proc/sys/kernel/osrelease', 'utf8'));
  } catch {
    return false;
  }
}

/**
 * The reader for `choice`. The terminal backend needs the operator's terminal (`terminal`); without one (a
 * session with no terminal) it is no clipboard at all.
 */
export function createReader(
  choice: BackendChoice,
  reason: string,
  env: NodeJS.ProcessEnv,
  limits: ReadLimits = DEFAULT_READ_LIMITS,
  terminal?: TerminalLink,
): ClipboardReader {
  switch (choice.kind) {
    case 'xclip':
      return createXclipReader(limits, env, reason);
    case 'wl-paste':
      return createWlPasteReader(limits, env, reason);
    case 'macos':
      return createMacosReader(limits, env, reason);
    case 'windows':
      return new WindowsReader(limits, env, reason, choice.wsl);
    case 'command':
      return createCommandReader(choice.argv, limits, env, reason);
    case 'none':
      return { name: 'none', reason, readImage: async () => null, readPath: async () => null };
    case 'terminal':
      if (terminal !== undefined) return new TerminalClipboardReader(terminal, reason, limits);
      return createReader({ kind: 'unavailable' }, `${reason}, but jackin has no terminal here`, env, limits);
    case 'unavailable': {
      const missing = (): never => {
        throw new JackinError(
          'E_CLIPBOARD_BACKEND_MISSING',
          `no host clipboard found (${reason}); run inside a desktop session, or set JACKIN_CLIPBOARD=command:<argv> to a command that prints the image`,
        );
      };
      return { name: 'unavailable', reason, readImage: async () => missing(), readPath: async () => missing() };
    }
    default: {
      const never: never = choice;
      throw new TypeError(`unexpected backend ${JSON.stringify(never)}`);
    }
  }
}

/** The platform's reader, chosen once from the process environment (`terminal`: the operator's, for the terminal backend). */
export function selectClipboardReader(
  env: NodeJS.ProcessEnv = process.env,
  limits: ReadLimits = DEFAULT_READ_LIMITS,
  terminal?: TerminalLink,
): ClipboardReader {
  const { choice, reason } = chooseBackend({ env, platform: process.platform, wsl: detectWsl(env) });
  return createReader(choice, reason, env, limits, terminal);
}
