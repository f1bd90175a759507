// End-to-end: program notifications on the host desktop and focus reports (issue 37), tmux as the
// operator's terminal. The desktop is a real freedesktop notification service (dunst on a private session
// bus, recording what it receives) reached by the real notify-send, or JACKIN_NOTIFIER=command: pointed at a
// recorder. Focus reports are typed into the pane as the operator's terminal would send them.
// The hostile-program tests (issue 43) acted before their fix: a notification whose desktop notifier failed
// (a bus without a notification service, a command: notifier that exits 1) was drawn as a host notice,
// title first, with no `capsule:` mark; the command: notifier got option-shaped text with no `--` before
// it; titles and the app name posed as jackin's.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { emitterCommand, fixtureCommand, paneFor, startSession } from './helpers/jackin-cli.ts';
import { startBusWithoutNotifications, startNotificationService } from './helpers/notification-service.ts';
import { commandNotifier } from './helpers/command-notifier.ts';
import { pollUntil } from './helpers/poll.ts';
import { pipePaneOutput, shellQuote, type TmuxPane } from './helpers/tmux.ts';
import { readActions } from '../src/host/instances/action-log.ts';

const notifyLog = async (pane: TmuxPane, name: string) => (await readActions(pane.jackinHome, name)).filter((a) => a.action === 'notify');

test("notify: OSC 9 and OSC 777 reach a real notification service through notify-send, with inert text and the program's title", async (t) => {
  const service = await startNotificationService();
  t.after(() => service.stop());
  const pane = await paneFor(t, { env: service.env });
  await startSession(pane, 'notify-desktop');
  // A DEL and a right-to-left override in the body; the window title names the first notification.
  await pane.typeLine(`printf '\\e]2;agent: fix bug\\a\\e]9;done \\177 \\342\\200\\256gnp.exe\\a\\e]777;notify;Build;all green\\a'; echo sent-$((1 + 1))`);
  await pane.waitForText(/^sent-2$/m);
  const got = await pollUntil('two notifications at the service', () => service.received().length >= 2 && service.received(), { last: service.received });
  assert.deepEqual(got, [
    { appName: 'jackin (program)', summary: 'agent: fix bug', body: 'done \\x7f \\u202egnp.exe' },
    { appName: 'jackin (program)', summary: 'Build', body: 'all green' },
  ]);
  const logged = await pollUntil(
    'both in the host log',
    async () => (await notifyLog(pane, 'notify-desktop')).length === 2 && notifyLog(pane, 'notify-desktop'),
  );
  assert.deepEqual(
    logged.map((a) => [a.target, a.result]),
    [
      ['agent: fix bug', 'ok'],
      ['Build', 'ok'],
    ],
  );
});

test('notify: the command: notifier gets --, the title and the body as its last three arguments; past 3 in 10 s they are dropped', async (t) => {
  const rec = commandNotifier(t);
  const pane = await paneFor(t, { env: rec.env });
  await startSession(pane, 'notify-command');
  await pane.typeLine(`for i in 1 2 3 4 5; do printf '\\e]9;note %s\\a' $i; done; echo sent-$((2 + 2))`);
  await pane.waitForText(/^sent-4$/m);
  await pollUntil('three calls', () => rec.calls().length === 3, { last: rec.calls });
  assert.deepEqual(rec.calls(), ['--from-jackin|--|notify-command|note 1', '--from-jackin|--|notify-command|note 2', '--from-jackin|--|notify-command|note 3']);
  // The log holds exactly the three that passed: the other two never left the filter.
  await pollUntil('three in the host log', async () => (await notifyLog(pane, 'notify-command')).length === 3);
});

test('notify: JACKIN_NOTIFY=deny sends nothing to the notifier', async (t) => {
  const rec = commandNotifier(t);
  const pane = await paneFor(t, { env: { ...rec.env, JACKIN_NOTIFY: 'deny' } });
  await startSession(pane, 'notify-deny');
  await pane.typeLine(`printf '\\e]9;secret\\a\\e]777;notify;T;B\\a'; echo sent-$((3 + 3))`);
  await pane.waitForText(/^sent-6$/m);
  // A notification that did pass would be logged right after its output; wait for an event after it instead.
  await pane.typeLine('echo after-$((4 + 4))');
  await pane.waitForText(/^after-8$/m);
  assert.deepEqual(rec.calls(), []);
  assert.deepEqual(await notifyLog(pane, 'notify-deny'), []);
});

test('focus: reports reach a program that asked for them (?1004h), never one that did not', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'jackin-focus-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const pane = await paneFor(t);
  const asked = join(dir, 'asked.bin');
  await startSession(pane, 'focus-asked', 'RAW-RECORDER-READY', fixtureCommand('raw-recorder.mjs', asked, 'focus'));
  await pane.sendBytes([...Buffer.from('\x1b[O\x1b[Ix', 'latin1')]);
  await pollUntil('the focus reports at the program', () => readFileSync(asked, 'latin1') === '\x1b[O\x1b[Ix', { last: () => readFileSync(asked, 'latin1') });
});

test('focus: with JACKIN_NOTIFY_BELL the host reads focus itself: a bell notifies only while unfocused, and the program that never asked gets no reports', async (t) => {
  const rec = commandNotifier(t);
  const dir = mkdtempSync(join(tmpdir(), 'jackin-focus-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const pane = await paneFor(t, { env: { ...rec.env, JACKIN_NOTIFY_BELL: 'unfocused' } });
  const input = join(dir, 'input.bin');
  await startSession(pane, 'focus-bell', 'RAW-RECORDER-READY', fixtureCommand('raw-recorder.mjs', input, 'bell'));
  const bell = async (n: number): Promise<void> => {
    await pane.sendBytes([...Buffer.from('b')]);
    await pollUntil(`the program to ring ${n} time(s)`, () => readFileSync(input, 'latin1').split('b').length - 1 === n);
    await pane.waitForScreen(`${n} rang line(s)`, (s) => s.split('rang').length - 1 === n);
  };
  await bell(1); // focus unknown: no notification
  await pane.sendBytes([...Buffer.from('\x1b[I', 'latin1')]);
  await bell(2); // focused: none either
  await pane.sendBytes([...Buffer.from('\x1b[O', 'latin1')]);
  // The focus report travels to the host's input; ring until the host has read it.
  await pollUntil(
    'a bell while unfocused to notify',
    async () => {
      if (rec.calls().length > 0) return true;
      await pane.sendBytes([...Buffer.from('b')]);
      return false;
    },
    { intervalMs: 500, last: rec.calls },
  );
  assert.deepEqual(rec.calls(), ['--from-jackin|--|focus-bell|The program rang the bell']);
  assert.equal(readFileSync(input, 'latin1').replaceAll('b', ''), '', 'the focus reports never reached the program, which did not ask');
});

/** What was written just before each place `needle` was written to the pane (up to 40 characters). */
function writtenBefore(written: string, needle: string): string[] {
  const out: string[] = [];
  for (let i = written.indexOf(needle); i !== -1; i = written.indexOf(needle, i + 1)) out.push(written.slice(Math.max(0, i - 40), i));
  return out;
}

const HOST_FAILURE_NOTICE = /program notification could not be shown on the desktop/;

test("hostile program: a command: notifier that fails never turns the program's text into a host notice; it gets the text after --", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'jackin-notifier-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const args = join(dir, 'args.txt');
  const script = join(dir, 'failing-notifier');
  // Records its arguments one a line, echoes them on stderr (a notifier may), and fails.
  writeFileSync(script, `#!/bin/sh\nfor a in "$@"; do printf '%s\\n' "$a"; done > ${shellQuote(args)}\necho "NOTIFIER-STDERR $*" >&2\nexit 1\n`);
  chmodSync(script, 0o755);
  const pane = await paneFor(t, { env: { JACKIN_NOTIFIER: `command:${script} --from-jackin` } });
  await startSession(pane, 'notify-fails');
  const written = await pipePaneOutput(t, pane, 'utf8');
  // A title shaped like jackin's own notice of an opened link, and an option-shaped body.
  const title = '✓ Opened https://x.example/evil (hyperlink target)';
  await pane.typeLine(emitterCommand(t, `\\033]777;notify;${title};--urgency=critical\\007`));
  await pane.waitForText(/^emitted-done$/m);
  await pollUntil('the notifier to run', () => existsSync(args) && readFileSync(args, 'utf8').endsWith('\n'));
  // The program's text reaches the pane only as a capsule notice, never as the host's.
  await pane.waitForText('Opened https://x.example/evil', { timeoutMs: 15_000 });
  const before = writtenBefore(written(), 'Opened https://x.example/evil');
  assert.ok(before.length > 0);
  for (const b of before) assert.match(b, /capsule: ✓ $/u, `the program's title drawn unmarked, after ${JSON.stringify(b)}`);
  assert.match(written(), HOST_FAILURE_NOTICE, 'the host says itself that the desktop notification failed');
  assert.doesNotMatch(written(), /NOTIFIER-STDERR/, "the notifier's stderr (which echoes the program's text) is not quoted");
  const logged = await pollUntil(
    'the failure in the host log',
    async () => (await notifyLog(pane, 'notify-fails')).length === 1 && notifyLog(pane, 'notify-fails'),
  );
  assert.equal(logged[0]?.result, 'failed');
  assert.deepEqual(readFileSync(args, 'utf8').split('\n').slice(0, -1), ['--from-jackin', '--', title, '--urgency=critical']);
});

test('hostile program: notify-send on a bus with no notification service (the default choice): the host says so in its own words, the titles as capsule notices', async (t) => {
  const bus = await startBusWithoutNotifications();
  t.after(() => bus.stop());
  const pane = await paneFor(t, { env: bus.env });
  await startSession(pane, 'notify-nobus');
  const written = await pipePaneOutput(t, pane, 'utf8');
  await pane.typeLine(emitterCommand(t, '\\033]777;notify;jackin: action required;press y to allow\\007\\033]777;notify;Second title;more\\007'));
  await pane.waitForText(/^emitted-done$/m);
  await pollUntil('both failures in the host log', async () => (await notifyLog(pane, 'notify-nobus')).filter((a) => a.result === 'failed').length === 2);
  await pane.waitForText('Second title', { timeoutMs: 20_000 });
  for (const needle of ['action required', 'Second title']) {
    const before = writtenBefore(written(), needle);
    assert.ok(before.length > 0, `${needle} was shown`);
    for (const b of before) assert.match(b, /capsule: (program: )?(jackin: )?$/u, `the program's title drawn unmarked, after ${JSON.stringify(b)}`);
  }
  assert.match(written(), HOST_FAILURE_NOTICE);
  await pane.waitForText('capsule: Second title: more', { timeoutMs: 20_000 });
});

test("hostile program: titles posing as jackin arrive marked as the program's, under a marked app name, and option-shaped text arrives as text", async (t) => {
  const service = await startNotificationService();
  t.after(() => service.stop());
  const pane = await paneFor(t, { env: service.env });
  await startSession(pane, 'notify-pose');
  // Cyrillic а in the second title; the third is option-shaped.
  await pane.typeLine(
    emitterCommand(
      t,
      '\\033]777;notify;jackin: action required;--urgency=critical\\007\\033]777;notify;[J\u0430ckin] approve;x\\007\\033]777;notify;-i /etc/passwd;-u critical\\007',
    ),
  );
  await pane.waitForText(/^emitted-done$/m);
  const got = await pollUntil('three notifications at the service', () => service.received().length >= 3 && service.received(), { last: service.received });
  assert.deepEqual(got, [
    { appName: 'jackin (program)', summary: 'program: jackin: action required', body: '--urgency=critical' },
    { appName: 'jackin (program)', summary: 'program: [J\u0430ckin] approve', body: 'x' },
    { appName: 'jackin (program)', summary: '-i /etc/passwd', body: '-u critical' },
  ]);
});
