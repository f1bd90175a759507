/**
 * The `clipboard-image` control method: which staged image was pasted last into this session, for the
 * clipboard shims in the container (`xclip -o -t image/png`, `wl-paste --type image/png`, …), so an agent
 * that reads the clipboard itself gets the operator's paste. Only the file's name under `<run>/clipboard/`
 * travels; the shim reads the file there. The reply also carries `text`: the text last pasted in
 * bracketed-paste markers (at most 1 MiB of UTF-8, in base64), or null, for a read of text (`xclip -o`,
 * `pbpaste`).
 */
import { CLIPBOARD_IMAGE_METHOD } from '../../protocol/index.ts';
import { answer, type ControlMethods } from '../session/control-methods.ts';
import type { StagedImage } from '../session/staging.ts';
import type { ImageFormat } from '../../protocol/frames.ts';
import { MAX_PASTED_TEXT_BYTES } from '../connection/paste-scanner.ts';

/** The MIME type a clipboard tool asks for, per staged format. */
const IMAGE_MIME_TYPES: Readonly<Record<ImageFormat, string>> = {
  png: 'image/png',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  tiff: 'image/tiff',
};

export interface ClipboardImageSource {
  readonly lastPasted: StagedImage | null;
}

export interface ClipboardTextSource {
  readonly lastPasted: string | null;
}

const NO_TEXT: ClipboardTextSource = { lastPasted: null };

export function registerClipboardMethod(control: ControlMethods, images: ClipboardImageSource, text: ClipboardTextSource = NO_TEXT): void {
  control.register(CLIPBOARD_IMAGE_METHOD, () => {
    const last = images.lastPasted;
    const pasted = text.lastPasted;
    return answer({
      name: last === null ? null : last.name,
      type: last === null ? null : IMAGE_MIME_TYPES[last.format],
      // Base64: 1 MiB of text with control characters would be up to 6 MiB as a JSON string.
      text: pasted !== null && Buffer.byteLength(pasted, 'utf8') <= MAX_PASTED_TEXT_BYTES ? Buffer.from(pasted, 'utf8').toString('base64') : null,
    });
  });
}
