// Every JACKIN_* on/off switch is read through envSwitch (src/policy/env-switch.ts), and every variable with
// values of its own takes the same off-words for its off value: one table over every switch and its reader.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { OFF_WORDS, ON_WORDS, SWITCHES, type SwitchName } from '../src/policy/env-switch.ts';
import { linksEnabled } from '../src/policy/url-safety.ts';
import { mouseCaptureEnabled } from '../src/host/links/link-feature.ts';
import { pasteFilePathsEnabled, pasteImagePathsEnabled } from '../src/host/paste/paste-feature.ts';
import { loginForwardEnabled } from '../src/host/forward/login-forward-feature.ts';
import { portOffersWanted } from '../src/host/forward/port-offers-feature.ts';
import { confirmCapsuleTargets, upstreamRequestsAllowed } from '../src/host/session/host-request-policy.ts';
import { filterOptionsFromEnv } from '../src/host/terminal/terminal-filter/filter.ts';
import { bellWanted, chooseNotifier, notifyModeFromEnv } from '../src/host/platform/notifier.ts';
import { copyModeFromEnv } from '../src/host/copy/copy-feature.ts';
import { chooseBackend } from '../src/host/platform/clipboard/select.ts';
import { scannerOptionsFromEnv } from '../src/host/terminal/input-scan.ts';
import { keysHintEnabled } from '../src/host/session/keys-hint.ts';
import { altScreenWanted } from '../src/host/terminal/terminal.ts';

type Env = Record<string, string | undefined>;

/** The function each switch is read by, where the program reads it. */
const READERS: Record<SwitchName, (env: Env) => boolean> = {
  JACKIN_OPEN_LINKS: linksEnabled,
  JACKIN_MOUSE: (env) => mouseCaptureEnabled(env),
  JACKIN_PASTE_IMAGE_PATHS: pasteImagePathsEnabled,
  JACKIN_PASTE_FILE_PATHS: pasteFilePathsEnabled,
  JACKIN_LOGIN_FORWARD: loginForwardEnabled,
  JACKIN_PORT_OFFERS: (env) => portOffersWanted(env, false),
  JACKIN_CONFIRM: confirmCapsuleTargets,
  JACKIN_UPSTREAM_REQUESTS: (env) => upstreamRequestsAllowed(env),
  JACKIN_GRAPHICS: (env) => filterOptionsFromEnv(env).graphics === true,
  JACKIN_NOTIFY_BELL: bellWanted,
  JACKIN_HINT: keysHintEnabled,
  JACKIN_ALT_SCREEN: altScreenWanted,
};

const spellings = (w: string): string[] => [w, w.toUpperCase(), ` ${w} `];

test('every switch reads one vocabulary: off-words off, on-words on, anything else its default', () => {
  for (const [name, read] of Object.entries(READERS) as [SwitchName, (env: Env) => boolean][]) {
    const dflt = SWITCHES[name].default;
    assert.equal(read({}), dflt, `${name} unset`);
    for (const v of ['', 'maybe']) assert.equal(read({ [name]: v }), dflt, `${name}=${JSON.stringify(v)}`);
    for (const w of OFF_WORDS.flatMap(spellings)) assert.equal(read({ [name]: w }), false, `${name}=${JSON.stringify(w)}`);
    for (const w of ON_WORDS.flatMap(spellings)) assert.equal(read({ [name]: w }), true, `${name}=${JSON.stringify(w)}`);
  }
});

test('JACKIN_LOGIN_FORWARD=no turns the login forward off, as JACKIN_PASTE_FILE_PATHS=no turns staging off', () => {
  assert.equal(loginForwardEnabled({ JACKIN_LOGIN_FORWARD: 'no' }), false);
  assert.equal(pasteFilePathsEnabled({ JACKIN_PASTE_FILE_PATHS: 'no' }), false);
});

test('variables with values of their own take the off-words for their off value', () => {
  const linux = (env: Env) => ({ env, platform: 'linux' as const, wsl: false });
  for (const w of OFF_WORDS.flatMap(spellings)) {
    assert.equal(notifyModeFromEnv({ JACKIN_NOTIFY: w }), 'deny', `JACKIN_NOTIFY=${w}`);
    assert.equal(filterOptionsFromEnv({ JACKIN_NOTIFY: w }).notify, false, `JACKIN_NOTIFY=${w} (filter)`);
    assert.equal(copyModeFromEnv({ JACKIN_COPY: w }), 'deny', `JACKIN_COPY=${w}`);
    assert.deepEqual(chooseBackend(linux({ JACKIN_CLIPBOARD: w, DISPLAY: ':0' })).choice, { kind: 'none' }, `JACKIN_CLIPBOARD=${w}`);
    assert.deepEqual(
      chooseNotifier({ ...linux({ JACKIN_NOTIFIER: w, DBUS_SESSION_BUS_ADDRESS: 'x' }), onPath: () => true }).choice,
      { kind: 'none' },
      `JACKIN_NOTIFIER=${w}`,
    );
    assert.deepEqual(scannerOptionsFromEnv({ JACKIN_PASTE_KEY: w, JACKIN_PALETTE_KEY: w }), { pasteKey: null, paletteKey: null }, `keys=${w}`);
  }
  // Their own values are unchanged.
  assert.equal(notifyModeFromEnv({ JACKIN_NOTIFY: 'terminal' }), 'terminal');
  assert.equal(filterOptionsFromEnv({ JACKIN_NOTIFY: 'terminal' }).notify, true);
  assert.equal(copyModeFromEnv({ JACKIN_COPY: 'allow' }), 'allow');
  assert.deepEqual(chooseBackend(linux({ JACKIN_CLIPBOARD: 'xclip' })), { choice: { kind: 'xclip' }, reason: 'JACKIN_CLIPBOARD=xclip' });
});
