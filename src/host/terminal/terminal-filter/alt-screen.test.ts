// While jackin holds the terminal's alternate screen (Terminal.holdAltScreen), the program's own switches are
// emulated: never passed (they would show the operator's screen mid-session), a clear when the screen changes,
// and a leave of the program's alternate screen asks for a repaint, except the capsule's own repaint reset.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { FilterEvent } from './context.ts';
import { TerminalFilter } from './filter.ts';

function held(): { filter: TerminalFilter; events: FilterEvent[]; push: (s: string) => string } {
  const events: FilterEvent[] = [];
  const filter = new TerminalFilter({ onEvent: (e) => void (e.type !== 'modes' && events.push(e)) });
  filter.holdAltScreen();
  return { filter, events, push: (s) => filter.push(Buffer.from(s, 'latin1')).toString('latin1') };
}

test('held alternate screen: the program entering and leaving its own is a clear, never the switch; leaving asks for a repaint', () => {
  const { events, push } = held();
  assert.equal(push('a\x1b[?1049hb'), 'a\x1b[2Jb');
  assert.deepEqual(events, []);
  assert.equal(push('c\x1b[?1049ld'), 'c\x1b[2Jd');
  assert.deepEqual(events, [{ type: 'alt-left' }]);
  // 47 and 1047 alike; a switch to the screen it is on changes nothing.
  events.length = 0;
  assert.equal(push('\x1b[?47h\x1b[?1047h'), '\x1b[2J');
  assert.equal(push('\x1b[?1047l\x1b[?1049l'), '\x1b[2J');
  assert.deepEqual(events, [{ type: 'alt-left' }]);
});

test("held alternate screen: the capsule's repaint (leave, soft reset, then the program's alternate screen) asks for no repaint", () => {
  const { events, push } = held();
  push('\x1b[?1049h');
  const out = push('\x1b[?1049l\x1b[!p\x1b[Hmain\x1b[?1049h\x1b[Halt');
  assert.doesNotMatch(out, /\x1b\[\?1049/);
  assert.ok(out.endsWith('\x1b[2J\x1b[Halt'), JSON.stringify(out));
  assert.deepEqual(events, []);
  // Split between the leave and the soft reset, the leave is judged at the end of its own push: one repaint
  // more (a repaint starts a frame, so its first bytes are rarely split), never a lost one.
  push('\x1b[?1049l\x1b[!');
  push('p');
  assert.deepEqual(events, [{ type: 'alt-left' }]);
});

test("held alternate screen: the restore leaves jackin's alternate screen last, and only it", () => {
  const { filter, push } = held();
  push('\x1b[?1049h\x1b[?1000h');
  const restore = filter.restoreSequence();
  assert.ok(restore.endsWith('\x1b[?1049l'), JSON.stringify(restore));
  assert.equal(restore.split('\x1b[?1049l').length, 2);
  assert.doesNotMatch(restore, /\x1b\[\?(47|1047)l/);
  // Not held: the program's switches pass, and the restore leaves the screen it left on.
  const plain = new TerminalFilter();
  assert.equal(plain.push(Buffer.from('\x1b[?1049h')).toString('latin1'), '\x1b[?1049h');
  assert.ok(plain.restoreSequence().startsWith('\x1b[?1049l'));
});
