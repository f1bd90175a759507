export type { ClipboardBackendName, ClipboardContent, ClipboardFile, ClipboardImage, ClipboardReader, ReadLimits } from './types.ts';
export { acquireClipboardImage, type AcquiredImage, type ImageOrigin } from './acquire.ts';
export { chooseBackend, createReader, detectWsl, selectClipboardReader, DEFAULT_READ_LIMITS, type BackendChoice } from './select.ts';
export { readImageFile, type ImageFile } from './read-image-file.ts';
