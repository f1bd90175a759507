import { test } from 'node:test';
import assert from 'node:assert/strict';
import { TerminalFilter } from './filter.ts';
import type { FilterEvent, TerminalFilterOptions } from './context.ts';
import { MAX_COPY_BYTES } from './osc-policy.ts';

function run(input: string | Buffer, opts: TerminalFilterOptions = {}): { out: string; events: FilterEvent[] } {
  const events: FilterEvent[] = [];
  const f = new TerminalFilter({ ...opts, onEvent: (e) => events.push(e) });
  const bytes = typeof input === 'string' ? Buffer.from(input, 'latin1') : input;
  const out = Buffer.concat([f.push(bytes), f.end()]).toString('latin1');
  return { out, events };
}
const out = (input: string | Buffer, opts?: TerminalFilterOptions): string => run(input, opts).out;
const b64 = (s: string): string => Buffer.from(s, 'utf8').toString('base64');

test('terminal filter: text, C0 formatting, cursor, erase, SGR, scroll region and queries pass unchanged', () => {
  const pass = [
    'plain text\r\n\ttab\x08\x07bell',
    '\x1b[31;1mred\x1b[0m\x1b[38;2;1;2;3m\x1b[38:5:200m',
    '\x1b[H\x1b[10;20H\x1b[A\x1b[5B\x1b[C\x1b[D\x1b[2J\x1b[K\x1b[1K\x1b[3X\x1b[2P\x1b[4@\x1b[L\x1b[M',
    '\x1b[5;20r\x1b[r\x1b[S\x1b[2T\x1b7\x1b8\x1bD\x1bE\x1bM\x1b[s\x1b[u',
    '\x1b[6n\x1b[5n\x1b[06n\x1b[005n\x1b[?6n\x1b[c\x1b[0c\x1b[>c\x1b[?2004$p\x1b[4$p\x1b[>q\x1b[?u',
    '\x1b[2 q\x1b[ q\x1b[4h\x1b[4l\x1b[>4;2m\x1b[>4m',
    '\x1b[?25l\x1b[?25h\x1b[?7l\x1b[?1h\x1b[?2026h\x1b[?2026l\x1b[?1049h\x1b[?1049l\x1b[?1004h',
    '\x1b(0\x1b(B\x1b)0\x0e\x0f\x1b#8\x1b=\x1b>',
    '\x1b[>1u\x1b[=1;1u\x1b[<u',
    'utf-8 \u00e9\u2500\u{1f600}'.replace(/[^\x00-\xff]/gu, (c) => Buffer.from(c, 'utf8').toString('latin1')),
  ];
  for (const s of pass) assert.equal(out(s), s, JSON.stringify(s));
});

test('terminal filter: window operations, DCS, APC, PM, SOS and unsafe OSCs are dropped whole', () => {
  const cases: Array<[string, string]> = [
    ['a\x1b[21tb\x1b[8;50;100tc\x1b[14t', 'abc'],
    ['a\x1bPtmux;\x1b\x1b]52;c;YQ==\x07\x1b\\b', 'ab'],
    ['a\x1bP$qm\x1b\\b\x1bP+q544e\x1b\\c', 'abc'],
    ['a\x1b_Gf=100;AAAA\x1b\\b\x1b^pm\x1b\\c\x1bXsos\x1b\\d', 'abcd'],
    ['a\x1b]1337;File=name=eA==:QUFB\x07b\x1b]1337;SetUserVar=x=eQ==\x1b\\c', 'abc'],
    ['a\x1b]5113;ac=file\x07b\x1b]5522;type=read\x07c\x1b]50;font\x07d\x1b]46;/tmp/log\x07e\x1b]7;file:///x\x07f', 'abcdef'],
    ['a\x1b]999;whatever\x07b\x1b]x\x07c', 'abc'],
    ['a\x1b[?1016h\x1b[?1005h\x1b[?1015h\x1b[?2048h\x1b[?3h\x1b[?1001hb', 'ab'],
    ['a\x1b[20h\x1b[2hb\x1b[?s\x1b[?rc', 'abc'],
    ['a\x1b%@b\x1b Gc\x1bcd', 'ab' + 'c' + '\x1b[!p\x1b[H\x1b[2J\x1b[?1006l\x1b[?2004l\x1b[?1004l' + 'd'],
    ['a\x05b\x1bkname\x1b\\c\x1b[=c\x1b[?15n', 'abc'],
  ];
  for (const [input, expected] of cases) assert.equal(out(input), expected, JSON.stringify(input));
});

test('terminal filter: 8-bit C1 and C1 encoded in UTF-8 act as their 7-bit forms (and are written as those)', () => {
  assert.equal(out('a\x9b31mb\x9b21tc'), 'a\x1b[31mbc');
  assert.equal(out('a\xc2\x9b31mb\xc2\x9d52;c;YQ==\xc2\x9cc'), 'a\x1b[31mbc');
  assert.equal(out('a\x9d0;t\x9cb'), 'a\x1b[22;0t\x1b]0;t\x1b\\b');
  assert.equal(out('a\x90tmux;x\x9cb\x9e pm \x9cc\x9f apc \x9cd\x98sos\x9ce'), 'abcde');
  // A continuation byte in the C1 range inside a character is text (U+2500 is E2 94 80).
  assert.equal(out('\xe2\x94\x80\xe2\x94\x9b'), '\xe2\x94\x80\xe2\x94\x9b');
  // 0xC2 followed by a printable continuation is text; a lone 0xC2 at the end is released by end().
  assert.equal(out('\xc2\xa9 x\xc2'), '\xc2\xa9 x\xc2');
});

test('terminal filter: titles are made inert, capped, and the operator title pushed once for the restore', () => {
  // ESC inside an OSC ends it (as in terminals); what can remain is DEL, bidi controls and C0 (ignored).
  const r = run(`\x1b]2;evil\x7f\x01\xe2\x80\xae?\x07x\x1b]0;${'T'.repeat(500)}\x1b\\`);
  assert.ok(r.out.startsWith('\x1b[22;0t\x1b]2;evil\\x7f\\u202e?\x1b\\x\x1b]0;'), JSON.stringify(r.out));
  assert.equal(r.out.split('\x1b[22;0t').length, 2);
  const title = Buffer.from(/\x1b\]0;([^\x1b]*)\x1b\\$/.exec(r.out)?.[1] ?? '', 'latin1').toString('utf8');
  assert.ok(title.length <= 120 && title.endsWith('\u2026'), `cut: ${title.length}`);
});

test('terminal filter: OSC 8 keeps only targets that pass the URL check; the label always stays', () => {
  assert.equal(out('\x1b]8;id=a1;https://ok.example/p?q=1\x07label\x1b]8;;\x07'), '\x1b]8;id=a1;https://ok.example/p?q=1\x1b\\label\x1b]8;;\x1b\\');
  for (const target of ['file:///etc/passwd', 'ssh://host', 'vscode://x/y', 'javascript:alert(1)', 'https://u:p@h.example/']) {
    assert.equal(out(`\x1b]8;;${target}\x1b\\label\x1b]8;;\x1b\\`), 'label\x1b]8;;\x1b\\', target);
  }
  assert.equal(out('\x1b]8;;ssh://host\x07x', { extraSchemes: ['ssh'] }), '\x1b]8;;ssh://host\x1b\\x');
});

test('terminal filter: OSC 52 never passes; a valid write is a copy offer, a query gets nothing', () => {
  const r = run(`a\x1b]52;c;${b64('curl evil | sh\n\u00e9')}\x07b\x1b]52;c;?\x07c\x1b]52;;${b64('x')}\x1b\\d`);
  assert.equal(r.out, 'abcd');
  assert.deepEqual(
    r.events.filter((e) => e.type !== 'dropped'),
    [
      { type: 'copy-offer', text: 'curl evil | sh\n\u00e9', bytes: 17, removed: 0 },
      { type: 'clipboard-query' },
      { type: 'copy-offer', text: 'x', bytes: 1, removed: 0 },
    ],
  );
  // Control characters other than tab, LF and CR never reach the clipboard: no paste end, no palette key.
  const seeded = run(`\x1b]52;c;${b64('ls\x1b[201~\x1c\x16\tok\r\n\u009b\x7f')}\x07`).events[0];
  assert.deepEqual(seeded, { type: 'copy-offer', text: 'ls[201~\tok\r\n', bytes: 18, removed: 5 });
  const refused = (s: string) => run(s).events.filter((e) => e.type === 'copy-refused').length;
  assert.equal(refused('\x1b]52;c;not*base64\x07'), 1);
  assert.equal(refused(`\x1b]52;c;${Buffer.from([0xff, 0xfe]).toString('base64')}\x07`), 1);
  assert.equal(refused(`\x1b]52;c;${Buffer.alloc(MAX_COPY_BYTES + 3, 0x61).toString('base64')}\x07`), 1);
  const max = run(`\x1b]52;c;${Buffer.alloc(MAX_COPY_BYTES, 0x61).toString('base64')}\x07`);
  assert.equal(max.events[0]?.type === 'copy-offer' ? max.events[0].bytes : -1, MAX_COPY_BYTES);
});

test('terminal filter: notifications are inert and rate limited; notify: false drops them', () => {
  let t = 0;
  const now = () => t;
  assert.equal(out(`\x1b]9;hi\x7f\xe2\x80\xae\x07`, { now }), '\x1b]9;hi\\x7f\\u202e\x1b\\');
  assert.equal(out(`\x1b]777;notify;T;a;b\x07`, { now }), '\x1b]777;notify;T;a,b\x1b\\');
  assert.equal(out(`\x1b]99;;hello\x07`, { now }), '\x1b]99;;hello\x1b\\');
  // kitty's actions are not kept: the notification passes without them, so the terminal never answers.
  assert.equal(out(`\x1b]99;a=focus;x\x07\x1b]9;4;1;50\x07`, { now }), '\x1b]99;;x\x1b\\');
  assert.equal(out('\x1b]9;x\x07\x1b]777;notify;a;b\x07', { notify: false }), '');
  const five = '\x1b]9;n\x07'.repeat(5);
  assert.equal(out(five, { now }).split('\x1b]9;n').length - 1, 3);
  const f = new TerminalFilter({ now });
  f.push(Buffer.from(five));
  t += 10_001;
  assert.equal(f.push(Buffer.from('\x1b]9;n\x07')).toString(), '\x1b]9;n\x1b\\');
});

test('terminal filter: graphics pass only behind the opt-in', () => {
  const sixel = 'a\x1bP0;1;0q"1;1;2;2#0~~\x1b\\b';
  const kitty = 'a\x1b_Gf=100,a=T;AAAA\x1b\\b';
  assert.equal(out(sixel), 'ab');
  assert.equal(out(kitty), 'ab');
  assert.equal(out(sixel, { graphics: true }), sixel);
  assert.equal(out(kitty, { graphics: true }), kitty);
  // An abandoned graphics string is closed by the filter, never left open on the terminal.
  assert.equal(out('\x1b_Gabc\x1b[31m', { graphics: true }), '\x1b_Gabc\x1b\\\x1b[31m');
  assert.equal(out('\x1b_Gabc', { graphics: true }), '\x1b_Gabc\x1b\\');
});

test('terminal filter: unterminated strings are bounded: nothing past the cap is kept, text after ST resumes', () => {
  const f = new TerminalFilter();
  assert.equal(f.push(Buffer.from('a\x1b]2;')).toString(), 'a');
  for (let i = 0; i < 200; i++) assert.equal(f.push(Buffer.alloc(64 * 1024, 0x41)).length, 0);
  assert.equal(f.push(Buffer.from('\x07b')).toString(), 'b');
  const g = new TerminalFilter();
  g.push(Buffer.from('\x1bP'));
  for (let i = 0; i < 100; i++) g.push(Buffer.alloc(1024 * 1024, 0x41));
  assert.ok(process.memoryUsage().heapUsed < 1024 * 1024 * 1024);
  assert.equal(g.push(Buffer.from('\x1b\\z')).toString(), 'z');
});

test('terminal filter: composed modes: a program cannot switch off click capture or bracketed paste', () => {
  const events: FilterEvent[] = [];
  const f = new TerminalFilter({ onEvent: (e) => events.push(e) });
  assert.equal(f.setHostNeeds({ mouseCapture: true, bracketedPaste: true, focusReports: false }).toString(), '\x1b[?1000h\x1b[?1006h\x1b[?2004h');
  assert.equal(f.push(Buffer.from('\x1b[?1000l\x1b[?2004l\x1b[?1006lx')).toString(), 'x');
  assert.deepEqual(f.composed, { mouse: 1000, sgrMouse: true, bracketedPaste: true, focus: false });
  // The program's own tracking takes over the terminal while it wants it, then the host's capture returns.
  // The terminal keeps reporting in SGR either way: the program asked for the legacy encoding, which the
  // input side gives it (mouse-report.ts).
  assert.equal(f.push(Buffer.from('\x1b[?1002h\x1b[?25l')).toString(), '\x1b[?1000l\x1b[?1002h\x1b[?25l');
  assert.equal(f.program.mouse, 1002);
  assert.equal(f.program.sgrMouse, false);
  assert.equal(f.push(Buffer.from('\x1b[?1002l')).toString(), '\x1b[?1002l\x1b[?1000h');
  assert.equal(f.push(Buffer.from('\x1b[?2004h\x1b[?2004l')).toString(), '');
  assert.equal(f.program.bracketedPaste, false);
  const modes = events.filter((e) => e.type === 'modes');
  assert.ok(modes.length >= 4);
  assert.equal(f.setHostNeeds({ mouseCapture: false, bracketedPaste: true, focusReports: false }).toString(), '\x1b[?1000l\x1b[?1006l');
});

test('terminal filter: the restore undoes what was tracked, also when each enabling sequence arrived split', () => {
  const program = '\x1b[?10' + '49h\x1b[>1u\x1b[>3u\x1b[<1u\x1b[>5u\x1b]4;1;rgb:ff/00/00\x07\x1b]11;#000000\x1b\\\x1b]2;t\x07';
  const f = new TerminalFilter();
  for (const byte of Buffer.from(program)) f.push(Buffer.from([byte]));
  const r = f.restoreSequence();
  assert.ok(r.startsWith('\x1b[<2u\x1b[?1049l'), 'two kitty levels left pushed on the alternate screen, popped there');
  assert.ok(r.includes('\x1b]104\x1b\\') && r.includes('\x1b]111\x1b\\') && !r.includes('\x1b]110'));
  assert.ok(r.includes('\x1b[23;0t'));
  assert.ok(!r.includes('\x1b[?6l'), 'origin mode was never on: the cursor stays');
  f.push(Buffer.from('\x1b[?'));
  f.push(Buffer.from('6h'));
  assert.ok(f.restoreSequence().includes('\x1b[?6l\x1b[9999;1H'));
  for (const s of ['\x1b[?2004l', '\x1b[?1004l', '\x1b[?1000l', '\x1b7\x1b[r\x1b8', '\x1b[4l', '\x1b[?5l', '\x1b[>4m', '\x1b(B', '\x0f', '\x1b[0 q']) {
    assert.ok(r.includes(s), JSON.stringify(s));
  }
  // Popping more than was pushed cannot pop the operator's own levels.
  const g = new TerminalFilter();
  assert.equal(g.push(Buffer.from('\x1b[>1u\x1b[<5u\x1b[<u')).toString(), '\x1b[>1u\x1b[<1u');
  assert.ok(!g.restoreSequence().includes('\x1b[<'));
  assert.ok(!new TerminalFilter().restoreSequence().includes('\x1b[?1049l'));
});

test('terminal filter: each notification let through is an event with inert text; notifyTerminal false keeps it off the terminal', () => {
  let t = 0;
  const events: FilterEvent[] = [];
  const f = new TerminalFilter({ now: () => t, onEvent: (e) => void (e.type === 'notification' && events.push(e)) });
  f.notifyTerminal = false;
  const shown = f
    .push(Buffer.from('a\x1b]2;My \x7fAgent\x07b\x1b]9;done\x07\x1b]52;c;eA==\x07\x1b]777;notify;Build;ok; really\u202e\x07\x1b]99;;plain\x07', 'utf8'))
    .toString();
  assert.equal(shown, 'a\x1b[22;0t\x1b]2;My \\x7fAgent\x1b\\b', 'the title passes; the notifications do not');
  assert.equal(f.programTitle, 'My \\x7fAgent');
  assert.deepEqual(events, [
    { type: 'notification', source: 'osc9', title: null, body: 'done' },
    { type: 'notification', source: 'osc777', title: 'Build', body: 'ok, really\\u202e' },
    { type: 'notification', source: 'osc99', title: null, body: 'plain' },
  ]);
  // The rate limit is the same one: a fourth inside the window is neither shown nor an event.
  f.notifyTerminal = true;
  assert.equal(f.push(Buffer.from('\x1b]9;more\x07')).toString(), '');
  assert.equal(events.length, 3);
  t += 10_001;
  assert.equal(f.push(Buffer.from('\x1b]9;more\x07')).toString(), '\x1b]9;more\x1b\\');
  assert.equal(events.length, 4);
});

test('terminal filter: with bell events on, a BEL in the text is a notification (rate limited), a BEL ending an OSC is not', () => {
  const events: FilterEvent[] = [];
  const f = new TerminalFilter({ now: () => 0, onEvent: (e) => void (e.type === 'notification' && events.push(e)) });
  assert.equal(f.push(Buffer.from('ding\x07')).toString(), 'ding\x07');
  assert.equal(events.length, 0, 'off unless asked for');
  f.bellEvents = true;
  // The BEL passes either way; plain ASCII, coloured text and UTF-8 each take their own path through the filter.
  assert.equal(f.push(Buffer.from('ding\x07')).toString(), 'ding\x07');
  assert.equal(f.push(Buffer.from('\x1b[1mx\x1b[0m\x07')).toString(), '\x1b[1mx\x1b[0m\x07');
  assert.equal(f.push(Buffer.from('\x1b]0;title\x07é\x07')).toString(), '\x1b[22;0t\x1b]0;title\x1b\\é\x07');
  assert.deepEqual(
    events.map((e) => e.type === 'notification' && e.source),
    ['bell', 'bell', 'bell'],
  );
  f.push(Buffer.from('\x07\x07'));
  assert.equal(events.length, 3, 'past the rate limit');
  const denied = new TerminalFilter({ notify: false, onEvent: (e) => void events.push(e) });
  denied.bellEvents = true;
  denied.push(Buffer.from('\x07'));
  assert.equal(events.length, 3, 'JACKIN_NOTIFY=deny: no bell notifications either');
});

test('terminal filter: focus reporting is composed: on for the program or the host, off only when neither wants it', () => {
  const f = new TerminalFilter();
  assert.equal(f.push(Buffer.from('\x1b[?1004h')).toString(), '\x1b[?1004h');
  assert.equal(f.program.focus, true);
  assert.equal(f.setHostNeeds({ mouseCapture: false, bracketedPaste: false, focusReports: true }).toString(), '');
  assert.equal(f.push(Buffer.from('\x1b[?1004l')).toString(), '', 'the host still wants the reports');
  assert.equal(f.program.focus, false, 'but the program no longer gets them');
  assert.equal(f.setHostNeeds({ mouseCapture: false, bracketedPaste: false, focusReports: false }).toString(), '\x1b[?1004l');
  const h = new TerminalFilter({ hostNeeds: { mouseCapture: false, bracketedPaste: false, focusReports: true } });
  assert.equal(h.setHostNeeds({ mouseCapture: false, bracketedPaste: false, focusReports: true }).toString(), '\x1b[?1004h');
  // A soft reset turns the terminal's focus reporting off: the host's need is stated again.
  assert.equal(h.push(Buffer.from('\x1b[!p')).toString(), '\x1b[!p\x1b[?1006l\x1b[?2004l\x1b[?1004h');
});

test('terminal filter: paste events (?5522) are the host need alone: on and off as asked, stated again after a soft reset, off in the restore; the program cannot set them', () => {
  const f = new TerminalFilter();
  const none = { mouseCapture: false, bracketedPaste: false, focusReports: false };
  assert.equal(f.setHostNeeds({ ...none, pasteEvents: true }).toString(), '\x1b[?5522h');
  assert.equal(f.push(Buffer.from('\x1b[!p')).toString(), '\x1b[!p\x1b[?1006l\x1b[?2004l\x1b[?1004l\x1b[?5522h');
  assert.equal(f.push(Buffer.from('\x1b[?5522l\x1b[?5522h')).toString(), '', "the program's own ?5522 never reaches the terminal");
  assert.match(f.restoreSequence(), /\x1b\[\?5522l/);
  assert.equal(f.setHostNeeds({ ...none, pasteEvents: false }).toString(), '\x1b[?5522l');
});
