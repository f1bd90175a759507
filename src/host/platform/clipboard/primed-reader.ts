/**
 * A clipboard reader that two features share for one Ctrl+V: the file feature reads the clipboard first (a
 * copied file list is its business), and when it is an image or nothing it primes this reader with what it
 * read, so the image feature's read returns that instead of asking the clipboard owner again.
 */
import type { ClipboardBackendName, ClipboardContent, ClipboardReader } from './types.ts';

export interface PrimedReader extends ClipboardReader {
  /** Reads the clipboard through the real backend, never a primed value. */
  readFresh(): Promise<ClipboardContent | null>;
  /** The next readImage() returns (or throws) this instead of reading. */
  prime(result: { value: ClipboardContent | null } | { error: unknown }): void;
}

export function createPrimedReader(select: () => ClipboardReader): PrimedReader {
  let inner: ClipboardReader | undefined;
  const backend = (): ClipboardReader => (inner ??= select());
  let primed: { value: ClipboardContent | null } | { error: unknown } | undefined;
  return {
    get name(): ClipboardBackendName {
      return backend().name;
    },
    get reason(): string {
      return backend().reason;
    },
    readFresh: () => backend().readImage(),
    prime(result) {
      primed = result;
    },
    async readImage() {
      const p = primed;
      primed = undefined;
      if (p === undefined) return backend().readImage();
      if ('error' in p) throw p.error;
      return p.value;
    },
    readPath: () => backend().readPath(),
  };
}
