/** Reads an image file named by a copied file or a pasted path, with a byte cap, validated from its bytes. */
import type { ImageFormat } from '../../../protocol/frames.ts';
import { validateImage } from '../../../policy/image-signature.ts';
import type { ConfirmRedirect } from '../host-file.ts';
import { readRawFile } from './read-raw-file.ts';

export interface ImageFile {
  format: ImageFormat;
  bytes: Buffer;
}

/**
 * The validated image at `path` (`confirm`: asked when its symlinks lead elsewhere, see read-raw-file.ts).
 * Throws what readRawFile throws, E_UNSUPPORTED_IMAGE, or E_NO_CLIPBOARD_IMAGE for an empty file.
 */
export async function readImageFile(path: string, maxBytes: number, confirm?: ConfirmRedirect): Promise<ImageFile> {
  const bytes = await readRawFile(path, maxBytes, confirm);
  return { format: validateImage(bytes, { maxBytes }), bytes };
}
