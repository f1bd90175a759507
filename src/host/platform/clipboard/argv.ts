/**
 * The exact argv of every clipboard helper, built by pure functions so tests can pin them (the macOS and
 * Windows ones cannot run here).
 */
import type { HelperCommand } from './run-helper.ts';

export const XCLIP_INSTALL = 'install it: apt-get install xclip (Fedora: dnf install xclip; Arch: pacman -S xclip)';
export const WL_PASTE_INSTALL = 'install it: apt-get install wl-clipboard (Fedora: dnf install wl-clipboard; Arch: pacman -S wl-clipboard)';
export const OSASCRIPT_INSTALL = 'osascript ships with macOS in /usr/bin; check PATH';
export const POWERSHELL_INSTALL =
  'Windows PowerShell ships with Windows; under WSL, enable interop (/proc/sys/fs/binfmt_misc/WSLInterop) and keep the Windows PATH (appendWindowsPath=true in /etc/wsl.conf)';

export function xclipTargetsArgv(): HelperCommand {
  return { file: 'xclip', args: ['-selection', 'clipboard', '-t', 'TARGETS', '-o'] };
}

export function xclipReadArgv(type: string): HelperCommand {
  return { file: 'xclip', args: ['-selection', 'clipboard', '-t', type, '-o'] };
}

export function wlPasteTypesArgv(): HelperCommand {
  return { file: 'wl-paste', args: ['--list-types'] };
}

/** `--no-newline`: wl-paste appends a newline to text types otherwise, which would alter a file list. */
export function wlPasteReadArgv(type: string): HelperCommand {
  return { file: 'wl-paste', args: ['--no-newline', '--type', type] };
}

/** What a native helper should fetch. */
export type NativeMode = 'image' | 'text';

/** osascript running the JXA helper; it writes any image into `outDir` (a fresh 0700 temp dir). */
export function macosArgv(scriptPath: string, mode: NativeMode, outDir: string): HelperCommand {
  return { file: 'osascript', args: ['-l', 'JavaScript', scriptPath, mode, outDir] };
}

/**
 * Windows PowerShell running the helper as -EncodedCommand (UTF-16LE, base64), so neither a script path
 * nor arguments need translating between WSL and Windows, and the execution policy does not apply to it.
 * The mode is prepended as a variable assignment.
 */
export function windowsArgv(scriptText: string, mode: NativeMode): HelperCommand {
  const program = `$JackinMode = '${mode}'\n${scriptText}`;
  return {
    // Under WSL the Windows binary is only found by its .exe name (interop); on Windows libuv finds it too.
    file: 'powershell.exe',
    args: ['-NoProfile', '-NonInteractive', '-Sta', '-EncodedCommand', Buffer.from(program, 'utf16le').toString('base64')],
  };
}
