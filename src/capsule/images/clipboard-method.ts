/**
 * The `clipboard-image` control method: which staged image was pasted last into this session, for the
 * clipboard shims in the container (`xclip -o -t image/png`, `wl-paste --type image/png`, …), so an agent
 * that reads the clipboard itself gets the operator's paste. Only the file's name under `<run>/clipboard/`
 * travels; the shim reads the file there.
 */
import type { ControlMethods } from '../session/control-methods.ts';
import type { StagedImage } from '../session/staging.ts';
import type { ImageFormat } from '../../protocol/frames.ts';

/** The MIME type a clipboard tool asks for, per staged format. */
export const IMAGE_MIME_TYPES: Readonly<Record<ImageFormat, string>> = {
  png: 'image/png',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  tiff: 'image/tiff',
};

export interface ClipboardImageSource {
  readonly lastPasted: StagedImage | null;
}

export function registerClipboardMethod(control: ControlMethods, images: ClipboardImageSource): void {
  control.register('clipboard-image', () => {
    const last = images.lastPasted;
    return { reply: { ok: true, name: last === null ? null : last.name, type: last === null ? null : IMAGE_MIME_TYPES[last.format] } };
  });
}
