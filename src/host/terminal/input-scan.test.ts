import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { hasCode } from '../../errors.ts';
import { InputScanner, parseKeySpec, scannerOptionsFromEnv, type InputEvent } from './input-scan.ts';

const b = (s: string): Buffer => Buffer.from(s, 'latin1');

/** Feeds `input` split at `cuts`, then flushes, returning the events with adjacent bytes merged. */
function scan(input: Buffer, cuts: number[] = [], opts = {}): InputEvent[] {
  const s = new InputScanner(opts);
  const events: InputEvent[] = [];
  let at = 0;
  for (const c of [...cuts].sort((x, y) => x - y)) {
    events.push(...s.push(input.subarray(at, c)));
    at = c;
  }
  events.push(...s.push(input.subarray(at)));
  events.push(...s.flush({ endPaste: true }));
  return merge(events);
}

function merge(events: InputEvent[]): InputEvent[] {
  const out: InputEvent[] = [];
  for (const e of events) {
    const last = out.at(-1);
    if (e.type === 'bytes' && last?.type === 'bytes') out[out.length - 1] = { type: 'bytes', bytes: Buffer.concat([last.bytes, e.bytes]) };
    else out.push(e);
  }
  return out;
}

const rawOf = (e: InputEvent): Buffer => (e.type === 'bytes' ? e.bytes : e.raw);

test('input scan: Ctrl+V in every encoding is a paste key, also amid other keystrokes', () => {
  for (const [enc, source] of [
    ['\x16', 'c0'],
    ['\x1b[118;5u', 'csi-u'],
    ['\x1b[118;5:1u', 'csi-u'],
    ['\x1b[118:86;5u', 'csi-u'],
    ['\x1b[118;69u', 'csi-u'], // Caps Lock on
    ['\x1b[118;5;22u', 'csi-u'], // kitty with associated text
    ['\x1b[27;5;118~', 'modify-other-keys'],
  ] as const) {
    assert.deepEqual(
      scan(b(`ab${enc}cd`)),
      [
        { type: 'bytes', bytes: b('ab') },
        { type: 'paste-key', source, raw: b(enc) },
        { type: 'bytes', bytes: b('cd') },
      ],
      JSON.stringify(enc),
    );
  }
});

test('input scan: other chords and key releases are not triggers and pass through', () => {
  for (const enc of ['\x1b[118;6u', '\x1b[118;5:3u', '\x1b[118;5:2u', '\x1b[119;5u', '\x1b[27;6;118~', '\x1b\x16', '\x1bv', '\x1b[A', '\x1bOA']) {
    assert.deepEqual(scan(b(enc)), [{ type: 'bytes', bytes: b(enc) }], JSON.stringify(enc));
  }
});

test('input scan: the palette key is Ctrl+\\ by default, in C0, CSI-u and modifyOtherKeys forms', () => {
  assert.deepEqual(scan(b('\x1c')), [{ type: 'palette-key', source: 'c0', raw: b('\x1c') }]);
  assert.deepEqual(scan(b('\x1b[92;5u')), [{ type: 'palette-key', source: 'csi-u', raw: b('\x1b[92;5u') }]);
  assert.deepEqual(scan(b('\x1b[27;5;92~')), [{ type: 'palette-key', source: 'modify-other-keys', raw: b('\x1b[27;5;92~') }]);
});

test('input scan: keys are configurable; none disables the paste key and its empty-paste trigger', () => {
  const opts = scannerOptionsFromEnv({ JACKIN_PASTE_KEY: 'none', JACKIN_PALETTE_KEY: 'ctrl+g' });
  assert.deepEqual(scan(b('\x16\x07\x1c'), [], opts), [
    { type: 'bytes', bytes: b('\x16') },
    { type: 'palette-key', source: 'c0', raw: b('\x07') },
    { type: 'bytes', bytes: b('\x1c') },
  ]);
  assert.deepEqual(scan(b('\x1b[200~\x1b[201~'), [], opts), [{ type: 'paste', content: b(''), raw: b('\x1b[200~\x1b[201~') }]);
  assert.deepEqual(parseKeySpec('Ctrl+V', 'X'), { spec: 'ctrl+v', c0: 0x16, codepoint: 118 });
  for (const bad of ['ctrl+m', 'ctrl+i', 'ctrl+[', 'alt+v', 'v', 'ctrl+F1']) {
    assert.throws(
      () => parseKeySpec(bad, 'JACKIN_PASTE_KEY'),
      (e) => hasCode(e, 'E_BAD_KEY_SPEC'),
      bad,
    );
  }
  assert.throws(
    () => scannerOptionsFromEnv({ JACKIN_PASTE_KEY: 'ctrl+g', JACKIN_PALETTE_KEY: 'ctrl+g' }),
    (e) => hasCode(e, 'E_BAD_KEY_SPEC'),
  );
});

test('input scan: a bracketed paste is one event; a 0x16 inside it is never a trigger; empty paste triggers', () => {
  assert.deepEqual(scan(b('x\x1b[200~a\x16b\x1c\x1b[118;5u\x1b[201~y')), [
    { type: 'bytes', bytes: b('x') },
    { type: 'paste', content: b('a\x16b\x1c\x1b[118;5u'), raw: b('\x1b[200~a\x16b\x1c\x1b[118;5u\x1b[201~') },
    { type: 'bytes', bytes: b('y') },
  ]);
  assert.deepEqual(scan(b('\x1b[200~\x1b[201~')), [{ type: 'paste-key', source: 'empty-paste', raw: b('\x1b[200~\x1b[201~') }]);
});

test('input scan: a paste over the cap streams through as bytes, end marker included', () => {
  const input = b(`\x1b[200~${'z'.repeat(50)}\x16\x1b[201~\x16`);
  assert.deepEqual(scan(input, [10, 30], { maxPasteBytes: 20 }), [
    // The 0x16 in the same read as the paste's end is a typed byte, never a trigger.
    { type: 'bytes', bytes: b(`\x1b[200~${'z'.repeat(50)}\x16\x1b[201~\x16`) },
  ]);
  assert.deepEqual(scan(input, [10, 30, input.length - 1], { maxPasteBytes: 20 }).at(-1), { type: 'paste-key', source: 'c0', raw: b('\x16') });
});

test('input scan: SGR mouse reports become mouse events with modifiers', () => {
  assert.deepEqual(scan(b('\x1b[<16;12;5M\x1b[<0;12;5m\x1b[<36;1;2M')), [
    { type: 'mouse', button: 0, x: 12, y: 5, press: true, motion: false, shift: false, alt: false, ctrl: true, raw: b('\x1b[<16;12;5M') },
    { type: 'mouse', button: 0, x: 12, y: 5, press: false, motion: false, shift: false, alt: false, ctrl: false, raw: b('\x1b[<0;12;5m') },
    { type: 'mouse', button: 0, x: 1, y: 2, press: true, motion: true, shift: true, alt: false, ctrl: false, raw: b('\x1b[<36;1;2M') },
  ]);
});

test('input scan: a partial sequence is held until complete, and a dangling ESC is released by flush', () => {
  const s = new InputScanner();
  assert.deepEqual(s.push(b('a\x1b[118')), [{ type: 'bytes', bytes: b('a') }]);
  assert.equal(s.pending, true);
  assert.deepEqual(s.push(b(';5u')), [{ type: 'paste-key', source: 'csi-u', raw: b('\x1b[118;5u') }]);
  assert.deepEqual(s.push(b('\x1b')), []);
  assert.deepEqual(s.flush(), [{ type: 'bytes', bytes: b('\x1b') }]);
  assert.equal(s.pending, false);
  // Inside a paste, flush() waits; flush({endPaste}) gives the bytes back unchanged.
  assert.deepEqual(s.push(b('\x1b[200~/tmp/a\x1b[20')), []);
  assert.deepEqual(s.flush(), []);
  assert.deepEqual(s.flush({ endPaste: true }), [{ type: 'bytes', bytes: b('\x1b[200~/tmp/a\x1b[20') }]);
});

// Bytes likely to form sequences, so random inputs exercise the tokenizer's edges.
const ALPHABET = [0x1b, 0x5b, 0x3c, 0x3b, 0x3a, 0x7e, 0x75, 0x4d, 0x6d, 0x31, 0x32, 0x30, 0x35, 0x37, 0x38, 0x39, 0x16, 0x1c, 0x61, 0x0d, 0xff, 0x00];
const input = fc.oneof(
  fc.uint8Array({ maxLength: 200 }),
  fc.array(fc.constantFrom(...ALPHABET), { maxLength: 200 }).map((a) => Uint8Array.from(a)),
  fc
    .array(
      fc.constantFrom(
        '\x1b[200~',
        '\x1b[201~',
        '\x1b[118;5u',
        '\x1b[<0;3;4M',
        '\x16',
        'ab',
        '\x1b',
        '\x1b[',
        '1;',
        '~',
        '\x1b[O',
        '\x1b]',
        '11;',
        '52;',
        '\x07',
        '\x1bP',
        '>|',
        '1$r',
        '\x1b\\',
      ),
      { maxLength: 30 },
    )
    .map((a) => Uint8Array.from(Buffer.from(a.join(''), 'latin1'))),
);
const withCuts = input.chain((u) => fc.tuple(fc.constant(Buffer.from(u)), fc.array(fc.integer({ min: 0, max: u.length }), { maxLength: 8 })));

test('input scan (property): the raw bytes of all events are the input, byte for byte, for any split', () => {
  fc.assert(
    fc.property(withCuts, ([buf, cuts]) => {
      assert.ok(Buffer.concat(scan(buf, cuts).map(rawOf)).equals(buf));
    }),
    { numRuns: 3000 },
  );
});

test('input scan: a reply split inside its beginning (`ESC ]`, `ESC ] 1`, `ESC P >`) is still one reply; Alt+] alone is a key', () => {
  for (const reply of ['\x1b]11;rgb:0000/0000/0000\x07', '\x1b]52;c;c2VjcmV0\x1b\\', '\x1bP>|xterm(390)\x1b\\']) {
    for (const cut of [2, 3, 4]) {
      const events = scan(b(reply), [cut]);
      assert.deepEqual(
        events.map((e) => e.type),
        ['reply'],
        `${JSON.stringify(reply)} cut at ${cut}: ${JSON.stringify(events)}`,
      );
    }
  }
  const s = new InputScanner();
  assert.deepEqual(s.push(b('\x1b]')), [], 'waits for what follows, as for a lone Escape');
  assert.equal(s.holdsReply, false, "released by the Escape key's short flush, not the reply wait");
  assert.deepEqual(s.flush(), [{ type: 'bytes', bytes: b('\x1b]') }]);
  assert.deepEqual(s.push(b('\x1b]x')), [{ type: 'bytes', bytes: b('\x1b]x') }], 'followed by a key that no reply begins with: keys at once');
});

/**
 * A whole string sequence (OSC, DCS, APC, PM, SOS) that does not begin as a reply does: in one read it is
 * taken as a reply, split across reads its bytes are keys (Alt+] and what follows), by design: only what
 * begins as a reply is held for its rest (input-scan.ts).
 */
const notBeginningAsReply = /\x1b(?:\](?!\d{1,5};)|P(?!>\||[01][$+]r)|[_^X])[^\x1b]*?(?:\x07|\x9c|\x1b\\)/;

test('input scan (property): the events do not depend on how the input was split (no paste end in it)', () => {
  fc.assert(
    fc.property(
      withCuts.filter(([buf]) => !buf.includes('\x1b[201~') && !notBeginningAsReply.test(buf.toString('latin1'))),
      ([buf, cuts]) => {
        assert.deepEqual(scan(buf, cuts), scan(buf));
      },
    ),
    { numRuns: 3000 },
  );
});

test('input scan (property): input with no trigger comes out as bytes events only, equal to the input', () => {
  const noTrigger = withCuts.filter(([buf]) => {
    const s = buf.toString('latin1');
    // Nor a terminal reply: a CSI in a reply's form (focus, DA, DECRQM, status, window and position reports,
    // kitty flags) or any string sequence (OSC, DCS, APC, PM, SOS).
    if (/\x1b\[[\x30-\x3f]*[\x20-\x2f]*[IORcntuy]|\x1b[\]P_^X]/.test(s)) return false;
    // Nor a mouse report (SGR, legacy `ESC [ M` and urxvt's `CSI Cb;Cx;Cy M`).
    if (/\x1b\[M|\x1b\[\d+;\d+;\d+M/.test(s)) return false;
    return !/[\x16\x1c]|\x1b\[200~|\x1b\[<|\x1b\[(118|86|92)[;:u]|\x1b\[27;\d+;(118|86|92)~/.test(s);
  });
  fc.assert(
    fc.property(noTrigger, ([buf, cuts]) => {
      const events = scan(buf, cuts);
      assert.ok(events.every((e) => e.type === 'bytes'));
      assert.ok(Buffer.concat(events.map(rawOf)).equals(buf));
    }),
    { numRuns: 3000 },
  );
});

test("input scan: keys in the same read right after a paste's end are typed bytes, never triggers", () => {
  // A clipboard seeded with text, an end marker, then the palette key and `u` (open offered link).
  const s = new InputScanner();
  const ev = s.push(b('\x1b[200~see docs\x1b[201~\x1cu\x16\x1b[92;5u\x1b[<16;3;4M\x1b[200~/tmp/x.png\x1b[201~'));
  assert.deepEqual(ev, [
    { type: 'paste', content: b('see docs'), raw: b('\x1b[200~see docs\x1b[201~') },
    { type: 'bytes', bytes: b('\x1cu\x16\x1b[92;5u\x1b[<16;3;4M\x1b[200~/tmp/x.png\x1b[201~') },
  ]);
  // The operator's own key press, in a later read, is a trigger again.
  assert.deepEqual(s.push(b('\x1c')), [{ type: 'palette-key', source: 'c0', raw: b('\x1c') }]);
});

test("input scan (property): no trigger follows a paste's end within one read", () => {
  fc.assert(
    fc.property(withCuts, ([buf, cuts]) => {
      const s = new InputScanner();
      let at = 0;
      for (const c of [...cuts, buf.length].sort((x, y) => x - y)) {
        const events = s.push(buf.subarray(at, c));
        at = c;
        const end = events.findIndex((e) => e.type === 'paste' || (e.type === 'paste-key' && e.source === 'empty-paste'));
        if (end >= 0)
          assert.ok(
            events.slice(end + 1).every((e) => e.type === 'bytes'),
            JSON.stringify(events),
          );
      }
    }),
    { numRuns: 3000 },
  );
});

test('ESC right before the palette key is passed on, and the palette key still counts', () => {
  const s = new InputScanner();
  const ev = s.push(Buffer.from([0x1b, 0x1c, 0x1c, 0x61]));
  assert.deepEqual(
    ev.map((e) => (e.type === 'bytes' ? `bytes:${e.bytes.toString('hex')}` : e.type)),
    ['bytes:1b', 'palette-key', 'palette-key', 'bytes:61'],
  );
});
