/**
 * Decodes operator keystrokes while the host itself has the keyboard (the palette and its prompt). Only the
 * keys the palette understands are named; everything else is `other`. Input is the raw bytes of one read,
 * already separated from paste and mouse events by the input scanner.
 *
 * The keyboard protocols a program may switch on are decoded too, since they stay on while jackin's UI is up:
 * the kitty keyboard protocol (`CSI code[:shifted[:base]] ; mods[:event] ; text u`, any of flags 1-31: Esc
 * is `CSI 27 u` from flag 1, every key a CSI u at flag 8, releases at flag 2, which are no keys) and xterm's
 * modifyOtherKeys 1/2 (`CSI 27 ; mods ; code ~`). Key releases and lone modifier keys give no key at all.
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

// Modifier bits (value = 1 + bits): shift 1, alt 2, ctrl 4, super 8, hyper 16, meta 32; Caps and Num Lock 64, 128.
const SHIFT = 1;
const CTRL_BIT = 4;
const LOCKS = 64 | 128;
/** Kitty's codes for keys that are no characters: the keypad's Enter, and modifier and lock keys alone. */
const KP_ENTER = 57414;
const isLoneModifier = (code: number): boolean => (code >= 57441 && code <= 57452) || (code >= 57358 && code <= 57360);

/** `mods[:event]`: the modifier bits without the locks, and whether it is a release (event 3). */
function modsOf(field: string | undefined): { mods: number; release: boolean } {
  const [m, ev] = (field ?? '').split(':');
  const mods = m === undefined || m === '' ? 0 : Math.max(0, Number(m) - 1) & ~LOCKS;
  return { mods, release: ev === '3' };
}

/**
 * A key reported by code point (kitty CSI u, modifyOtherKeys): null for a release or a lone modifier,
 * which are no keys. `text` is the kitty text field (code points joined by `:`), `shifted` the shifted key.
 */
function codeKey(code: number, mods: number, shifted: number | undefined, text: string | undefined, raw: Buffer): Key | null {
  if (isLoneModifier(code)) return null;
  if (mods === CTRL_BIT) {
    if (code >= 0x61 && code <= 0x7a) {
      const byte = code & 0x1f;
      return CTRL[byte] ? named(CTRL[byte]!) : { name: 'ctrl', byte };
    }
    return { name: 'other', bytes: raw };
  }
  if (mods !== 0 && mods !== SHIFT) return { name: 'other', bytes: raw };
  switch (code) {
    case 27:
    case 13:
    case KP_ENTER:
    case 9:
      // Shift+Enter is not Enter (a prompt must not take it for one), nor Shift+Esc Esc.
      if (mods !== 0) return { name: 'other', bytes: raw };
      return named(code === 27 ? 'escape' : code === 9 ? 'tab' : 'enter');
    case 127:
    case 8:
      return named('backspace');
  }
  if (code < 0x20 || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff) || code >= 57344) return { name: 'other', bytes: raw };
  let t: string;
  if (text !== undefined && text !== '')
    t = String.fromCodePoint(
      ...text
        .split(':')
        .map(Number)
        .filter((n) => n >= 0x20 && n <= 0x10ffff && (n < 0xd800 || n > 0xdfff)),
    );
  else if (mods === SHIFT && shifted !== undefined) t = String.fromCodePoint(shifted);
  else if (mods === SHIFT) t = String.fromCodePoint(code).toUpperCase();
  else t = String.fromCodePoint(code);
  return t === '' ? { name: 'other', bytes: raw } : { name: 'char', text: t };
}

/** A CSI key with parameters `params` and final `f`: a Key, null for no key (a release), undefined when unknown. */
function csiKey(params: string, f: string, raw: Buffer): Key | null | undefined {
  const fields = params.split(';');
  if (f === 'u' && /^\d+(:\d*){0,2}(;[\d:]*){0,2}$/.test(params)) {
    const [code, shifted] = fields[0]!.split(':').map((x) => (x === '' ? undefined : Number(x)));
    const { mods, release } = modsOf(fields[1]);
    return release ? null : codeKey(code!, mods, shifted, fields[2], raw);
  }
  if (f === '~' && /^27;\d+;\d+$/.test(params)) {
    const { mods } = modsOf(fields[1]);
    return codeKey(Number(fields[2]), mods, undefined, undefined, raw);
  }
  if (modsOf(fields[1]).release) return null;
  if (f === '~') return TILDE[fields[0] ?? ''] ? named(TILDE[fields[0]!]!) : undefined;
  if (params === '' || params === '1' || params.startsWith('1;')) return CSI_FINAL[f] ? named(CSI_FINAL[f]!) : undefined;
  return undefined;
}

/** The keys in `buf`, each with the offset just past its bytes (a key that is none, a release, has none). */
export function decodeKeyEnds(buf: Buffer): Array<{ key: Key; end: number }> {
  const keys: Array<{ key: Key; end: number }> = [];
  const push = (key: Key, end: number): void => void keys.push({ key, end });
  let i = 0;
  while (i < buf.length) {
    const b = buf[i]!;
    if (b === 0x1b) {
      const next = buf[i + 1];
      if (next === undefined) {
        push(named('escape'), i + 1);
        i += 1;
        continue;
      }
      if (next === 0x5b || next === 0x4f) {
        // CSI or SS3: parameters 0x30-0x3F, intermediates 0x20-0x2F, final 0x40-0x7E.
        let j = i + 2;
        while (j < buf.length && buf[j]! >= 0x20 && buf[j]! <= 0x3f) j++;
        const final = buf[j];
        if (final === undefined) {
          push({ name: 'other', bytes: buf.subarray(i) }, buf.length);
          break;
        }
        const params = buf.subarray(i + 2, j).toString('latin1');
        const f = String.fromCharCode(final);
        const raw = buf.subarray(i, j + 1);
        const k = next === 0x5b ? csiKey(params, f, raw) : CSI_FINAL[f] !== undefined && params === '' ? named(CSI_FINAL[f]!) : undefined;
        if (k !== null) push(k ?? { name: 'other', bytes: raw }, j + 1);
        i = j + 1;
        continue;
      }
      // ESC followed by something else: a lone Escape, then the rest as keys.
      push(named('escape'), i + 1);
      i += 1;
      continue;
    }
    const ctrl = CTRL[b];
    if (ctrl) {
      push(named(ctrl), i + 1);
      i += 1;
      continue;
    }
    if (b < 0x20) {
      push({ name: 'ctrl', byte: b }, i + 1);
      i += 1;
      continue;
    }
    // One UTF-8 character.
    const len = b < 0x80 ? 1 : b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
    const text = buf.subarray(i, i + len).toString('utf8');
    push(text === '\ufffd' ? { name: 'other', bytes: buf.subarray(i, i + len) } : { name: 'char', text }, Math.min(buf.length, i + len));
    i += len;
  }
  return keys;
}

export function decodeKeys(buf: Buffer): Key[] {
  return decodeKeyEnds(buf).map((k) => k.key);
}
