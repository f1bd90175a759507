/**
 * Turns a capsule-supplied file name into one that is safe to create in the export directory: the capsule
 * is untrusted, so its name may hold separators, control or bidi characters, a leading dot (hidden files,
 * `..`), a Windows device name, or thousands of bytes. Pure.
 */
import { posix } from 'node:path';
import { truncateUtf8 } from '../../protocol/text.ts';
import { UNSAFE_CHARS } from '../../ui/inert-text.ts';

/** Longest name most filesystems accept, in UTF-8 bytes. */
export const MAX_NAME_BYTES = 255;
/** Longest extension kept whole when a name must be shortened. */
const MAX_EXTENSION_BYTES = 32;
/** Name used when nothing usable is left. */
const FALLBACK_NAME = 'export';

// Characters Windows refuses in names (the host may be Windows or WSL writing to a Windows drive).
const WINDOWS_CHARS = /[<>:"|?*]/g;
const WINDOWS_RESERVED = /^(con|prn|aux|nul|com[0-9¹²³]|lpt[0-9¹²³])(\..*)?$/i;

function utf8Bytes(s: string): number {
  return Buffer.byteLength(s, 'utf8');
}

/** Split into stem and extension (with its dot); a name without a usable extension has ext ''. */
export function splitExtension(name: string): { stem: string; ext: string } {
  // Keep compound archive extensions together, so `x.tar.zst` gets `x-1.tar.zst`.
  const compound = /(\.tar\.(?:zst|gz|xz|bz2))$/i.exec(name);
  const dot = compound !== null ? compound.index : name.lastIndexOf('.');
  if (dot <= 0) return { stem: name, ext: '' };
  const ext = name.slice(dot);
  if (utf8Bytes(ext) > MAX_EXTENSION_BYTES) return { stem: name, ext: '' };
  return { stem: name.slice(0, dot), ext };
}

/** Fit `stem + suffix + ext` into `max` bytes by shortening the stem. */
export function fitName(stem: string, suffix: string, ext: string, max: number = MAX_NAME_BYTES): string {
  const room = max - utf8Bytes(suffix) - utf8Bytes(ext);
  return truncateUtf8(stem, Math.max(1, room), '') + suffix + ext;
}

export function sanitizeExportName(raw: string): string {
  // Only the last path component is a name; anything before a separator is the capsule's directory.
  const parts = raw.normalize('NFC').split(/[/\\]/);
  let name = parts[parts.length - 1] ?? '';
  name = name.replace(UNSAFE_CHARS, '').replace(WINDOWS_CHARS, '_');
  // Leading dots would hide the file (or be `.`/`..`); leading/trailing spaces and trailing dots confuse
  // shells and are stripped by Windows.
  name = name.replace(/^[.\s]+/u, '').replace(/[.\s]+$/u, '');
  if (name === '') name = FALLBACK_NAME;
  if (WINDOWS_RESERVED.test(name)) name = `_${name}`;
  const { stem, ext } = splitExtension(name);
  return fitName(stem, '', ext);
}

/** Extension every directory export is published with. */
const ARCHIVE_EXTENSION = '.tar.zst';

/**
 * The name an export is published under. Its extension, which decides what "open" would run, comes from
 * the path the operator asked for (or the offered path), never from the name the capsule suggests: a
 * capsule asked for `invoice.txt` could otherwise publish `invoicetxt.exe`. A file takes the requested
 * path's last component; a directory takes it (or, for `.`, the capsule's name for it) plus `.tar.zst`.
 */
export function exportNameFor(requestedPath: string, kind: 'file' | 'directory', suggested: string): string {
  // The capsule names a path by its lexical last component too (`a/b/..` is `a`).
  const last = posix.basename(posix.normalize(requestedPath));
  const requested = last === '.' || last === '..' || last === '/' ? '' : last;
  if (kind === 'file') return sanitizeExportName(requested);
  const base = requested !== '' ? requested : sanitizeExportName(suggested).replace(/\.tar\.zst$/iu, '');
  return sanitizeExportName(`${base}${ARCHIVE_EXTENSION}`);
}
