import { test } from 'node:test';
import assert from 'node:assert/strict';
import { classifyCsiReply, classifyStringReply, ReplyExpectations, scanStringReply, shouldForwardReply, MAX_PENDING_REPLIES } from './replies.ts';
import { TerminalFilter } from './filter.ts';

test('replies: a reply is forwarded only when the filter let its query out, once per query', () => {
  const e = new ReplyExpectations();
  const f = new TerminalFilter({ expectations: e });
  assert.equal(shouldForwardReply('da1', e, false), false);
  f.push(Buffer.from('\x1b[c\x1b[>q\x1b[6n\x1b]11;?\x07\x1b[?2004$p'));
  for (const k of ['da1', 'xtversion', 'cpr', 'osc-color', 'decrqm'] as const) {
    assert.equal(shouldForwardReply(k, e, false), true, k);
    assert.equal(shouldForwardReply(k, e, false), false, `${k} twice`);
  }
  // Queries the filter dropped leave nothing due.
  f.push(Buffer.from('\x1b[21t\x1b]52;c;?\x07\x1bP+q544e\x1b\\\x1b[=c'));
  for (const k of ['other', 'clipboard', 'da2', 'status', 'kitty-flags'] as const) assert.equal(shouldForwardReply(k, e, false), false, k);
  assert.equal(shouldForwardReply('focus', e, true), true);
  assert.equal(shouldForwardReply('focus', e, false), false);
  e.expect('da1', 1000);
  let n = 0;
  while (e.take('da1')) n++;
  assert.equal(n, MAX_PENDING_REPLIES);
});

test('replies: CSI replies are told from keys; a position report only while one is due', () => {
  const e = new ReplyExpectations();
  assert.equal(classifyCsiReply('?64;1;2;22', '', 'c', e), 'da1');
  assert.equal(classifyCsiReply('>41;390;0', '', 'c', e), 'da2');
  assert.equal(classifyCsiReply('?2004;2', '$', 'y', e), 'decrqm');
  assert.equal(classifyCsiReply('?1', '', 'u', e), 'kitty-flags');
  assert.equal(classifyCsiReply('0', '', 'n', e), 'status');
  assert.equal(classifyCsiReply('8;24;80', '', 't', e), 'other');
  assert.equal(classifyCsiReply('', '', 'I', e), 'focus');
  assert.equal(classifyCsiReply('?5;1;1', '', 'R', e), 'cpr');
  // Keys stay keys: modified F3 looks like a position report when none is due.
  assert.equal(classifyCsiReply('1;5', '', 'R', e), null);
  e.expect('cpr');
  assert.equal(classifyCsiReply('12;40', '', 'R', e), 'cpr');
  for (const [p, f] of [
    ['A', ''],
    ['1;5', 'A'],
    ['3', '~'],
    ['97;5', 'u'],
    ['<0;3;4', 'M'],
  ] as const) {
    assert.equal(classifyCsiReply(p === 'A' ? '' : p, '', f === '' ? 'A' : f, e), null, `${p}${f}`);
  }
});

test('replies: string replies are whole units; 0x1c and 0x16 inside one are part of it; OSC 52 is a clipboard reply', () => {
  const e = new ReplyExpectations();
  const xt = Buffer.from('\x1bP>|evil\x1c\x16term\x1b\\rest');
  assert.deepEqual(scanStringReply(xt, 0, e), { kind: 'xtversion', end: xt.indexOf('rest') });
  const osc52 = Buffer.from('\x1b]52;c;T1BFUkFUT1ItU0VDUkVU\x07k');
  assert.deepEqual(scanStringReply(osc52, 0, e), { kind: 'clipboard', end: osc52.length - 1 });
  const color = Buffer.from('\x1b]11;rgb:0000/0000/0000\x1b\\');
  assert.deepEqual(scanStringReply(color, 0, e), { kind: 'osc-color', end: color.length });
  // Alt+P or Alt+] followed by a key no reply begins with is keys; a read that ends inside what may begin a
  // reply waits for the next (as a lone Escape does), so where a read ends does not decide.
  assert.equal(scanStringReply(Buffer.from('\x1bP'), 0, e), 'partial');
  assert.equal(scanStringReply(Buffer.from('\x1b]'), 0, e), 'partial');
  assert.equal(scanStringReply(Buffer.from('\x1b]52'), 0, e), 'partial');
  assert.equal(scanStringReply(Buffer.from('\x1bP1$'), 0, e), 'partial');
  assert.equal(scanStringReply(Buffer.from('\x1bPx'), 0, e), null);
  assert.equal(scanStringReply(Buffer.from('\x1b]x'), 0, e), null);
  assert.equal(scanStringReply(Buffer.from('\x1b]123456'), 0, e), null, 'no OSC number has six digits');
  assert.equal(scanStringReply(Buffer.from('\x1bPx\x1b[A'), 0, e), null);
  e.expect('xtversion');
  assert.equal(scanStringReply(Buffer.from('\x1bP>|xterm('), 0, e), 'partial');
  assert.equal(classifyStringReply(0x50, Buffer.from('1$r0m')), 'other');
  assert.equal(classifyStringReply(0x5f, Buffer.from('Gi=1;OK')), 'other');
});

test('a string reply ends at ST, not at a 0x9c byte inside a UTF-8 character', () => {
  const none = new ReplyExpectations();
  // SOS, then U+B734 (EB 9C B4): no terminator at all, so not a reply.
  assert.equal(scanStringReply(Buffer.from([0x1b, 0x58, 0x32, 0xeb, 0x9c, 0xb4, 0x3a]), 0, none), null);
  // The same character, then a real ST (ESC \\): one reply that ends there.
  const withSt = Buffer.from([0x1b, 0x58, 0xeb, 0x9c, 0xb4, 0x1b, 0x5c, 0x41]);
  assert.deepEqual(scanStringReply(withSt, 0, none), { kind: 'other', end: 7 });
  // C1 ST as UTF-8 (C2 9C) and as a raw byte after ASCII both end it.
  assert.equal((scanStringReply(Buffer.from([0x1b, 0x58, 0x41, 0xc2, 0x9c]), 0, none) as { end: number }).end, 5);
  assert.equal((scanStringReply(Buffer.from([0x1b, 0x58, 0x41, 0x9c]), 0, none) as { end: number }).end, 4);
});
