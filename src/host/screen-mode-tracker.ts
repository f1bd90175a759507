/**
 * Remembers whether the program's output last switched the operator's terminal to the alternate screen,
 * so the restore on exit leaves it only when needed: `CSI ? 1049 l` also restores the saved cursor, which
 * on a terminal that is NOT on the alternate screen jumps the cursor to wherever DECSC last saved it (often
 * the top-left corner), and the exit reason would be printed over the operator's scrollback.
 *
 * Cost: a native `indexOf` for "[?" per output chunk, and a small scan only around each hit; sequences split
 * across chunks are caught by carrying the last few bytes over.
 */
const ESC = 0x1b;
/** Longest sequence we recognise: ESC [ ? 1 0 4 9 h, plus a combined parameter list margin. */
const CARRY_BYTES = 16;
const ALT_MODES = new Set([47, 1047, 1049]);

export class ScreenModeTracker {
  private alt = false;
  private carry: Buffer = Buffer.alloc(0);

  /** True when the last alternate-screen switch seen turned it on. */
  get onAlternateScreen(): boolean {
    return this.alt;
  }

  /** Forgets the state (a reattach repaints and re-sends the modes). */
  reset(): void {
    this.alt = false;
    this.carry = Buffer.alloc(0);
  }

  push(chunk: Buffer): void {
    if (this.carry.length > 0) {
      // Only the seam needs the carried bytes: the rest of the chunk is scanned in place.
      const seam = Buffer.concat([this.carry, chunk.subarray(0, CARRY_BYTES)]);
      this.scan(seam, this.carry.length);
    }
    this.scan(chunk, 0);
    const lastEsc = chunk.lastIndexOf(ESC);
    this.carry = lastEsc >= 0 && chunk.length - lastEsc < CARRY_BYTES ? Buffer.from(chunk.subarray(lastEsc)) : Buffer.alloc(0);
  }

  /** Applies every complete `ESC [ ? Pm h|l` in `buf` that ends at or after `minEnd`. */
  private scan(buf: Buffer, minEnd: number): void {
    let i = buf.indexOf('\x1b[?');
    while (i >= 0) {
      let j = i + 3;
      let value = 0;
      let hasDigit = false;
      const params: number[] = [];
      for (; j < buf.length; j++) {
        const c = buf[j]!;
        if (c >= 0x30 && c <= 0x39) {
          value = value * 10 + (c - 0x30);
          hasDigit = true;
          if (value > 100_000) break;
        } else if (c === 0x3b) {
          params.push(value);
          value = 0;
          hasDigit = false;
        } else break;
      }
      if (j < buf.length && j >= minEnd) {
        const final = buf[j];
        if (final === 0x68 || final === 0x6c) {
          if (hasDigit) params.push(value);
          if (params.some((p) => ALT_MODES.has(p))) this.alt = final === 0x68;
        }
      }
      i = buf.indexOf('\x1b[?', i + 3);
    }
  }
}
