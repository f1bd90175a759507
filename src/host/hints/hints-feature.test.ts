import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ClientFrame, ListedLink } from '../../protocol/index.ts';
import { JackinError } from '../../errors.ts';
import type { UrlCheckOk } from '../../policy/url-safety.ts';
import { FakeFeatureSession } from '../../../test/helpers/fake-feature-session.ts';
import { pollUntil } from '../../../test/helpers/poll.ts';
import type { ClipboardTextWriter } from '../platform/clipboard/write-text.ts';
import type { Opener } from '../platform/opener.ts';
import { installHintsFeature } from './hints-feature.ts';
import { CONFIRM_ARM_MS } from '../session/confirm-controller.ts';

/** A capsule that answers ListLinks with `listed`. */
class FakeSession extends FakeFeatureSession {
  listed: ListedLink[] = [];
  override sendFrame(f: ClientFrame): boolean {
    super.sendFrame(f);
    if (f.type === 'ListLinks') queueMicrotask(() => this.emitFrame({ type: 'Links', requestId: f.requestId, links: this.listed }));
    return true;
  }
  /** Types `s` as one read; what the overlay hands back (keys after a label) is routed as the session would. */
  keys(s: string): void {
    assert.ok(this.overlay !== null, 'the labels are up');
    const rest = this.overlay.handle({ type: 'bytes', bytes: Buffer.from(s, 'latin1') });
    if (rest !== undefined && rest.length > 0) {
      if (this.held !== null) this.held.push(rest);
      else this.sendInput(rest);
    }
  }
}

/** Each reading of the clock is CONFIRM_ARM_MS after the last: the labels have been up long enough when a key comes. */
function slowClock(): () => number {
  let t = 0;
  return () => (t += CONFIRM_ARM_MS);
}

/** What the capsule's repaint draws: the links of `links` where they are listed (a soft reset, a clear, then the text). */
const REPAINT = '\x1b[?1049l\x1b[!p\x1b[r\x1b[0m\x1b[H\x1b[2J\x1b[3;5Hhttps://a.example/x\x1b[6;1Hdocs!\x1b[10;4Hfile!';

function setup(listed: ListedLink[], confirm = true, repaint: string = REPAINT, now: () => number = slowClock()) {
  const s = new FakeSession({ 'link-list': 1, repaint: 1 });
  s.onRepaint = () => s.output(repaint);
  s.listed = listed;
  s.confirmAnswer = confirm;
  const opened: string[] = [];
  const copied: string[] = [];
  const opener: Opener = {
    async openUrl(u: string | UrlCheckOk) {
      opened.push(typeof u === 'string' ? u : u.href);
      return { command: 'rec', state: 'exited' };
    },
    async openFile() {
      return { command: 'rec', state: 'exited' };
    },
  };
  const writer: ClipboardTextWriter = { name: 'rec', reason: 'test', write: async (t) => void copied.push(t) };
  const feature = installHintsFeature(s, { env: {}, opener, writer, now, listTimeoutMs: 300 });
  return { s, opened, copied, feature };
}

const links: ListedLink[] = [
  { row: 2, col: 4, cells: 19, source: 'text', url: 'https://a.example/x' },
  { row: 5, col: 0, cells: 5, source: 'osc8', url: 'https://target.example/' },
  { row: 9, col: 3, cells: 5, source: 'osc8', url: 'file:///etc/passwd' },
];

test('hints: the palette entries, the labels drawn at the listed cells, and a typed label opening its link only after the prompt', async () => {
  const { s, opened } = setup(links);
  assert.deepEqual(
    [...s.actions.values()].map((a) => [a.id, a.key]),
    [
      ['open-link-on-screen', 'o'],
      ['copy-link-on-screen', 'y'],
    ],
  );
  const done = s.actions.get('open-link-on-screen')!.run();
  await pollUntil('the labels', () => s.overlay !== null);
  assert.deepEqual(
    s.sent.map((f) => f.type),
    ['ListLinks'],
  );
  assert.equal(s.repaints, 1, 'the list is asked for after a repaint the host followed');
  const drawn = s.overlayDraws[0]!;
  assert.match(drawn, /\x1b\[3;5H\x1b\[0;1;30;103ma/);
  assert.match(drawn, /\x1b\[6;1H\x1b\[0;1;30;103ms/);
  assert.doesNotMatch(drawn, /\x1b\[10;4H/, 'a refused target gets no label');
  s.keys('s');
  await done;
  assert.equal(s.overlay, null, 'the labels are gone (the session repaints)');
  assert.deepEqual(s.confirms, [{ kind: 'url', target: 'https://target.example/', hyperlink: true, label: 'docs!' }]);
  assert.deepEqual(opened, ['https://target.example/']);
  assert.deepEqual(
    s.log.map((l) => [l.action, l.result]),
    [['open-url', 'ok']],
  );
});

test('hints: a declined prompt opens nothing; Esc leaves with nothing opened or asked', async () => {
  const declined = setup(links, false);
  const p = declined.s.actions.get('open-link-on-screen')!.run();
  await pollUntil('the labels', () => declined.s.overlay !== null);
  declined.s.keys('a');
  await p;
  assert.equal(declined.s.confirms.length, 1);
  assert.deepEqual(declined.opened, []);
  const esc = setup(links);
  const q = esc.s.actions.get('open-link-on-screen')!.run();
  await pollUntil('the labels', () => esc.s.overlay !== null);
  esc.s.keys('q'); // no such label: nothing happens
  assert.notEqual(esc.s.overlay, null);
  esc.s.keys('\x1b');
  await q;
  assert.equal(esc.s.overlay, null);
  assert.deepEqual(esc.s.confirms, []);
  assert.deepEqual(esc.opened, []);
});

test('hints: the copy twin shows the whole target in the host prompt and copies it only once confirmed, logged; no links is a notice', async () => {
  const { s, copied } = setup(links);
  const p = s.actions.get('copy-link-on-screen')!.run();
  await pollUntil('the labels', () => s.overlay !== null);
  s.keys('a');
  await p;
  assert.deepEqual(s.confirms, [{ kind: 'url', target: 'https://a.example/x', hyperlink: false, verb: 'copy', label: 'https://a.example/x' }]);
  assert.deepEqual(copied, ['https://a.example/x']);
  assert.deepEqual(
    s.log.map((l) => [l.action, l.target, l.result]),
    [['copy-link', 'https://a.example/x', 'ok']],
  );
  const none = setup([{ row: 2, col: 4, cells: 19, source: 'text', url: 'javascript:x' }]);
  await none.s.actions.get('open-link-on-screen')!.run();
  assert.equal(none.s.overlay, null);
  assert.match(none.s.notices.at(-1)!.text, /No link on the screen that jackin would open \(1 refused\)/);
});

test('hints: a declined copy prompt copies nothing, logged as cancelled', async () => {
  const { s, copied } = setup(links, false);
  const p = s.actions.get('copy-link-on-screen')!.run();
  await pollUntil('the labels', () => s.overlay !== null);
  s.keys('s');
  await p;
  assert.deepEqual(s.confirms, [{ kind: 'url', target: 'https://target.example/', hyperlink: true, verb: 'copy', label: 'docs!' }]);
  assert.deepEqual(copied, []);
  assert.deepEqual(
    s.log.map((l) => [l.action, l.result]),
    [['copy-link', 'cancelled']],
  );
});

test("hints: keys typed after a label in the same read wait for the prompt's answer, then reach the program; after Ctrl+C (leaving), at once", async () => {
  for (const action of ['copy-link-on-screen', 'open-link-on-screen']) {
    const { s } = setup(links);
    let answer: (yes: boolean) => void = () => undefined;
    let heldWhileAsked: Buffer[] | null = null;
    s.confirm = (r) => {
      s.confirms.push(r);
      heldWhileAsked = s.held === null ? null : [...s.held];
      return new Promise((resolve) => (answer = resolve));
    };
    const p = s.actions.get(action)!.run();
    await pollUntil('the labels', () => s.overlay !== null);
    s.keys('aafter\r');
    await pollUntil('the prompt', () => s.confirms.length === 1);
    assert.deepEqual(heldWhileAsked, [Buffer.from('after\r')], `${action}: held while the prompt is up`);
    assert.deepEqual(s.program, [], `${action}: nothing reached the program yet`);
    answer(false);
    await p;
    assert.equal(Buffer.concat(s.program).toString('latin1'), 'after\r', `${action}: typed after the answer`);
  }
  const esc = setup(links);
  const q = esc.s.actions.get('copy-link-on-screen')!.run();
  await pollUntil('the labels', () => esc.s.overlay !== null);
  esc.s.keys('\x03next');
  await q;
  assert.deepEqual(esc.s.confirms, []);
  assert.equal(Buffer.concat(esc.s.program).toString('latin1'), 'next');
});

test('hints: a resize while the labels are up takes them away (the screen reflowed), choosing nothing', async () => {
  const { s, opened } = setup(links);
  const p = s.actions.get('open-link-on-screen')!.run();
  await pollUntil('the labels', () => s.overlay !== null);
  s.terminalSize = { rows: 30, cols: 100 };
  assert.equal(s.overlay!.draw(s.terminalSize), '');
  await p;
  assert.equal(s.overlay, null);
  assert.deepEqual(s.confirms, []);
  assert.deepEqual(opened, []);
});

test('hints: letters typed before the labels could be read choose nothing; Esc still leaves, and later letters choose', async () => {
  let clock = 0;
  const { s, copied } = setup(links, true, REPAINT, () => clock);
  const done = s.actions.get('copy-link-on-screen')!.run();
  await pollUntil('the labels', () => s.overlay !== null);
  // The capsule answered as the operator typed a word for the program: its next letters are labels.
  s.keys('sa');
  clock += CONFIRM_ARM_MS - 1;
  s.keys('s');
  assert.ok(s.overlay !== null, 'still up: nothing was chosen');
  clock += 1;
  s.keys('s');
  await done;
  assert.deepEqual(copied, ['https://target.example/']);
  // Esc within the first moment leaves at once.
  const again = s.actions.get('copy-link-on-screen')!.run();
  await pollUntil('the labels', () => s.overlay !== null);
  s.keys('\x1b');
  await again;
  assert.equal(s.overlay, null);
  assert.deepEqual(copied, ['https://target.example/']);
});

test("hints: a listed link the host's own view does not show there gets no label: other text, blank cells, emoji before it, a screen never repainted", async () => {
  const lying: ListedLink[] = [
    { row: 2, col: 4, cells: 19, source: 'text', url: 'https://evil.example/' }, // the cells read https://a.example/x
    { row: 7, col: 0, cells: 4, source: 'osc8', url: 'https://evil.example/' }, // blank cells
    { row: 2, col: 4, cells: 19, source: 'text', url: 'https://a.example/x' }, // true
  ];
  const { s } = setup(lying);
  const p = s.actions.get('copy-link-on-screen')!.run();
  await pollUntil('the labels', () => s.overlay !== null);
  const drawn = s.overlayDraws[0]!;
  assert.match(drawn, /\x1b\[3;5H\x1b\[0;1;30;103ma/);
  assert.doesNotMatch(drawn, /\x1b\[8;1H/);
  s.keys('\x1b');
  await p;

  const shifted = setup(
    [
      { row: 0, col: 26, cells: 1, source: 'osc8', url: 'https://evil.example/' },
      { row: 0, col: 30, cells: 25, source: 'text', url: 'https://good.example/docs' },
    ],
    true,
    `\x1b[?1049l\x1b[!p\x1b[r\x1b[H\x1b[2J${'\u{1FAE8}'.repeat(13)}x   https://good.example/docs`,
  );
  await shifted.s.actions.get('copy-link-on-screen')!.run();
  assert.equal(shifted.s.overlay, null);
  assert.match(shifted.s.notices.at(-1)!.text, /No link on the screen that jackin could check \(2 not shown where the capsule says\)/);
  assert.deepEqual(shifted.s.confirms, []);

  const silent = setup(links, true, 'no reset, no clear: https://a.example/x');
  const q = silent.s.actions.get('open-link-on-screen')!.run();
  await q;
  assert.deepEqual(silent.s.sent, [], 'no list asked for');
  assert.match(silent.s.notices.at(-1)!.text, /did not repaint the screen/);
});

test('hints: a hinted link the opener fails to open is handed to keepFailed, whose hint ends the notice', async () => {
  const s = new FakeSession({ 'link-list': 1, repaint: 1 });
  s.onRepaint = () => s.output(REPAINT);
  s.listed = links;
  const kept: string[] = [];
  const opener: Opener = {
    openUrl: () => Promise.reject(new JackinError('E_OPENER_FAILED', 'opener xdg-open exited with status 3')),
    openFile: () => Promise.reject(new Error('not used')),
  };
  const feature = installHintsFeature(s, {
    env: {},
    opener,
    now: slowClock(),
    listTimeoutMs: 300,
    keepFailed: (checked) => {
      kept.push(checked.href);
      return 'copy it with the palette: Copy link not opened (k)';
    },
  });
  const done = s.actions.get('open-link-on-screen')!.run();
  await pollUntil('the labels', () => s.overlay !== null);
  s.keys('s');
  await done;
  assert.deepEqual(kept, ['https://target.example/']);
  assert.equal(
    s.notices.at(-1)?.text,
    'Could not open https://target.example: opener xdg-open exited with status 3; copy it with the palette: Copy link not opened (k)',
  );
  feature.dispose();
});
