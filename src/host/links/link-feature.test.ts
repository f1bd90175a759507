import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ClientFrame, ProgramModes, ServerFrame } from '../../protocol/index.ts';
import { JackinError } from '../../errors.ts';
import { NOTICE_MAX_COLUMNS } from '../../ui/notices.ts';
import type { UrlCheckOk } from '../../policy/url-safety.ts';
import { SessionGestures } from '../session/gesture-gate.ts';
import type { InputHook } from '../session/feature-session.ts';
import { FakeFeatureSession } from '../../../test/helpers/fake-feature-session.ts';
import type { InputEvent } from '../terminal/input-scan.ts';
import { installLinkFeature, mouseCaptureEnabled } from './link-feature.ts';
import type { Opener } from '../platform/opener.ts';
import { pollUntil } from '../../../test/helpers/poll.ts';

/** A session stand-in: a capsule answers Resolve from `screen`. */
class FakeSession extends FakeFeatureSession {
  screen = new Map<string, { kind: 'osc8' | 'text'; text: string }>();
  paths = new Map<string, string>();
  offered: string | null = null;
  get texts(): string[] {
    return this.notices.map((n) => n.text);
  }
  get hook(): InputHook | undefined {
    return this.hooks.get('mouse');
  }
  override sendFrame(f: ClientFrame): boolean {
    if (f.type !== 'Resolve') return true;
    const key = f.at === null ? 'cursor' : `${f.at.row},${f.at.col}`;
    const hit =
      f.target === 'link'
        ? this.screen.get(key)
        : f.target === 'path' && this.paths.has(key)
          ? { kind: 'text' as const, text: this.paths.get(key)! }
          : f.target === 'offered-link' && this.offered !== null
            ? { kind: 'text' as const, text: this.offered }
            : undefined;
    queueMicrotask(() => this.emitFrame({ type: 'Resolved', requestId: f.requestId, kind: hit?.kind ?? 'none', text: hit?.text ?? '' }));
    return true;
  }
  /** The program's mouse tracking as the host filter read it, and a Modes frame from the capsule. */
  modes(m: Partial<ProgramModes>): void {
    this.programModes.mouse = m.mouseTracking === true ? 1000 : 0;
    this.emitFrame({
      type: 'Modes',
      mouseTracking: false,
      sgrMouse: false,
      bracketedPaste: false,
      focusReporting: false,
      alternateScreen: false,
      ...m,
    } satisfies ServerFrame);
  }
}

function mouse(x: number, y: number, mods: { ctrl?: boolean; alt?: boolean } = {}, press = true): InputEvent {
  return { type: 'mouse', button: 0, x, y, press, motion: false, shift: false, alt: mods.alt ?? false, ctrl: mods.ctrl ?? false, raw: Buffer.from('raw') };
}

function recordingOpener(): Opener & { opened: string[] } {
  const opened: string[] = [];
  return {
    opened,
    async openUrl(u: string | UrlCheckOk) {
      opened.push(typeof u === 'string' ? u : u.href);
      return { command: 'rec', state: 'exited' as const };
    },
    async openFile() {
      return { command: 'rec', state: 'exited' as const };
    },
  };
}

function setup(features: Record<string, number> | null = { resolve: 1, modes: 1 }, env: Record<string, string> = {}) {
  const s = new FakeSession(features);
  const opener = recordingOpener();
  const exported: string[] = [];
  const feature = installLinkFeature(s, { env, opener, exportFeature: { exportFromClick: (p) => void exported.push(p) } });
  return { s, opener, exported, feature };
}

test("link feature: asks the host for click capture once our capsule speaks; the program's own tracking (read by the host) wins", () => {
  const { s, feature } = setup();
  assert.deepEqual(s.hostNeeds, []);
  assert.equal(feature.capturing, false);
  s.modes({});
  assert.deepEqual(s.hostNeeds, [{ mouseCapture: true }]);
  assert.equal(feature.capturing, true);
  // What a Modes frame claims changes nothing: the host's own filter knows the program's modes.
  s.emitFrame({ type: 'Modes', mouseTracking: true, sgrMouse: true, bracketedPaste: false, focusReporting: false, alternateScreen: false });
  assert.equal(feature.capturing, true);
  s.programModes.mouse = 1002;
  assert.equal(feature.capturing, false);
  s.modes({});
  assert.equal(feature.capturing, true);
  assert.deepEqual(s.hostNeeds, [{ mouseCapture: true }], 'asked once');
  feature.dispose();
  assert.deepEqual(s.hostNeeds.at(-1), { mouseCapture: false });
  assert.deepEqual(s.written, [], 'the feature writes no mode sequence itself');
});

test('link feature: --no-mouse and JACKIN_MOUSE=off never capture', () => {
  assert.equal(mouseCaptureEnabled({ JACKIN_MOUSE: 'OFF' }), false);
  assert.equal(mouseCaptureEnabled({}, true), false);
  assert.equal(mouseCaptureEnabled({}), true);
  const { s } = setup({ resolve: 1, modes: 1 }, { JACKIN_MOUSE: 'off' });
  s.modes({});
  assert.deepEqual(s.written, []);
  assert.equal(s.hook?.(mouse(1, 1, { ctrl: true })), false, 'reports pass through untouched');
});

test('link feature: a Ctrl+click opens the link at that cell; a plain click is swallowed; a click on a path exports it', async () => {
  const { s, opener, exported } = setup();
  s.modes({});
  s.screen.set('2,4', { kind: 'osc8', text: 'https://other.example' });
  s.paths.set('5,0', '/work/out.txt');
  assert.equal(s.hook?.(mouse(5, 3, { ctrl: true })), true);
  assert.deepEqual(s.gestures, ['click']);
  await pollUntil('the open', () => opener.opened.length === 1);
  assert.deepEqual(opener.opened, ['https://other.example/']);
  await pollUntil('the notice', () => s.texts.includes('Opened https://other.example (hyperlink target)'), { last: () => s.texts });
  assert.equal(s.hook?.(mouse(5, 3)), true, 'plain click swallowed');
  assert.equal(s.hook?.(mouse(5, 3, { ctrl: true }, false)), true, 'release swallowed');
  assert.equal(opener.opened.length, 1);
  assert.equal(s.hook?.(mouse(1, 6, { alt: true })), true);
  await pollUntil('the export', () => exported.length === 1);
  assert.deepEqual(exported, ['/work/out.txt']);
  s.modes({ mouseTracking: true, sgrMouse: true });
  assert.equal(s.hook?.(mouse(5, 3, { ctrl: true })), false, 'the program tracking the mouse gets the click');
});

test('link feature: refused links and JACKIN_OPEN_LINKS=deny open nothing and say why', async () => {
  const { s, opener } = setup();
  s.modes({});
  s.screen.set('0,0', { kind: 'osc8', text: 'javascript:alert(1)' });
  s.hook?.(mouse(1, 1, { ctrl: true }));
  await pollUntil('the refusal', () => s.texts.some((n) => n.startsWith('Link refused: scheme "javascript"')), { last: () => s.texts });
  const denied = setup({ resolve: 1, modes: 1 }, { JACKIN_OPEN_LINKS: 'FALSE' });
  denied.s.modes({});
  denied.s.screen.set('0,0', { kind: 'text', text: 'https://example.com/' });
  denied.s.hook?.(mouse(1, 1, { ctrl: true }));
  await pollUntil('the notice', () => denied.s.texts.some((n) => n.includes('turned off')), { last: () => denied.s.texts });
  assert.deepEqual([...opener.opened, ...denied.opener.opened], []);
});

test('link feature: palette actions open the link under the cursor and the offered link', async () => {
  const { s, opener } = setup();
  s.screen.set('cursor', { kind: 'text', text: 'https://example.com/typed' });
  await s.actions.get('open-link-under-cursor')?.run();
  assert.deepEqual(opener.opened, ['https://example.com/typed']);
  await s.actions.get('open-offered-link')?.run();
  assert.equal(s.texts.at(-1), 'No link has been offered (inside the session: jackin-capsule open-url <url>)');
});

test('link feature: HostOpenUrl from an upstream capsule is refused unless allowed, then needs a fresh gesture, one open per gesture', async () => {
  const s = new FakeSession(null);
  const opener = recordingOpener();
  let now = 0;
  s.gate = new SessionGestures({ now: () => now });
  installLinkFeature(s, { env: {}, opener });
  const open = (url: string) => s.emitFrame({ type: 'HostOpenUrl', url } satisfies ServerFrame);
  open('https://example.com/not-allowed');
  assert.match(s.texts.at(-1) ?? '', /Refused a request from the capsule \(open-url https:\/\/example\.com\/not-allowed\)/);
  assert.deepEqual(s.log.at(-1), { action: 'open-url', target: 'https://example.com/not-allowed', result: 'refused' });
  s.allowUpstream = true;
  open('https://example.com/a');
  assert.match(s.texts.at(-1) ?? '', /Refused a request from the capsule/);
  s.gesture('palette-key');
  open('https://example.com/b');
  open('https://example.com/c');
  await pollUntil('one open', () => opener.opened.length === 1);
  s.gesture('palette-key');
  now += 10_000;
  open('https://example.com/late');
  // A modified click forwarded to an upstream capsule is a gesture too (and the report still goes through).
  assert.equal(s.hook?.(mouse(1, 1, { alt: true })), false);
  open('javascript:alert(1)');
  await pollUntil('the refusal', () => s.texts.some((n) => n.startsWith('Link refused')), { last: () => s.texts });
  assert.deepEqual(opener.opened, ['https://example.com/b']);
  // Our own capsule never asks: HostOpenUrl is ignored even right after a gesture.
  const ours = setup();
  ours.s.gesture('palette-key');
  ours.s.emitFrame({ type: 'HostOpenUrl', url: 'https://example.com/x' } satisfies ServerFrame);
  assert.deepEqual(ours.opener.opened, []);
});

test('link feature: a link the capsule resolved opens only after the operator confirms its exact target', async () => {
  const { s, opener } = setup();
  s.modes({});
  // The screen model says the clicked cell holds a hyperlink to evil.example (whatever the screen shows).
  s.screen.set('2,4', { kind: 'osc8', text: 'https://evil.example/phish' });
  s.confirmAnswer = false;
  s.hook?.(mouse(5, 3, { ctrl: true }));
  await pollUntil('the cancel notice', () => s.texts.includes('Not opened: https://evil.example'), { last: () => s.texts });
  assert.deepEqual(s.confirms, [{ kind: 'url', target: 'https://evil.example/phish', hyperlink: true }]);
  assert.deepEqual(opener.opened, []);
  assert.deepEqual(s.log.at(-1), { action: 'open-url', target: 'https://evil.example/phish', result: 'cancelled' });
  s.confirmAnswer = true;
  s.screen.set('cursor', { kind: 'text', text: 'https://example.com/docs?token=secret' });
  await s.actions.get('open-link-under-cursor')?.run();
  assert.deepEqual(s.confirms.at(-1), { kind: 'url', target: 'https://example.com/docs?token=secret', hyperlink: false });
  assert.deepEqual(opener.opened, ['https://example.com/docs?token=secret']);
  // The log never holds a query string.
  assert.deepEqual(s.log.at(-1), { action: 'open-url', target: 'https://example.com/docs?…', result: 'ok' });
});

test('link feature: the offered link is shown in its palette entry; choosing that entry opens exactly it, a changed offer is refused', async () => {
  const { s, opener } = setup();
  s.offered = 'https://example.com/offer';
  s.openPalette();
  // Until the capsule answered, the entry is pending: choosing it runs nothing and says why.
  assert.equal(s.actions.get('open-offered-link')?.title, 'Open offered link (reading the offer…)');
  assert.equal(await s.choose('open-offered-link'), 'Still reading the offer; choose it once it shows');
  assert.deepEqual(s.log.at(-1), {
    action: 'open-url',
    target: 'the offered link (not yet shown)',
    result: 'refused',
    detail: 'chosen while the palette was still reading the offer',
  });
  await pollUntil('the entry to show the offer', () => s.actions.get('open-offered-link')?.title === 'Open offered link: https://example.com/offer');
  await s.choose('open-offered-link');
  assert.deepEqual(opener.opened, ['https://example.com/offer']);
  assert.deepEqual(s.confirms, []);
  // The capsule changed the offer after the palette showed it: refused, never opened nor asked about.
  s.openPalette();
  await pollUntil('the entry to show the offer', () => s.targets.get('open-offered-link')?.target === 'https://example.com/offer');
  s.offered = 'https://evil.example/swap';
  await s.choose('open-offered-link');
  assert.deepEqual(s.confirms, []);
  assert.deepEqual(opener.opened, ['https://example.com/offer']);
  assert.match(s.texts.at(-1) ?? '', /^Not opened: the offered link changed after the palette showed it \(now https:\/\/evil\.example\/swap\)/);
  assert.deepEqual(s.log.at(-1), {
    action: 'open-url',
    target: 'https://example.com/offer',
    result: 'refused',
    detail: 'the offer changed after the palette showed it: now https://evil.example/swap',
  });
});

test('link feature: an answer for an opening that closed never shows; nothing offered says so', async () => {
  const { s, opener } = setup();
  s.offered = 'https://example.com/late';
  s.openPalette();
  s.closePalette();
  s.offered = null;
  s.openPalette();
  await pollUntil('the entry to show the answer', () => s.targets.has('open-offered-link'));
  // Both answers came: the first opening's (a link) was dropped, the second's (none) drawn.
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(s.targets.get('open-offered-link'), { title: 'Open offered link', target: null, literal: false });
  await s.choose('open-offered-link');
  assert.equal(s.texts.at(-1), 'No link has been offered (inside the session: jackin-capsule open-url <url>)');
  assert.deepEqual(opener.opened, []);
});

test('link feature: an offered link the entry could not show whole is confirmed in the prompt; a login link says it forwards', async () => {
  const { s, opener } = setup();
  s.offered = `https://example.com/${'x'.repeat(80)}`;
  s.openPalette();
  await pollUntil('the entry to show the offer', () => s.actions.get('open-offered-link')?.title.startsWith('Open offered link: https://example.com/x'));
  await s.choose('open-offered-link', false);
  assert.deepEqual(
    s.confirms.map((c) => c.target),
    [s.offered],
  );
  assert.deepEqual(opener.opened, [s.offered]);
  // A hook that would bind a port for this link: its entry words come after the title, never cut.
  s.addUrlOpenHook((href) => (href.startsWith('http://localhost:7803/') ? { entry: 'forwards port 7803', run: async () => {} } : null));
  s.offered = 'http://localhost:7803/callback';
  s.openPalette();
  await pollUntil('the entry to show the offer', () => s.targets.has('open-offered-link'));
  assert.deepEqual(s.targets.get('open-offered-link'), {
    title: 'Open offered link: http://localhost:7803/callback',
    suffix: ' (forwards port 7803)',
    target: 'http://localhost:7803/callback',
    literal: true,
  });
});

test('link feature: a link the opener fails to open is offered to copy (Copy link not opened, k); it is copied only when chosen', async () => {
  const s = new FakeSession({ resolve: 1, modes: 1 });
  const written: string[] = [];
  const writer = { name: 'rec', reason: 'test', write: async (t: string) => void written.push(t) };
  let fail: Error = new JackinError('E_OPENER_FAILED', 'opener xdg-open exited with status 3; check that it is installed');
  const opener: Opener = {
    openUrl: () => Promise.reject(fail),
    openFile: () => Promise.reject(new Error('not used')),
  };
  const feature = installLinkFeature(s, { env: {}, opener, writer });
  assert.equal(s.actions.get('copy-link-not-opened')?.key, 'k');
  await s.actions.get('copy-link-not-opened')!.run(undefined, undefined);
  assert.deepEqual(s.texts, ['No link failed to open in this session']);
  s.screen.set('cursor', { kind: 'text', text: 'https://example.com/path?q=1' });
  await feature.openLinkAt(null);
  assert.equal(
    s.texts.at(-1),
    'Could not open https://example.com: opener xdg-open exited with status 3; check that it is installed; copy it with the palette: Copy link not opened (k)',
  );
  assert.equal(s.actions.get('copy-link-not-opened')?.title, 'Copy link not opened: https://example.com');
  assert.deepEqual(written, [], 'the failure copies nothing by itself');
  await s.actions.get('copy-link-not-opened')!.run(undefined, undefined);
  assert.deepEqual(written, ['https://example.com/path?q=1']);
  assert.equal(s.texts.at(-1), 'Copied https://example.com to the clipboard (rec)');
  assert.deepEqual(s.log.at(-1), { action: 'copy-link', target: 'https://example.com/path?\u2026', result: 'ok', detail: 'a link that did not open' });
  // A long reason is cut, never the way to copy at the notice's end.
  fail = new JackinError('E_OPENER_FAILED', `opener xdg-open exited with status 3: ${'x'.repeat(600)}`);
  await feature.openLinkAt(null);
  assert.ok(s.texts.at(-1)!.endsWith('…; copy it with the palette: Copy link not opened (k)'), s.texts.at(-1));
  assert.ok(s.texts.at(-1)!.length <= NOTICE_MAX_COLUMNS);
  // A refusal (the rate limit) is policy, not a missing browser: no copy offered, the last failed link kept.
  fail = new JackinError('E_RATE_LIMITED', 'too many opens');
  s.screen.set('cursor', { kind: 'text', text: 'https://other.example/' });
  await feature.openLinkAt(null);
  assert.equal(s.texts.at(-1), 'Link not opened: too many opens');
  await s.actions.get('copy-link-not-opened')!.run(undefined, undefined);
  assert.deepEqual(written, ['https://example.com/path?q=1', 'https://example.com/path?q=1']);
  feature.dispose();
});
