/** Pure decisions over the types a clipboard offers. */
import { fileURLToPath } from 'node:url';
import type { ImageFormat } from '../../../protocol/frames.ts';

/** MIME spellings per format, in order of preference: png > jpeg > gif > webp > tiff. */
const IMAGE_TYPE_PREFERENCE: ReadonlyArray<readonly [ImageFormat, readonly string[]]> = [
  ['png', ['image/png']],
  ['jpeg', ['image/jpeg', 'image/jpg', 'image/pjpeg']],
  ['gif', ['image/gif']],
  ['webp', ['image/webp']],
  ['tiff', ['image/tiff', 'image/tif']],
];

/** Types that carry a list of copied files (a file manager's copy). */
const FILE_LIST_TYPES = ['x-special/gnome-copied-files', 'text/uri-list'] as const;

/** Text types for the clipboard-path action, best first. */
const TEXT_TYPES = ['text/plain;charset=utf-8', 'UTF8_STRING', 'text/plain', 'STRING'] as const;

const bare = (t: string): string => t.split(';')[0]!.trim().toLowerCase();

/** The offered type to request for an image, spelled as offered, or null. */
export function pickImageType(offered: readonly string[]): string | null {
  for (const [, spellings] of IMAGE_TYPE_PREFERENCE) {
    const hit = offered.find((t) => spellings.includes(bare(t)));
    if (hit !== undefined) return hit;
  }
  return null;
}

/** Offered `image/*` types we do not accept (svg, bmp...), for the refusal notice. */
export function unacceptedImageTypes(offered: readonly string[]): string[] {
  return offered.filter((t) => bare(t).startsWith('image/'));
}

/** The offered file-list type to request, preferring GNOME's (it says copy vs cut), or null. */
export function pickFileListType(offered: readonly string[]): string | null {
  for (const want of FILE_LIST_TYPES) {
    const hit = offered.find((t) => bare(t) === want);
    if (hit !== undefined) return hit;
  }
  return null;
}

/** The offered text type to request, or null. */
export function pickTextType(offered: readonly string[]): string | null {
  for (const want of TEXT_TYPES) {
    const hit = offered.find((t) => t.toLowerCase() === want.toLowerCase());
    if (hit !== undefined) return hit;
  }
  return null;
}

/**
 * Local file paths named by a `text/uri-list` (RFC 2483: CRLF lines, `#` comments) or
 * `x-special/gnome-copied-files` (first line `copy` or `cut`) payload. Non-file URLs (a browser's
 * http link beside its image) and file URLs on another host are skipped.
 */
export function parseFileList(payload: string): string[] {
  const paths: string[] = [];
  for (const raw of payload.split(/\r?\n/)) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#') || line === 'copy' || line === 'cut') continue;
    if (!/^file:/i.test(line)) continue;
    try {
      paths.push(fileURLToPath(line));
    } catch {
      // file://otherhost/... or an encoded slash: not a local path we can read.
    }
  }
  return paths;
}
