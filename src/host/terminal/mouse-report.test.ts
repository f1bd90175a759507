/**
 * Mouse reports in every encoding are one unit, never keys; the program gets the encoding it asked for.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { InputScanner, type InputEvent } from './input-scan.ts';
import { encodeForProgram, LEGACY_MAX_COORD, mouseCode, reportFromCode, type MouseReport } from './mouse-report.ts';
import { composeModes, initialProgramModes, NO_HOST_NEEDS, type MouseTracking } from './terminal-filter/modes.ts';

function scan(buf: Buffer, cuts: number[] = []): InputEvent[] {
  const s = new InputScanner();
  const out: InputEvent[] = [];
  let at = 0;
  for (const c of [...cuts.filter((x) => x > 0 && x < buf.length).sort((a, b) => a - b), buf.length]) {
    out.push(...s.push(buf.subarray(at, c)));
    at = c;
  }
  out.push(...s.flush());
  return out;
}

const fields = (e: InputEvent) =>
  e.type === 'mouse' ? { button: e.button, x: e.x, y: e.y, press: e.press, motion: e.motion, shift: e.shift, alt: e.alt, ctrl: e.ctrl } : e;

test('a legacy report (ESC [ M Cb Cx Cy) is one mouse event for every button byte, however the read is cut', () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 0x20, max: 0xff }),
      fc.integer({ min: 0x21, max: 0xff }),
      fc.integer({ min: 0x21, max: 0xff }),
      fc.array(fc.integer({ min: 1, max: 5 })),
      (cb, cx, cy, cuts) => {
        const raw = Buffer.from([0x1b, 0x5b, 0x4d, cb, cx, cy]);
        const events = scan(raw, cuts);
        assert.equal(events.length, 1);
        const e = events[0]!;
        assert.equal(e.type, 'mouse');
        assert.ok(e.type === 'mouse' && e.raw.equals(raw) && e.x === cx - 32 && e.y === cy - 32);
      },
    ),
    { numRuns: 3000 },
  );
});

test('every button and modifier byte that is a palette shortcut letter is a mouse report, not that letter', () => {
  // Wheel-right is `c` (Copy offered text), Ctrl+Shift+wheel-down `u` (Open offered link); every other letter too.
  for (const letter of 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/?') {
    const events = scan(Buffer.from(`\x1b[M${letter}!!typed`, 'latin1'));
    assert.equal(events[0]?.type, 'mouse', letter);
    assert.deepEqual(events.slice(1), [{ type: 'bytes', bytes: Buffer.from('typed') }], letter);
  }
  const wheelRight = scan(Buffer.from('\x1b[Mc!!', 'latin1'))[0]!;
  assert.deepEqual(fields(wheelRight), { ...reportFromCode(67, 1, 1, true) });
  assert.equal(wheelRight.type === 'mouse' && wheelRight.button, 67);
});

test('urxvt reports (CSI Cb;Cx;Cy M) and SGR reports are one mouse event each', () => {
  assert.deepEqual(scan(Buffer.from('\x1b[96;300;2M')).map(fields), [reportFromCode(64, 300, 2, true)]);
  assert.deepEqual(scan(Buffer.from('\x1b[35;4;5M')).map(fields), [reportFromCode(3, 4, 5, false)]);
  assert.deepEqual(scan(Buffer.from('\x1b[<85;400;500M')).map(fields), [reportFromCode(85, 400, 500, true)]);
  // Not a report: a cursor key with parameters, and CSI M (delete lines) with fewer parameters, stay bytes.
  assert.deepEqual(scan(Buffer.from('\x1b[1;5A\x1b[2M')), [{ type: 'bytes', bytes: Buffer.from('\x1b[1;5A\x1b[2M') }]);
});

test('a legacy report cut short and never finished is dropped whole after the wait, never typed', () => {
  const s = new InputScanner();
  assert.deepEqual(s.push(Buffer.from('\x1b[Mu')), []);
  assert.equal(s.holdsReply, true, 'held as long as a reply, not as briefly as an Escape key');
  assert.deepEqual(s.flush(), [{ type: 'reply', kind: 'other', raw: Buffer.from('\x1b[Mu') }]);
});

const report: fc.Arbitrary<MouseReport> = fc
  .record({
    button: fc.constantFrom(0, 1, 2, 64, 65, 66, 67, 128, 129),
    x: fc.integer({ min: 1, max: 400 }),
    y: fc.integer({ min: 1, max: 400 }),
    press: fc.boolean(),
    motion: fc.boolean(),
    shift: fc.boolean(),
    alt: fc.boolean(),
    ctrl: fc.boolean(),
  })
  .map((r) => ({ ...r, press: r.button >= 64 && r.button < 128 ? true : r.press }));

test('the program gets an SGR report in SGR, and the same report in its legacy encoding when it did not ask for SGR', () => {
  fc.assert(
    fc.property(report, fc.constantFrom<MouseTracking>(1000, 1002, 1003), (r, mode) => {
      const sgr = encodeForProgram(r, { mouse: mode, sgrMouse: true });
      assert.equal(sgr.toString('latin1'), `\x1b[<${mouseCode(r)};${r.x};${r.y}${r.press ? 'M' : 'm'}`);
      const legacy = encodeForProgram(r, { mouse: mode, sgrMouse: false });
      if (r.x > LEGACY_MAX_COORD || r.y > LEGACY_MAX_COORD) {
        assert.equal(legacy.length, 0, 'the legacy encoding cannot carry it: nothing, as xterm sends');
        return;
      }
      assert.equal(legacy.length, 6);
      const back = scan(legacy);
      assert.equal(back.length, 1);
      const got = back[0]!;
      assert.ok(got.type === 'mouse');
      assert.equal(got.x, r.x);
      assert.equal(got.y, r.y);
      if (r.press) assert.deepEqual(fields(got), r);
      else assert.equal(got.button, 3, 'a legacy release names no button');
    }),
    { numRuns: 3000 },
  );
});

test('X10 mode gets presses only, without modifiers; a program with no mouse mode gets nothing', () => {
  const r = reportFromCode(16 | 4 | 1, 10, 20, true);
  assert.deepEqual([...encodeForProgram(r, { mouse: 9, sgrMouse: false })], [0x1b, 0x5b, 0x4d, 33, 42, 52]);
  assert.equal(encodeForProgram({ ...r, press: false }, { mouse: 9, sgrMouse: false }).length, 0);
  assert.equal(encodeForProgram(r, { mouse: 0, sgrMouse: true }).length, 0);
  assert.equal(encodeForProgram(r, { mouse: 0, sgrMouse: false }).length, 0);
});

test('whatever mouse mode and encoding the program asks for, the terminal is asked for SGR reports', () => {
  for (const mouse of [9, 1000, 1002, 1003] as const) {
    for (const sgrMouse of [false, true]) {
      for (const mouseCapture of [false, true]) {
        const c = composeModes({ ...initialProgramModes(), mouse, sgrMouse }, { ...NO_HOST_NEEDS, mouseCapture });
        assert.deepEqual([c.mouse, c.sgrMouse], [mouse, true]);
      }
    }
  }
});
