// Adversarial cases for the terminal filter and for terminal replies on the host's input: sequences and
// stream splits that tried to get past the policy (docs/terminal-policy.md). Each test names what it guards.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import xh from '@xterm/headless';
import { TerminalFilter } from './filter.ts';
import { REPLY_WAIT_MS, ReplyExpectations } from './replies.ts';
import { InputScanner } from '../input-scan.ts';

const HOST = { mouseCapture: true, bracketedPaste: true, focusReports: false } as const;

function hostFilter(): TerminalFilter {
  const f = new TerminalFilter({ hostNeeds: HOST });
  f.setHostNeeds(HOST);
  return f;
}
const push = (f: TerminalFilter, s: string): string => f.push(Buffer.from(s, 'latin1')).toString('latin1');

function xterm(): InstanceType<typeof xh.Terminal> {
  return new xh.Terminal({ rows: 24, cols: 80, allowProposedApi: true });
}
const write = (term: InstanceType<typeof xh.Terminal>, s: string): Promise<void> => new Promise((resolve) => term.write(Buffer.from(s, 'latin1'), resolve));

test('soft reset (DECSTR) and RIS cannot switch off click capture or bracketed paste: the composed modes are set again', async () => {
  // A terminal's soft reset turns bracketed paste and focus reporting off (xterm also mouse tracking).
  for (const reset of ['\x1b[!p', '\x1bc', '\x9b!p', '\xc2\x9b!p']) {
    const f = hostFilter();
    push(f, '\x1b[?2004h\x1b[?1004h');
    const out = push(f, `${reset}x`);
    assert.ok(out.startsWith('\x1b[!p'), JSON.stringify(out));
    const after = out.slice(out.lastIndexOf('\x1b[!p') + 4);
    for (const s of ['\x1b[?1000h', '\x1b[?1006h', '\x1b[?2004h'])
      assert.ok(after.includes(s), `${JSON.stringify(reset)}: ${JSON.stringify(s)} in ${JSON.stringify(out)}`);
    assert.ok(out.endsWith('x'));
    // The terminal's reset also reset what the program asked for: its bracketed paste and focus reports are off.
    assert.equal(f.program.bracketedPaste, false);
    assert.equal(f.program.focus, false);
    assert.deepEqual(f.composed, { mouse: 1000, sgrMouse: true, bracketedPaste: true, focus: false });
  }
  // The program's own mouse tracking is off after the reset too: the host's capture is back.
  const g = hostFilter();
  push(g, '\x1b[?1003h\x1b[?1006h');
  const out = push(g, '\x1b[!p');
  assert.ok(out.includes('\x1b[?1000h') && out.includes('\x1b[?1006h'), JSON.stringify(out));
  assert.equal(g.program.mouse, 0);
  // On a terminal (xterm.js, whose soft reset turns bracketed paste off): the host's modes survive.
  const term = xterm();
  const k = hostFilter();
  await write(term, '\x1b[?1000h\x1b[?1006h\x1b[?2004h');
  await write(term, push(k, '\x1b[!p'));
  assert.equal(term.modes.bracketedPasteMode, true);
  assert.notEqual(term.modes.mouseTrackingMode, 'none');
  term.dispose();
  // Without host needs the reset passes with the modes it leaves off stated explicitly.
  const h = new TerminalFilter();
  assert.equal(push(h, '\x1b[!p'), '\x1b[!p\x1b[?1006l\x1b[?2004l\x1b[?1004l');
});

test('a hyperlink the program left open is closed by the restore, so the text after jackin is no link', () => {
  const f = new TerminalFilter();
  assert.equal(push(f, '\x1b]8;;https://evil.example/\x07still a link'), '\x1b]8;;https://evil.example/\x1b\\still a link');
  assert.ok(f.restoreSequence().includes('\x1b]8;;\x1b\\'), JSON.stringify(f.restoreSequence()));
  // Closed by the program (in any form), nothing is left to close.
  push(f, '\x9d8;;\x9c');
  assert.ok(!f.restoreSequence().includes('\x1b]8;'));
  // Opened in pieces across frames at every byte: tracked the same.
  const g = new TerminalFilter();
  for (const byte of Buffer.from('\x1b]8;id=1;https://a.example/\x1b\\x')) g.push(Buffer.from([byte]));
  assert.ok(g.restoreSequence().includes('\x1b]8;;\x1b\\'));
  assert.ok(!new TerminalFilter().restoreSequence().includes('\x1b]8;'));
  // A refused target closes a link left open before it: its label is linked to nothing, not to the earlier target.
  const h = new TerminalFilter();
  assert.equal(push(h, '\x1b]8;;https://a.example/\x07a\x1b]8;;file:///etc/passwd\x07b'), '\x1b]8;;https://a.example/\x1b\\a\x1b]8;;\x1b\\b');
  assert.ok(!h.restoreSequence().includes('\x1b]8;'));
  assert.equal(push(h, '\x1b]8;;file:///etc/passwd\x07c'), 'c');
});

test('a DCS header at the length limit keeps its final byte: what passes is the sequence that was checked', () => {
  // 254 parameter bytes fill the sequence buffer exactly; the final `q` (sixel, with graphics allowed) used to
  // be left out of the rewritten header, so the payload's `$q` made a DECRQSS of it on the terminal.
  const header = '0;'.repeat(127);
  for (const intro of ['\x90', '\x1bP']) {
    const f = new TerminalFilter({ graphics: true });
    const out = push(f, `${intro}${header.slice(0, 100)}`) + push(f, `${header.slice(100)}q$qm\x1b\\`);
    assert.equal(out, `\x1bP${header}q$qm\x1b\\`, JSON.stringify(intro));
  }
});

test('kitty keyboard levels are counted per screen: levels pushed on the alternate screen never license a pop on the main one', () => {
  // Each screen has its own stack (kitty keyboard protocol): after leaving the alternate screen, a pop on the
  // main screen would pop the operator's own level.
  const f = new TerminalFilter();
  assert.equal(push(f, '\x1b[?1049h\x1b[>1u\x1b[>3u\x1b[?1049l\x1b[<2ux'), '\x1b[?1049h\x1b[>1u\x1b[>3u\x1b[?1049lx');
  assert.ok(!f.restoreSequence().includes('\x1b[<'), JSON.stringify(f.restoreSequence()));
  // Left on the alternate screen: its levels are popped there, before leaving it; the main screen's after.
  const g = new TerminalFilter();
  push(g, '\x1b[>1u\x1b[?1049h\x1b[>1u\x1b[>1u');
  const r = g.restoreSequence();
  assert.ok(r.startsWith('\x1b[<2u\x1b[?1049l'), JSON.stringify(r));
  assert.equal(r.split('\x1b[<').length, 3);
  assert.ok(r.includes('\x1b[<1u', r.indexOf('\x1b[?1049l')), JSON.stringify(r));
  // Flags set on the alternate screen's base are that screen's, not the operator's.
  const h = new TerminalFilter();
  push(h, '\x1b[?1049h\x1b[=5;1u\x1b[?1049l');
  assert.ok(!h.restoreSequence().includes('\x1b[=0;1u'));
  // A pop on the alternate screen is cut to what was pushed there.
  const k = new TerminalFilter();
  assert.equal(push(k, '\x1b[>1u\x1b[?1049h\x1b[>1u\x1b[<5u'), '\x1b[>1u\x1b[?1049h\x1b[>1u\x1b[<1u');
});

test('a query the terminal never answers does not make Alt+P or Alt+] vanish for the rest of the session', () => {
  // Terminals that do not know XTVERSION or colour queries stay silent; the reply stops being due after a while,
  // and the operator's Alt+P (ESC P) and what follows it in the same read are keys again.
  let now = 0;
  const e = new ReplyExpectations({ now: () => now });
  const f = new TerminalFilter({ expectations: e });
  f.push(Buffer.from('\x1b[>q\x1b]11;?\x07'));
  const typed = (s: string): string => {
    const sc = new InputScanner({ replies: e });
    const events = [...sc.push(Buffer.from(s, 'latin1')), ...sc.flush()];
    return events.map((ev) => (ev.type === 'bytes' ? ev.bytes.toString('latin1') : `<${ev.type}>`)).join('');
  };
  // While the replies are due, a string introducer is held for the rest of its reply.
  assert.equal(typed('\x1bPab'), '<reply>');
  now += REPLY_WAIT_MS + 1;
  assert.equal(typed('\x1bPab'), '\x1bPab');
  assert.equal(typed('\x1b]x'), '\x1b]x');
  assert.equal(e.take('xtversion'), false, 'a reply arriving that late is not forwarded either');
  // A new query makes a reply due again.
  f.push(Buffer.from('\x1b[>q'));
  assert.equal(e.due('xtversion'), true);
});

test('a string reply nobody asked for, split across reads, is still one reply: none of it is typed, nothing in it is a key', () => {
  // An OSC 52 reply (clipboard contents) or XTVERSION arriving in pieces: the start has the form of a reply (an
  // OSC number and `;`, DCS `>|` or `1$r`), so it is held for the rest instead of being read as Alt+] and typing.
  const scan = (reads: string[], flushBetween = false): string => {
    const sc = new InputScanner({ replies: new ReplyExpectations() });
    const events = reads.flatMap((r, i) => [...sc.push(Buffer.from(r, 'latin1')), ...(flushBetween && i < reads.length - 1 ? sc.flush() : [])]);
    events.push(...sc.flush());
    return events.map((ev) => (ev.type === 'bytes' ? ev.bytes.toString('latin1') : ev.type === 'reply' ? `<reply ${ev.kind}>` : `<${ev.type}>`)).join('');
  };
  assert.equal(scan(['\x1b]52;c;T1BFUkFU', 'T1I=\x1c\x16\x07x']), '<reply clipboard>x');
  assert.equal(scan(['\x1bP>|evil\x1c', '\x16term\x1b\\y']), '<reply xtversion>y');
  assert.equal(scan(['\x1bP1$r0m\x1c', '\x1b\\']), '<reply other>');
  // Its start alone, never ended (the rest lost): dropped as a reply when the scanner gives up on it.
  assert.equal(scan(['\x1b]52;c;T1BFUkFU\x1c']), '<reply other>');
  // Alt+] and Alt+P typed, alone or followed by ordinary keys, stay keys.
  assert.equal(scan(['\x1b]']), '\x1b]');
  assert.equal(scan(['\x1b]ab']), '\x1b]ab');
  assert.equal(scan(['\x1bPx']), '\x1bPx');
});

test("erasing the saved lines (CSI 3 J, CSI ? 3 J) cannot wipe the operator's scrollback: the screen is erased instead", () => {
  // The same reason RIS is rewritten: the scrollback holds the operator's own history from before jackin.
  for (const [input, expected] of [
    ['a\x1b[3Jb', 'a\x1b[2Jb'],
    ['a\x1b[?3Jb', 'a\x1b[?2Jb'],
    ['a\x9b3Jb', 'a\x1b[2Jb'],
    ['a\x1b[2Jb\x1b[Jc\x1b[1Jd', 'a\x1b[2Jb\x1b[Jc\x1b[1Jd'],
    ['a\x1b[03Jb', 'a\x1b[2Jb'],
    ['a\x1b[3;1Jb', 'a\x1b[2Jb'],
  ] as const) {
    const f = new TerminalFilter();
    assert.equal(push(f, input), expected, JSON.stringify(input));
  }
  const split = new TerminalFilter();
  assert.equal(push(split, 'a\x1b[') + push(split, '3') + push(split, 'Jb'), 'a\x1b[2Jb');
  // On a terminal model: the lines scrolled off before stay.
  const term = xterm();
  return (async () => {
    await write(term, Array.from({ length: 40 }, (_, i) => `line ${i}\r\n`).join(''));
    const saved = term.buffer.active.length;
    await write(term, push(new TerminalFilter(), '\x1b[3J'));
    assert.equal(term.buffer.active.length, saved);
    term.dispose();
  })();
});

test('a string reply longer than the hold limit is dropped to its end, never typed from where the limit cut it', () => {
  // A clipboard reply (OSC 52) over MAX_STRING_REPLY_BYTES: the part held is given up as a reply, and what
  // follows up to its terminator is the same reply, not typing; after it, keys are keys again.
  const sc = new InputScanner({ replies: new ReplyExpectations() });
  const chunk = 'QUFB'.repeat(4096); // 16 KiB of base64 per read
  const events = [...sc.push(Buffer.from(`\x1b]52;c;${chunk}`, 'latin1'))];
  for (let i = 0; i < 6; i++) events.push(...sc.push(Buffer.from(chunk, 'latin1')));
  events.push(...sc.push(Buffer.from(`${chunk}\x1c\x16`, 'latin1')));
  assert.equal(sc.holdsReply, true, 'still inside the reply');
  events.push(...sc.push(Buffer.from(`${chunk}\x07typed\x1c`, 'latin1')));
  const kinds = events.map((ev) => (ev.type === 'bytes' ? `bytes:${ev.bytes.toString('latin1')}` : ev.type));
  assert.deepEqual(
    kinds.filter((k) => k !== 'reply'),
    ['bytes:typed', 'palette-key'],
  );
  // Every byte is accounted for: the replies' raw bytes and the typing give back the input.
  const raw = events.map((ev) => (ev.type === 'bytes' ? ev.bytes : ev.raw).toString('latin1')).join('');
  assert.ok(raw === `\x1b]52;c;${chunk.repeat(8)}\x1c\x16${chunk}\x07typed\x1c`, `raw bytes differ (${raw.length} bytes)`);
  // Given up by the scanner's timeout (silence) inside such a reply: what follows is typing again.
  const sc2 = new InputScanner({ replies: new ReplyExpectations() });
  sc2.push(Buffer.from(`\x1b]52;c;${chunk.repeat(5)}`, 'latin1'));
  assert.equal(sc2.holdsReply, true);
  assert.ok(sc2.flush().every((ev) => ev.type === 'reply'));
  assert.deepEqual(
    sc2.push(Buffer.from('ok')).map((ev) => ev.type === 'bytes' && ev.bytes.toString()),
    ['ok'],
  );
});
