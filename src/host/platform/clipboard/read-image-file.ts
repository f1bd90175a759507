/** Reads an image file named by a copied file or a pasted path, with a byte cap, validated from its bytes. */
import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import type { ImageFormat } from '../../../protocol/frames.ts';
import { signatureFormat, validateImage } from '../../../policy/image-signature.ts';
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

/**
 * Whether the regular file at `path` starts with an accepted image signature: where a paste of one file
 * goes when host files are staged too (an image, or a file). Only its first bytes are read, to route the
 * paste; the image path then reads the whole with readImageFile (asking first when its symlinks lead
 * elsewhere) and validates it. False for anything unreadable.
 */
export async function hasImageSignature(path: string): Promise<boolean> {
  try {
    const fh = await open(path, constants.O_RDONLY | constants.O_NONBLOCK);
    try {
      if (!(await fh.stat()).isFile()) return false;
      const head = Buffer.alloc(64);
      const { bytesRead } = await fh.read(head, 0, head.length, 0);
      return signatureFormat(head.subarray(0, bytesRead)) !== null;
    } finally {
      await fh.close();
    }
  } catch {
    return false;
  }
}
