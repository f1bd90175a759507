/**
 * An independent reference for the host's terminal filter, written differently on purpose: it works on a
 * whole byte string with regular expressions (no streaming state machine, no shared code with
 * src/host/terminal/terminal-filter/) and restates the policy table of docs/terminal-policy.md in its own form.
 * `referenceViolations` checks filtered output: every control left in it must be one the policy allows,
 * well formed, in 7-bit form, with no C1 control outside a character. Also: a catalogue of stream tokens,
 * each labelled with what the policy must do with it, for property, differential and fuzz tests.
 */

/**
 * Valid UTF-8 characters other than U+0080-U+009F, then the truncated prefixes of longer ones (a UTF-8
 * terminal replaces such a prefix, continuation bytes included, by one U+FFFD), as latin1 text.
 */
const UTF8_CHAR = new RegExp(
  [
    '\\xc2[\\xa0-\\xbf]|[\\xc3-\\xdf][\\x80-\\xbf]|\\xe0[\\xa0-\\xbf][\\x80-\\xbf]|[\\xe1-\\xec\\xee\\xef][\\x80-\\xbf]{2}|\\xed[\\x80-\\x9f][\\x80-\\xbf]',
    '\\xf0[\\x90-\\xbf][\\x80-\\xbf]{2}|[\\xf1-\\xf3][\\x80-\\xbf]{3}|\\xf4[\\x80-\\x8f][\\x80-\\xbf]{2}',
    '\\xe0[\\xa0-\\xbf]|[\\xe1-\\xec\\xee\\xef][\\x80-\\xbf]|\\xed[\\x80-\\x9f]|\\xf0[\\x90-\\xbf][\\x80-\\xbf]?|[\\xf1-\\xf3][\\x80-\\xbf]{1,2}|\\xf4[\\x80-\\x8f][\\x80-\\xbf]?',
  ].join('|'),
  'g',
);

/** 7-bit control sequences and strings as they may appear in filtered output. */
const CONTROL = /\x1b\[[\x30-\x3f]*[\x20-\x2f]*[\x40-\x7e]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[P_^X][\s\S]*?\x1b\\|\x1b[\x20-\x2f]*[\x30-\x7e]/g;

const DEC_ALLOWED = new Set([1, 5, 6, 7, 12, 25, 45, 66, 69, 1048, 2026, 47, 1047, 1049, 9, 1000, 1002, 1003, 1006, 2004, 1004]);
const OSC_ALLOWED = new Set([0, 1, 2, 4, 8, 9, 10, 11, 12, 99, 104, 110, 111, 112, 777]);

function csiAllowed(seq: string): boolean {
  const m = /^\x1b\[([<=>?]?)([\d;:]*)([\x20-\x2f]*)([\x40-\x7e])$/.exec(seq);
  if (m === null) return false;
  const [, marker, p, inter, f] = m as unknown as [string, string, string, string, string];
  if (inter !== '')
    return (
      (marker === '' && ((inter === ' ' && f === 'q') || (inter === '!' && f === 'p' && p === ''))) ||
      (inter === '$' && f === 'p' && (marker === '' || marker === '?'))
    );
  if (marker === '') {
    if ('ABCDEFGHIJKLMPSXZ@`abdefmrsu'.includes(f)) return true;
    if (f === 'T') return !p.includes(';');
    if (f === 'h' || f === 'l') return p === '4';
    if (f === 'n') return p === '5' || p === '6';
    if (f === 'c') return p === '' || p === '0';
    return f === 't' && p === '22;0'; // the host saves the operator's title before the program's first one
  }
  if (marker === '?') {
    if (f === 'h' || f === 'l') return p.split(';').every((x) => DEC_ALLOWED.has(Number(x)) && x !== '');
    if (f === 'J' || f === 'K') return true;
    if (f === 'n') return p === '6';
    return f === 'u' && p === '';
  }
  if (marker === '>') {
    if (f === 'c' || f === 'q') return p === '' || p === '0';
    if (f === 'm') return /^4(;\d)?$/.test(p);
    return f === 'u';
  }
  return f === 'u';
}

function oscAllowed(seq: string): boolean {
  const body = seq.replace(/^\x1b\]/, '').replace(/(\x07|\x1b\\)$/, '');
  const [num, ...rest] = body.split(';');
  if (!/^\d+$/.test(num ?? '') || !OSC_ALLOWED.has(Number(num))) return false;
  if (/[\x00-\x1f\x7f]/.test(body)) return false;
  if (num === '8') {
    const target = rest.slice(1).join(';');
    return target === '' || /^(https?|mailto):/.test(target);
  }
  return true;
}

function escAllowed(seq: string): boolean {
  const inter = seq.slice(1, -1);
  const f = seq[seq.length - 1]!;
  if (inter === '') return '78=>DEMNOno'.includes(f);
  if (inter.length !== 1) return false;
  if ('()*+-./'.includes(inter)) return true;
  return inter === '#' && '345678'.includes(f);
}

/** What is wrong with filtered output, in words (empty: nothing). */
export function referenceViolations(output: Buffer): string[] {
  const s = output.toString('latin1');
  const problems: string[] = [];
  const rest = s.replace(CONTROL, (seq) => {
    const ok = seq[1] === '[' ? csiAllowed(seq) : seq[1] === ']' ? oscAllowed(seq) : 'P_^X'.includes(seq[1]!) ? false : escAllowed(seq);
    if (!ok) problems.push(`control not allowed: ${JSON.stringify(seq.slice(0, 80))}`);
    return '';
  });
  if (rest.includes('\x1b'))
    problems.push(`ESC outside a complete sequence near ${JSON.stringify(rest.slice(rest.indexOf('\x1b'), rest.indexOf('\x1b') + 20))}`);
  if (rest.includes('\x05')) problems.push('ENQ in the output');
  const outsideChars = rest.replace(UTF8_CHAR, '');
  if (/[\x80-\x9f]/.test(outsideChars)) problems.push('a C1 control outside a character');
  return problems;
}

/** The text of filtered output: everything but its control sequences and strings. */
export function referenceText(output: Buffer): string {
  return output.toString('latin1').replace(CONTROL, '');
}

/** One piece of a stream: its bytes (latin1), and what the policy must do with it. */
export interface StreamToken {
  readonly s: string;
  /** text: passes as it is; keep: passes, in the 7-bit form `out`; drop: leaves nothing; other: rewritten or composed. */
  readonly kind: 'text' | 'keep' | 'drop' | 'other';
  readonly out?: string;
}

const keep = (s: string, out = s): StreamToken => ({ s, kind: 'keep', out });
const drop = (s: string): StreamToken => ({ s, kind: 'drop' });
const other = (s: string): StreamToken => ({ s, kind: 'other' });

export const TOKENS: readonly StreamToken[] = [
  keep('\x1b[31m'),
  keep('\x1b[0m'),
  keep('\x1b[38;2;10;20;30m'),
  keep('\x1b[H'),
  keep('\x1b[2J'),
  keep('\x1b[5;10r'),
  keep('\x1b[?25l'),
  keep('\x1b[6n'),
  keep('\x1b[c'),
  keep('\x1b[>c'),
  keep('\x1b[?2004$p'),
  keep('\x1b[2 q'),
  keep('\x1b7'),
  keep('\x1b8'),
  keep('\x1b(0'),
  keep('\x1b[?1049h'),
  keep('\x1b[?1049l'),
  keep('\x1b[>1u'),
  keep('\x1b[4h'),
  keep('\x9b32m', '\x1b[32m'),
  keep('\xc2\x9b33m', '\x1b[33m'),
  keep('\x9bK', '\x1b[K'),
  keep('\x8d', '\x1bM'),
  drop('\x1b[21t'),
  drop('\x1b[8;1;1t'),
  drop('\x1b]52;c;YWJj\x07'),
  drop('\x1b]52;c;?\x1b\\'),
  drop('\x1bP$qm\x1b\\'),
  drop('\x1bPtmux;\x1b\x1b]52;c;YQ==\x07\x1b\\'),
  drop('\x1b_Gf=100;AAAA\x1b\\'),
  drop('\x1b^pm\x1b\\'),
  drop('\x1bXsos\x1b\\'),
  drop('\x1b]1337;File=x:QQ==\x07'),
  drop('\x1b]5522;type=read\x07'),
  drop('\x1b]5113;ac=send\x1b\\'),
  drop('\x1b]50;?\x07'),
  drop('\x1b]46;/tmp/x\x07'),
  drop('\x1b[?1016h'),
  drop('\x1b[?2048h'),
  drop('\x1b%@'),
  drop('\x1b G'),
  drop('\x05'),
  drop('\x9d52;c;YQ==\x9c'),
  drop('\xc2\x90+q544e\xc2\x9c'),
  drop('\x9f Gx \x9c'),
  other('\x1b]0;title\x07'),
  other('\x1b]2;t\xe2\x80\xaei\x1b\\'),
  other('\x1b]8;;https://a.example/x\x07'),
  other('\x1b]8;;file:///etc/passwd\x07'),
  other('\x1b]8;;\x07'),
  other('\x1b[?1000h'),
  other('\x1b[?1000l'),
  other('\x1b[?2004l'),
  other('\x1b[?1006h'),
  other('\x1b[?1000;25h'),
  other('\x1b[<u'),
  other('\x1bc'),
  other('\x1b]9;note\x07'),
  other('\x1b]4;1;?\x07'),
  other('\x1b]11;rgb:00/00/00\x1b\\'),
];

/** Characters for text tokens (their UTF-8 bytes as latin1): ASCII, C0 formatting, and characters whose
 * encodings hold bytes 0x80-0x9F as continuation bytes (U+20AC, U+1F600, U+2500). */
export const TEXT_CHARS: readonly string[] = ['a', 'Z', ' ', '0', ';', '[', '\\', '\r', '\n', '\t', '\x08', '\x07', 'é', '中', '€', '😀', '─'].map((c) =>
  Buffer.from(c, 'utf8').toString('latin1'),
);
