/**
 * Decodes operator keystrokes while the host itself has the keyboard (the palette and its prompt). Only the
 * keys the palette understands are named; everything else is `other`. Input is the raw bytes of one read,
 * already separated from paste and mouse events by the input scanner.
 */
export type Key =
  | { name: 'char'; text: string }
  | {
      name:
        | 'enter'
        | 'escape'
        | 'backspace'
        | 'delete'
        | 'up'
        | 'down'
        | 'left'
        | 'right'
        | 'home'
        | 'end'
        | 'tab'
        | 'ctrl-a'
        | 'ctrl-e'
        | 'ctrl-u'
        | 'ctrl-w'
        | 'ctrl-k'
        | 'ctrl-c';
    }
  | { name: 'ctrl'; byte: number }
  | { name: 'other'; bytes: Buffer };

const CSI_FINAL: Record<string, Key['name']> = {
  A: 'up',
  B: 'down',
  C: 'right',
  D: 'left',
  H: 'home',
  F: 'end',
};
const TILDE: Record<string, Key['name']> = { '1': 'home', '7': 'home', '4': 'end', '8': 'end', '3': 'delete' };
const CTRL: Record<number, Key['name']> = {
  0x01: 'ctrl-a',
  0x05: 'ctrl-e',
  0x15: 'ctrl-u',
  0x17: 'ctrl-w',
  0x0b: 'ctrl-k',
  0x03: 'ctrl-c',
  0x09: 'tab',
  0x0d: 'enter',
  0x0a: 'enter',
  0x7f: 'backspace',
  0x08: 'backspace',
};

function named(name: Key['name']): Key {
  return { name } as Key;
}

export function decodeKeys(buf: Buffer): Key[] {
  const keys: Key[] = [];
  let i = 0;
  while (i < buf.length) {
    const b = buf[i]!;
    if (b === 0x1b) {
      const next = buf[i + 1];
      if (next === undefined) {
        keys.push(named('escape'));
        i += 1;
        continue;
      }
      if (next === 0x5b || next === 0x4f) {
        // CSI or SS3: parameters 0x30-0x3F, intermediates 0x20-0x2F, final 0x40-0x7E.
        let j = i + 2;
        while (j < buf.length && buf[j]! >= 0x20 && buf[j]! <= 0x3f) j++;
        const final = buf[j];
        if (final === undefined) {
          keys.push({ name: 'other', bytes: buf.subarray(i) });
          break;
        }
        const params = buf.subarray(i + 2, j).toString('latin1');
        const f = String.fromCharCode(final);
        let k: Key['name'] | undefined;
        if (f === '~') k = TILDE[params.split(';')[0] ?? ''];
        else if (params === '' || params === '1' || params.startsWith('1;')) k = CSI_FINAL[f];
        keys.push(k ? named(k) : { name: 'other', bytes: buf.subarray(i, j + 1) });
        i = j + 1;
        continue;
      }
      // ESC followed by something else: a lone Escape, then the rest as keys.
      keys.push(named('escape'));
      i += 1;
      continue;
    }
    const ctrl = CTRL[b];
    if (ctrl) {
      keys.push(named(ctrl));
      i += 1;
      continue;
    }
    if (b < 0x20) {
      keys.push({ name: 'ctrl', byte: b });
      i += 1;
      continue;
    }
    // One UTF-8 character.
    const len = b < 0x80 ? 1 : b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
    const text = buf.subarray(i, i + len).toString('utf8');
    keys.push(text === '\ufffd' ? { name: 'other', bytes: buf.subarray(i, i + len) } : { name: 'char', text });
    i += len;
  }
  return keys;
}
