import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hasCode } from '../../errors.ts';
import { startNotificationService } from '../../../test/helpers/notification-service.ts';
import { pollUntil } from '../../../test/helpers/poll.ts';
import { removeTestDir } from '../../../test/helpers/test-run.ts';
import { chooseNotifier, createNotifier, notifierCommand, windowsToastScript, type ChooseNotifierInput } from './notifier.ts';

const linux = (env: Record<string, string>, onPath: string[] = ['notify-send'], wsl = false): ChooseNotifierInput => ({
  env,
  platform: 'linux',
  wsl,
  onPath: (f) => onPath.includes(f),
});

test('notifier choice: notify-send with a session bus, osascript on macOS, PowerShell on Windows and WSL, none otherwise', () => {
  assert.deepEqual(chooseNotifier(linux({ DBUS_SESSION_BUS_ADDRESS: 'unix:path=/x' })), {
    choice: { kind: 'notify-send' },
    reason: 'notify-send and a session bus',
    available: true,
  });
  const noBus = chooseNotifier(linux({ XDG_RUNTIME_DIR: '/nonexistent-run' }));
  assert.equal(noBus.choice.kind, 'notify-send');
  assert.equal(noBus.available, false);
  assert.deepEqual(chooseNotifier({ ...linux({}, ['osascript']), platform: 'darwin' }).choice, { kind: 'macos' });
  assert.deepEqual(chooseNotifier({ ...linux({}, ['powershell.exe']), platform: 'win32' }).choice, { kind: 'windows', wsl: false });
  assert.deepEqual(chooseNotifier(linux({}, ['powershell.exe'], true)), { choice: { kind: 'windows', wsl: true }, reason: 'WSL', available: true });
  // Under WSL, notify-send counts only with a session bus; otherwise Windows shows the toast.
  assert.deepEqual(chooseNotifier(linux({}, ['notify-send', 'powershell.exe'], true)).choice, { kind: 'windows', wsl: true });
  assert.deepEqual(chooseNotifier(linux({ DBUS_SESSION_BUS_ADDRESS: 'x' }, ['notify-send', 'powershell.exe'], true)).choice, { kind: 'notify-send' });
  assert.deepEqual(chooseNotifier(linux({}, [])).choice, { kind: 'none' });
  assert.equal(chooseNotifier(linux({}, [])).available, false);
});

test('notifier choice: JACKIN_NOTIFIER forces one, command: is split shell-like, anything else is E_NOTIFIER_CONFIG', () => {
  assert.deepEqual(chooseNotifier(linux({ JACKIN_NOTIFIER: 'command:my-notify --urgent "two words"' }, ['my-notify'])), {
    choice: { kind: 'command', argv: ['my-notify', '--urgent', 'two words'] },
    reason: 'JACKIN_NOTIFIER=command:my-notify --urgent "two words"',
    available: true,
  });
  assert.equal(chooseNotifier(linux({ JACKIN_NOTIFIER: 'none', DBUS_SESSION_BUS_ADDRESS: 'x' })).choice.kind, 'none');
  assert.equal(chooseNotifier(linux({ JACKIN_NOTIFIER: 'macos' }, ['osascript'])).choice.kind, 'macos');
  for (const bad of ['growl', 'command:', 'command:"unterminated']) {
    assert.throws(
      () => chooseNotifier(linux({ JACKIN_NOTIFIER: bad })),
      (e) => hasCode(e, 'E_NOTIFIER_CONFIG'),
      bad,
    );
  }
});

test("notifier argv: notify-send ends its options before the title, under the program's app name; command: gets --, title and body last", () => {
  assert.deepEqual(notifierCommand({ kind: 'notify-send' }, '-t 1', 'done'), {
    file: 'notify-send',
    args: ['--app-name=jackin (program)', '--', '-t 1', 'done'],
  });
  // notify-send unescapes the body (not the title): a backslash goes doubled.
  assert.deepEqual(notifierCommand({ kind: 'notify-send' }, 'a\\x', 'b\\x1b\\n'), {
    file: 'notify-send',
    args: ['--app-name=jackin (program)', '--', 'a\\x', 'b\\\\x1b\\\\n'],
  });
  // The body is markup to most notification services: a tag or an entity is shown as the text it is.
  assert.deepEqual(notifierCommand({ kind: 'notify-send' }, 'a <b>&', '<a href="https://x.example/">click</a> &amp; <img src="file:///etc/passwd"/> 1>0'), {
    file: 'notify-send',
    args: [
      '--app-name=jackin (program)',
      '--',
      'a <b>&',
      '&lt;a href="https://x.example/"&gt;click&lt;/a&gt; &amp;amp; &lt;img src="file:///etc/passwd"/&gt; 1&gt;0',
    ],
  });
  assert.deepEqual(notifierCommand({ kind: 'command', argv: ['n', '-x'] }, '--urgency=critical', '-i /etc/passwd'), {
    file: 'n',
    args: ['-x', '--', '--urgency=critical', '-i /etc/passwd'],
  });
  assert.equal(notifierCommand({ kind: 'none' }, 'T', 'B'), null);
});

const OSASCRIPT_PROGRAM = ['-e', 'on run argv', '-e', 'display notification (item 2 of argv) with title (item 1 of argv)', '-e', 'end run', '--'];

test("notifier argv: macOS osascript gets the text as its run handler's arguments after --, never in the script", () => {
  // Curly quotes, a straight quote, a backslash and an option shape: none of it is AppleScript source.
  const title = '” & (do shell script "id") & “';
  assert.deepEqual(notifierCommand({ kind: 'macos' }, title, '-e back\\slash'), { file: 'osascript', args: [...OSASCRIPT_PROGRAM, title, '-e back\\slash'] });
});

test('notifier argv: Windows and WSL run a PowerShell toast as -EncodedCommand, quotes doubled', () => {
  const cmd = notifierCommand({ kind: 'windows', wsl: true }, "it's", 'body ‘x’');
  assert.ok(cmd !== null);
  assert.equal(cmd.file, 'powershell.exe');
  assert.deepEqual(cmd.args.slice(0, 3), ['-NoProfile', '-NonInteractive', '-EncodedCommand']);
  const script = Buffer.from(cmd.args[3]!, 'base64').toString('utf16le');
  assert.equal(script, windowsToastScript("it's", 'body ‘x’'));
  assert.match(script, /CreateTextNode\('it''s'\)/);
  assert.match(script, /CreateTextNode\('body ''x'''\)/);
  // Nothing else is special in a single-quoted string: no $(...) or variable is expanded.
  assert.match(windowsToastScript('‛; Start-Process calc; $(id) ‛', 'b'), /CreateTextNode\('''; Start-Process calc; \$\(id\) '''\)/);
  assert.match(script, /ToastText02/);
  assert.match(script, /CreateToastNotifier\('\{1AC14E77-02E7-4E5D-B744-2EB1AE5198B7\}\\WindowsPowerShell\\v1\.0\\powershell\.exe'\)\.Show/);
});

test('notifier: a command: notifier runs with --, the title and the body last; a failure is E_NOTIFIER_FAILED, its stderr only the cause', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'jackin-notifier-'));
  t.after(() => removeTestDir(dir));
  const script = join(dir, 'rec');
  writeFileSync(script, `#!/bin/sh\nprintf '%s|' "$@" > '${join(dir, 'args')}'\n[ "$3" != fail ] || { echo "said $3" >&2; exit 3; }\n`);
  chmodSync(script, 0o755);
  const n = createNotifier({ env: { ...process.env, JACKIN_NOTIFIER: `command:${script} --flag` } });
  await n.notify('Title here', 'Body, with ; and spaces');
  assert.equal(readFileSync(join(dir, 'args'), 'utf8'), '--flag|--|Title here|Body, with ; and spaces|');
  await assert.rejects(n.notify('fail', 'x'), (e) => {
    assert.ok(hasCode(e, 'E_NOTIFIER_FAILED'));
    assert.equal((e as Error).message, `${script} failed (exit 3)`);
    assert.equal(((e as Error).cause as Error).message, 'said fail');
    return true;
  });
  const missing = createNotifier({ env: { ...process.env, JACKIN_NOTIFIER: `command:${join(dir, 'nope')}` } });
  assert.equal(missing.selection.available, false);
  await assert.rejects(missing.notify('a', 'b'), (e) => hasCode(e, 'E_NOTIFIER_FAILED') && /not installed/.test((e as Error).message));
});

test('notifier: notify-send reaches a real notification service on a private session bus', async (t) => {
  const service = await startNotificationService();
  t.after(() => service.stop());
  const n = createNotifier({ env: { PATH: process.env['PATH'] ?? '', ...service.env } });
  assert.deepEqual(n.selection, { choice: { kind: 'notify-send' }, reason: 'notify-send and a session bus', available: true });
  await n.notify('agent: build', 'Build finished — 3 tests ✓ \\x1b\\n');
  // notify-send returns once the service answered; dunst runs its rule's script just after.
  const got = await pollUntil('the service to record the notification', () => service.received().length > 0 && service.received());
  assert.deepEqual(got, [{ appName: 'jackin (program)', summary: 'agent: build', body: 'Build finished — 3 tests ✓ \\x1b\\n' }]);
});

test('notifier: on macOS and WSL the chosen program runs with exactly the argv built (fakes on PATH record it)', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'jackin-notifier-fakes-'));
  t.after(() => removeTestDir(dir));
  for (const name of ['osascript', 'powershell.exe']) {
    // Each argument on a line of its own, NUL-free: what the program received, exactly.
    writeFileSync(join(dir, name), `#!/bin/sh\nfor a in "$@"; do printf '%s\\n' "$a"; done > '${join(dir, `${name}.args`)}'\n`);
    chmodSync(join(dir, name), 0o755);
  }
  const env = { PATH: `${dir}:/usr/bin:/bin` };
  const mac = createNotifier({ env, platform: 'darwin' });
  assert.deepEqual(mac.selection, { choice: { kind: 'macos' }, reason: 'macOS', available: true });
  await mac.notify('agent "x"', 'done');
  assert.deepEqual(readFileSync(join(dir, 'osascript.args'), 'utf8').split('\n').slice(0, -1), [...OSASCRIPT_PROGRAM, 'agent "x"', 'done']);
  const wsl = createNotifier({ env, platform: 'linux', wsl: true });
  assert.deepEqual(wsl.selection, { choice: { kind: 'windows', wsl: true }, reason: 'WSL', available: true });
  await wsl.notify('agent', "it's done");
  const args = readFileSync(join(dir, 'powershell.exe.args'), 'utf8').split('\n').slice(0, -1);
  assert.deepEqual(args.slice(0, 3), ['-NoProfile', '-NonInteractive', '-EncodedCommand']);
  assert.equal(Buffer.from(args[3]!, 'base64').toString('utf16le'), windowsToastScript('agent', "it's done"));
});
