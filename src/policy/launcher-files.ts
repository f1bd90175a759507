/**
 * Files that must never be *opened* on the host, only revealed: opening them runs something (an
 * executable, a script, a launcher or shortcut that names another program, an installer, a disk image
 * that mounts and autoplays). An exported file's name and bytes come from the container, so "open" on
 * such a file would let the agent run code on the host with one of the operator's clicks. Pure.
 */

/**
 * Extensions (lower case, without the dot) that launch something when opened on Linux, macOS or Windows.
 * Scripts whose interpreter a desktop may run on open (py, rb, pl, js on Windows Script Host) are here too.
 */
export const LAUNCHER_EXTENSIONS: ReadonlySet<string> = new Set([
  // Linux desktops
  'desktop',
  'directory',
  'sh',
  'bash',
  'zsh',
  'csh',
  'ksh',
  'fish',
  'run',
  'bin',
  'appimage',
  'flatpakref',
  'flatpakrepo',
  'deb',
  'rpm',
  'snap',
  'kdelnk',
  // macOS
  'app',
  'command',
  'tool',
  'terminal',
  'webloc',
  'inetloc',
  'fileloc',
  'workflow',
  'action',
  'scpt',
  'scptd',
  'applescript',
  'pkg',
  'mpkg',
  'dmg',
  'prefpane',
  'osax',
  'kext',
  // Windows
  'exe',
  'com',
  'bat',
  'cmd',
  'scr',
  'pif',
  'msi',
  'msp',
  'mst',
  'msix',
  'msixbundle',
  'appx',
  'appxbundle',
  'appref-ms',
  'application',
  'gadget',
  'ps1',
  'psm1',
  'psd1',
  'ps1xml',
  'psc1',
  'vbs',
  'vbe',
  'js',
  'jse',
  'wsf',
  'wsh',
  'wsc',
  'hta',
  'cpl',
  'msc',
  'inf',
  'reg',
  'scf',
  'lnk',
  'url',
  'website',
  'library-ms',
  'searchconnector-ms',
  'settingcontent-ms',
  'xbap',
  'xll',
  'iso',
  'img',
  'vhd',
  'vhdx',
  'chm',
  'ins',
  'isp',
  'job',
  'sct',
  'shb',
  'shs',
  // Interpreters and VMs that a file association may run directly
  'jar',
  'jnlp',
  'py',
  'pyw',
  'pyz',
  'pl',
  'rb',
  'php',
  'lua',
  'tcl',
  'ex_',
]);

/**
 * Group headers of a desktop entry: shared-mime-info finds them anywhere in a file's first 256 bytes (after
 * comment lines, say), so they are looked for there, not only at the start.
 */
const DESKTOP_ENTRY_MARKERS: readonly Buffer[] = ['[Desktop Entry]', '[Desktop Action', '[KDE Desktop Entry]'].map((m) => Buffer.from(m));

/** First bytes of files that run when opened whatever their name: a script, a binary. */
const LAUNCHER_MAGIC: ReadonlyArray<{ bytes: Buffer; what: string }> = [
  { bytes: Buffer.from('#!'), what: 'a script' },
  { bytes: Buffer.from('MZ'), what: 'a Windows program' },
  { bytes: Buffer.from([0x7f, 0x45, 0x4c, 0x46]), what: 'a Linux program' },
  { bytes: Buffer.from([0xcf, 0xfa, 0xed, 0xfe]), what: 'a macOS program' },
  { bytes: Buffer.from([0xce, 0xfa, 0xed, 0xfe]), what: 'a macOS program' },
  { bytes: Buffer.from([0xca, 0xfe, 0xba, 0xbe]), what: 'a macOS or Java program' },
];

/** Bytes of a file's start that launcherContent() looks at (as far as a desktop looks for an entry's header). */
export const LAUNCHER_MAGIC_BYTES = 256;

/**
 * The reason `name` must not be opened, from its extension, or null. Windows ignores trailing dots and
 * spaces and Linux desktops compare without case, so both are ignored here too.
 */
export function launcherExtension(name: string): string | null {
  const base = name.split(/[/\\]/u).pop() ?? '';
  const trimmed = base.replace(/[.\s]+$/u, '').toLowerCase();
  const dot = trimmed.lastIndexOf('.');
  if (dot <= 0) return null;
  const ext = trimmed.slice(dot + 1);
  return LAUNCHER_EXTENSIONS.has(ext) ? `its extension .${ext} runs something when opened` : null;
}

/** The reason a file starting with `head` must not be opened, or null. */
export function launcherContent(head: Uint8Array): string | null {
  const b = Buffer.from(head.buffer, head.byteOffset, head.byteLength);
  const start = b.subarray(0, LAUNCHER_MAGIC_BYTES);
  if (DESKTOP_ENTRY_MARKERS.some((m) => start.includes(m))) return 'it is a desktop launcher';
  for (const m of LAUNCHER_MAGIC) {
    if (b.length >= m.bytes.length && b.subarray(0, m.bytes.length).equals(m.bytes)) return `it is ${m.what}`;
  }
  return null;
}
