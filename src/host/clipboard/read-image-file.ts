/** Reads an image file named by a copied file or a pasted path, with a byte cap, validated from its bytes. */
import type { ImageFormat } from '../../protocol/frames.ts';
import { validateImage } from '../../policy/image-signature.ts';
import { readRawFile } from './read-raw-file.ts';

export interface ImageFile {
  format: ImageFormat;
  bytes: Buffer;
}

/**
 * The validated image at `path`. Throws E_PATH_NOT_FOUND, E_PATH_UNREADABLE, E_NOT_A_FILE,
 * E_IMAGE_TOO_LARGE, E_UNSUPPORTED_IMAGE, or E_NO_CLIPBOARD_IMAGE for an empty file.
 */
export async function readImageFile(path: string, maxBytes: number): Promise<ImageFile> {
  const bytes = await readRawFile(path, maxBytes);
  return { format: validateImage(bytes, { maxBytes }), bytes };
}
