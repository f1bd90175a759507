/**
 * The operator's trigger keys: `ctrl+<key>` chords as JACKIN_PASTE_KEY and JACKIN_PALETTE_KEY name them,
 * and the three encodings a terminal may send one in (a C0 byte, CSI-u / kitty keyboard, xterm
 * modifyOtherKeys). Pure; the input scanner matches keys with it.
 */
import { JackinError } from '../../errors.ts';
import { isOffWord } from '../../policy/env-switch.ts';

export type KeyEncoding = 'c0' | 'csi-u' | 'modify-other-keys';

/** A `ctrl+<key>` chord and the encodings a terminal may send for it. */
export interface KeySpec {
  spec: string;
  /** The legacy C0 byte (ctrl+v → 0x16). */
  c0: number;
  /** Unicode code point of the unshifted key, as CSI-u and modifyOtherKeys report it (v → 118). */
  codepoint: number;
}

export const DEFAULT_PASTE_KEY = 'ctrl+v';
export const DEFAULT_PALETTE_KEY = 'ctrl+\\';

// Terminals send these C0 bytes for Enter, Tab, Backspace and Esc too: as a trigger they would break typing.
const RESERVED_C0: ReadonlyMap<number, string> = new Map([
  [0x08, 'Backspace'],
  [0x09, 'Tab'],
  [0x0a, 'Enter'],
  [0x0d, 'Enter'],
  [0x1b, 'Esc'],
]);
const CTRL_PUNCT: ReadonlyMap<string, number> = new Map([
  ['@', 0x00],
  ['space', 0x00],
  ['\\', 0x1c],
  [']', 0x1d],
  ['^', 0x1e],
  ['_', 0x1f],
]);

/**
 * Parses `ctrl+v`, `ctrl+\`, `ctrl+g`... (case-insensitive); `none` (or another off-word, env-switch.ts)
 * gives null. Throws E_BAD_KEY_SPEC for anything else, naming `source` (the variable the spec came from).
 */
export function parseKeySpec(spec: string, source: string): KeySpec | null {
  const s = spec.trim().toLowerCase();
  if (isOffWord(s)) return null;
  const bad = (why: string): never => {
    throw new JackinError('E_BAD_KEY_SPEC', `${source}=${JSON.stringify(spec)} ${why}; use ctrl+<letter>, ctrl+\\, ctrl+], ctrl+^, ctrl+_ or none`);
  };
  const m = /^(?:ctrl|c|control)[+-](.+)$/.exec(s);
  if (m === null) return bad('is not a ctrl+<key> chord');
  const key = m[1]!;
  let c0: number;
  let codepoint: number;
  if (/^[a-z]$/.test(key)) {
    codepoint = key.charCodeAt(0);
    c0 = codepoint & 0x1f;
  } else if (CTRL_PUNCT.has(key)) {
    c0 = CTRL_PUNCT.get(key)!;
    codepoint = key === 'space' ? 0x20 : key.charCodeAt(0);
  } else {
    return bad(`has an unsupported key ${JSON.stringify(key)}`);
  }
  const reserved = RESERVED_C0.get(c0);
  if (reserved !== undefined) bad(`sends the same byte as ${reserved}`);
  return { spec: `ctrl+${key}`, c0, codepoint };
}

export interface KeyReport {
  codepoint: number;
  ctrlOnly: boolean;
  press: boolean;
  encoding: KeyEncoding;
}

// Modifier bits of CSI-u / modifyOtherKeys (value = 1 + bits). Caps Lock and Num Lock do not change the chord.
const MOD_CTRL = 4;
const MOD_LOCKS = 64 | 128;

/** `CSI cp[:shifted[:base]] ; mods[:event] [; text] u` (fixterms / kitty keyboard protocol). */
export function parseCsiU(params: string): KeyReport | null {
  const m = /^(\d+)(?::\d*)*(?:;(\d*)(?::(\d+))?(?:;[\d:]*)?)?$/.exec(params);
  if (m === null) return null;
  const mods = m[2] === undefined || m[2] === '' ? 1 : Number(m[2]);
  const event = m[3] === undefined ? 1 : Number(m[3]);
  return { codepoint: Number(m[1]), ctrlOnly: ((mods - 1) & ~MOD_LOCKS) === MOD_CTRL, press: event === 1, encoding: 'csi-u' };
}

/** xterm modifyOtherKeys: `CSI 27 ; mods ; cp ~`. */
export function parseModifyOtherKeys(params: string): KeyReport | null {
  const m = /^27;(\d+);(\d+)$/.exec(params);
  if (m === null) return null;
  return { codepoint: Number(m[2]), ctrlOnly: ((Number(m[1]) - 1) & ~MOD_LOCKS) === MOD_CTRL, press: true, encoding: 'modify-other-keys' };
}

/** Letters match in either case (some terminals report the shifted letter under Caps Lock). */
export function matchesKey(k: KeySpec, codepoint: number): boolean {
  if (codepoint === k.codepoint) return true;
  return k.codepoint >= 0x61 && k.codepoint <= 0x7a && codepoint === k.codepoint - 0x20;
}
