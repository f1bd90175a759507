/**
 * One read of the clipboard turned into a validated image: a copied file is read from disk (capped), an
 * image's bytes are checked; the format always comes from the bytes.
 */
import type { ImageFormat } from '../../../protocol/frames.ts';
import { validateImage } from '../../../policy/image-signature.ts';
import type { ConfirmRedirect } from '../host-file.ts';
import { readImageFile } from './read-image-file.ts';
import type { ClipboardBackendName, ClipboardContent, ClipboardReader } from './types.ts';

type ImageOrigin =
  | { kind: 'clipboard'; backend: ClipboardBackendName; mimeType: string; offered: readonly string[] }
  | { kind: 'file'; backend: ClipboardBackendName; path: string };

export interface AcquiredImage {
  format: ImageFormat;
  bytes: Buffer;
  origin: ImageOrigin;
}

/**
 * The clipboard's image, validated, or null when it holds none. Throws what the reader throws, plus
 * E_UNSUPPORTED_IMAGE / E_IMAGE_TOO_LARGE from validation and the readImageFile codes for a copied file
 * (`confirm` is asked when a copied file's symlinks lead elsewhere).
 */
export async function acquireClipboardImage(reader: ClipboardReader, maxBytes: number, confirm?: ConfirmRedirect): Promise<AcquiredImage | null> {
  return contentImage(await reader.readImage(), reader.name, maxBytes, confirm);
}

/**
 * What one read of the clipboard (`got`, from the `backend` reader) holds as a validated image, or null when
 * it held nothing; throws as acquireClipboardImage does after its read.
 */
export async function contentImage(
  got: ClipboardContent | null,
  backend: ClipboardBackendName,
  maxBytes: number,
  confirm?: ConfirmRedirect,
): Promise<AcquiredImage | null> {
  if (got === null) return null;
  switch (got.kind) {
    case 'image':
      return {
        format: validateImage(got.bytes, { maxBytes }),
        bytes: got.bytes,
        origin: { kind: 'clipboard', backend, mimeType: got.mimeType, offered: got.offered },
      };
    case 'file': {
      const file = await readImageFile(got.path, maxBytes, confirm);
      return { ...file, origin: { kind: 'file', backend, path: got.path } };
    }
    default: {
      const never: never = got;
      throw new TypeError(`unexpected clipboard content ${JSON.stringify(never)}`);
    }
  }
}
