/**
 * What a clipboard backend returns. Backends never decode or convert: an image keeps the bytes the owner
 * served, and validation (src/policy/image-signature.ts) decides the format from those bytes afterwards.
 */

/** The names a backend can have; `JACKIN_CLIPBOARD` forces one of the first seven. */
export type ClipboardBackendName = 'xclip' | 'wl-paste' | 'macos' | 'windows' | 'terminal' | 'none' | 'command' | 'unavailable';

/** Image bytes exactly as the clipboard owner served them, not yet validated. */
interface ClipboardImage {
  kind: 'image';
  bytes: Buffer;
  /** The type the bytes were requested as (a MIME type, or a helper's format hint), for notices only. */
  mimeType: string;
  /** Every type the clipboard offered, in the owner's order (empty when the backend cannot list them). */
  offered: readonly string[];
}

/** A copied file (`text/uri-list`, `x-special/gnome-copied-files`, a macOS file URL, a Windows file drop). */
interface ClipboardFile {
  kind: 'file';
  /** Absolute host path of the first copied file; the caller reads the file, never its icon. */
  path: string;
  /** Every copied file, in order (`path` first), when the backend can list them all. */
  paths?: readonly string[];
  offered: readonly string[];
}

export type ClipboardContent = ClipboardImage | ClipboardFile;

export interface ClipboardReader {
  readonly name: ClipboardBackendName;
  /** Why this backend was chosen, for `--verbose` and notices ("DISPLAY is set"). */
  readonly reason: string;
  /**
   * The clipboard's image or copied file, or null when it holds neither (the caller then forwards the
   * Ctrl+V byte). Throws JackinError E_CLIPBOARD_BACKEND_MISSING, E_CLIPBOARD_TIMEOUT,
   * E_CLIPBOARD_READ_FAILED, E_IMAGE_TOO_LARGE, or E_UNSUPPORTED_IMAGE when only unaccepted image types
   * (svg, bmp) are offered. Never reads text, except a copied file's URL list.
   */
  readImage(): Promise<ClipboardContent | null>;
  /**
   * For the "Stage image from clipboard path" action only: the one absolute path the clipboard names (a
   * copied file, or text, capped at a few KiB, that is exactly one path or file URL), else null. The
   * caller sends the image at that path, never the text.
   */
  readPath(): Promise<string | null>;
}

/** Limits every backend applies to each helper it runs. */
export interface ReadLimits {
  timeoutMs: number;
  /** Largest image accepted; a helper printing more is killed and E_IMAGE_TOO_LARGE thrown. */
  maxBytes: number;
}
