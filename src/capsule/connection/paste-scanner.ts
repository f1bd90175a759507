/**
 * The text the operator pasted last, as the capsule sees it in the host's Input: what lies between the
 * bracketed-paste markers `ESC[200~` and `ESC[201~` (the host adds them only when the program asked for
 * bracketed paste, `?2004h`; without them a paste cannot be told from typing and nothing is remembered).
 * The scanner keeps its state across Input frames, so a paste or a marker split over frames is found the
 * same. Bounded: a paste over `maxBytes` (or not UTF-8) is dropped, and forgets the one before it.
 */

const START = Buffer.from('\x1b[200~', 'latin1');
const END = Buffer.from('\x1b[201~', 'latin1');
const ESC = 0x1b;

/** The copy-offer cap (MAX_COPY_TEXT_BYTES): the clipboard holds no more in either direction. */
export const MAX_PASTED_TEXT_BYTES = 1024 * 1024;

export class PasteScanner {
  readonly #maxBytes: number;
  /** Bytes of the marker being looked for (START outside a paste, END inside) matched so far. */
  #matched = 0;
  #inside = false;
  #parts: Buffer[] = [];
  #size = 0;
  #overflow = false;
  #last: string | null = null;

  constructor(opts: { maxBytes?: number } = {}) {
    this.#maxBytes = opts.maxBytes ?? MAX_PASTED_TEXT_BYTES;
  }

  /** The text between the brackets of the last complete paste, or null. */
  get lastPasted(): string | null {
    return this.#last;
  }

  /** Scans one Input frame's bytes (never changes them). */
  push(bytes: Buffer): void {
    let i = 0;
    while (i < bytes.length) {
      const marker = this.#inside ? END : START;
      if (this.#matched === 0) {
        const esc = bytes.indexOf(ESC, i);
        if (esc === -1) {
          if (this.#inside) this.#append(bytes.subarray(i));
          return;
        }
        if (this.#inside) this.#append(bytes.subarray(i, esc));
        this.#matched = 1;
        i = esc + 1;
        continue;
      }
      const b = bytes[i]!;
      if (b === marker[this.#matched]) {
        this.#matched++;
        i++;
        if (this.#matched === marker.length) {
          this.#matched = 0;
          if (this.#inside) this.#finish();
          else this.#begin();
        }
        continue;
      }
      // Not the marker: what was held back is text (inside a paste); this byte is looked at afresh.
      if (this.#inside) this.#append(marker.subarray(0, this.#matched));
      this.#matched = 0;
    }
  }

  #begin(): void {
    this.#inside = true;
    this.#parts = [];
    this.#size = 0;
    this.#overflow = false;
  }

  #append(b: Buffer): void {
    if (b.length === 0 || this.#overflow) return;
    if (this.#size + b.length > this.#maxBytes) {
      this.#overflow = true;
      this.#parts = [];
      return;
    }
    this.#parts.push(Buffer.from(b));
    this.#size += b.length;
  }

  #finish(): void {
    this.#inside = false;
    const bytes = this.#overflow ? null : Buffer.concat(this.#parts, this.#size);
    this.#parts = [];
    this.#size = 0;
    this.#last = bytes === null ? null : decodeUtf8(bytes);
  }
}

function decodeUtf8(bytes: Buffer): string | null {
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    return null;
  }
}
