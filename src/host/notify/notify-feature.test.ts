import { test } from 'node:test';
import assert from 'node:assert/strict';
import { JackinError } from '../../errors.ts';
import { FakeFeatureSession } from '../../../test/helpers/fake-feature-session.ts';
import { effectiveNotifyMode, notifyModeFromEnv, type Notifier, type NotifierSelection } from '../platform/notifier.ts';
import { installNotifyFeature } from './notify-feature.ts';

function recorder(available = true, fail = false): Notifier & { shown: Array<[string, string]> } {
  const said = new Error('rec: the program said this');
  const shown: Array<[string, string]> = [];
  const selection: NotifierSelection = { choice: { kind: 'command', argv: ['rec'] }, reason: 'test', available };
  return {
    shown,
    selection,
    name: 'rec',
    notify: async (title, body) => {
      if (fail) throw new JackinError('E_NOTIFIER_FAILED', 'rec failed (exit 1)', { cause: said });
      shown.push([title, body]);
    },
  };
}

const notification = (body: string, title: string | null = null) => ({ type: 'notification' as const, source: 'osc9' as const, title, body });

test('notify mode: JACKIN_NOTIFY, else desktop where the notifier answers, else terminal; a bad value is E_BAD_NOTIFY_MODE', () => {
  assert.equal(notifyModeFromEnv({}), null);
  assert.equal(notifyModeFromEnv({ JACKIN_NOTIFY: 'Both' }), 'both');
  assert.equal(notifyModeFromEnv({ JACKIN_NOTIFY: 'off' }), 'deny');
  assert.throws(
    () => notifyModeFromEnv({ JACKIN_NOTIFY: 'loud' }),
    (e) => e instanceof JackinError && e.code === 'E_BAD_NOTIFY_MODE',
  );
  assert.equal(effectiveNotifyMode({}, recorder(true)), 'desktop');
  assert.equal(effectiveNotifyMode({}, recorder(false)), 'terminal');
  assert.equal(effectiveNotifyMode({ JACKIN_NOTIFY: 'terminal' }, recorder(true)), 'terminal');
});

test("notify: desktop mode sends the title (the program's, else the instance) and body to the notifier, off the terminal, logged", async () => {
  const s = new FakeFeatureSession({});
  const n = recorder();
  const f = installNotifyFeature(s, { env: {}, instance: 'agent', notifier: n });
  assert.equal(f.mode, 'desktop');
  assert.deepEqual(s.routes, [{ terminal: false, bell: false }]);
  s.terminalEmitter.fire(notification('done'));
  s.programTitle = 'claude: fix bug';
  s.terminalEmitter.fire(notification('needs input'));
  s.terminalEmitter.fire(notification('from 777', 'Build'));
  await f.idle();
  assert.deepEqual(n.shown, [
    ['agent', 'done'],
    ['claude: fix bug', 'needs input'],
    ['Build', 'from 777'],
  ]);
  assert.deepEqual(
    s.log.map((l) => [l.action, l.target, l.result, l.detail]),
    [
      ['notify', 'agent', 'ok', 'rec; osc9: done'],
      ['notify', 'claude: fix bug', 'ok', 'rec; osc9: needs input'],
      ['notify', 'Build', 'ok', 'rec; osc9: from 777'],
    ],
  );
});

test("notify: a title that starts like jackin's reaches the notifier marked as the program's", async () => {
  const s = new FakeFeatureSession({});
  const n = recorder();
  const f = installNotifyFeature(s, { env: {}, instance: 'agent', notifier: n });
  s.terminalEmitter.fire(notification('press y', 'Jackin: action required'));
  s.terminalEmitter.fire(notification('ok', 'Build'));
  await f.idle();
  assert.deepEqual(n.shown, [
    ['program: Jackin: action required', 'press y'],
    ['Build', 'ok'],
  ]);
});

test('notify: a failing notifier: the notification is a capsule notice, the host says so once a session quoting nothing of it, the log has the reason; terminal mode only logs', async () => {
  const s = new FakeFeatureSession({});
  const f = installNotifyFeature(s, { env: {}, instance: 'agent', notifier: recorder(true, true) });
  s.terminalEmitter.fire(notification('done'));
  s.terminalEmitter.fire(notification('--urgency=critical', 'jackin: approve'));
  await f.idle();
  assert.deepEqual(
    s.log.map((l) => [l.result, l.detail]),
    [
      ['failed', 'rec failed (exit 1): rec: the program said this; osc9: done'],
      ['failed', 'rec failed (exit 1): rec: the program said this; osc9: --urgency=critical'],
    ],
  );
  assert.deepEqual(s.notices, [
    { level: 'warning', text: 'A program notification could not be shown on the desktop (rec failed (exit 1)); failed ones show as capsule notices' },
  ]);
  assert.deepEqual(s.containerNotices, [
    { level: 'info', text: 'capsule: agent: done' },
    { level: 'info', text: 'capsule: program: jackin: approve: --urgency=critical' },
  ]);
  const t = new FakeFeatureSession({});
  const n = recorder(false);
  installNotifyFeature(t, { env: {}, instance: 'agent', notifier: n });
  assert.deepEqual(t.routes, [{ terminal: true, bell: false }]);
  t.terminalEmitter.fire(notification('done'));
  assert.deepEqual(n.shown, []);
  assert.deepEqual(
    t.log.map((l) => [l.result, l.detail]),
    [['ok', 'terminal; osc9: done']],
  );
});

test('notify: JACKIN_NOTIFY_BELL asks for focus reports and routes the bell only while the terminal is unfocused', () => {
  const s = new FakeFeatureSession({});
  const f = installNotifyFeature(s, { env: { JACKIN_NOTIFY_BELL: 'unfocused' }, instance: 'agent', notifier: recorder() });
  assert.deepEqual(s.hostNeeds, [{ focusReports: true }]);
  s.focus(false);
  s.focus(true);
  assert.deepEqual(s.routes, [
    { terminal: false, bell: false },
    { terminal: false, bell: true },
    { terminal: false, bell: false },
  ]);
  f.dispose();
  assert.deepEqual(s.hostNeeds.at(-1), { focusReports: false });
  const d = new FakeFeatureSession({});
  assert.equal(installNotifyFeature(d, { env: { JACKIN_NOTIFY: 'deny', JACKIN_NOTIFY_BELL: 'on' }, instance: 'a', notifier: recorder() }).mode, 'deny');
  assert.deepEqual(d.routes, []);
  assert.deepEqual(d.hostNeeds, []);
});
