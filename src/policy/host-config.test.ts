import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { parse as parseToml } from 'smol-toml';
import { JackinError } from '../errors.ts';
import { applyConfig, CONFIG_VARIABLES, configFormat, configVariable, parseConfig } from './host-config.ts';

const configError = (message: RegExp) => (e: unknown) => e instanceof JackinError && e.code === 'E_CONFIG' && message.test(e.message);

test('the keys: every JACKIN_* variable of the guide (but JACKIN_CONFIG itself), by name or short name', () => {
  const guide = readFileSync(new URL('../../docs/guide.md', import.meta.url), 'utf8');
  const section = guide.slice(guide.indexOf('## Environment variables'));
  const table = [...section.matchAll(/^\| `(JACKIN_[A-Z_]+)` \|/gmu)].map((m) => m[1]!).filter((n) => n !== 'JACKIN_CONFIG');
  assert.deepEqual([...CONFIG_VARIABLES].sort(), table.sort());
  assert.equal(configVariable('JACKIN_NOTIFY'), 'JACKIN_NOTIFY');
  assert.equal(configVariable('notify_bell'), 'JACKIN_NOTIFY_BELL');
  for (const key of ['NOTIFY', 'jackin_notify', 'JACKIN_CONFIG', 'config', 'JACKIN_NOPE', 'PATH', '']) assert.equal(configVariable(key), null, key);
});

test('parseConfig: strings, booleans and numbers, as the environment spells them', () => {
  const settings = parseConfig('{"JACKIN_NOTIFY": "off", "mouse": false, "graphics": true, "stage_max_bytes": 1024}', '/c.json', parseToml);
  assert.deepEqual(Object.fromEntries(settings), {
    JACKIN_NOTIFY: 'off',
    JACKIN_MOUSE: 'false',
    JACKIN_GRAPHICS: 'true',
    JACKIN_STAGE_MAX_BYTES: '1024',
  });
  assert.equal(parseConfig('{}', '/c.json', parseToml).size, 0);
});

test('parseConfig: E_CONFIG naming the file and the line, the key or the value, with the fix', () => {
  const cases: Array<[string, RegExp]> = [
    ['{\n  "JACKIN_NOTIFY": "off",\n}', /^config file \/c\.json is not valid JSON at line 3, column 1: write one JSON object/u],
    ['["JACKIN_NOTIFY"]', /^config file \/c\.json is not a JSON object/u],
    ['{"JACKIN_NOTIFYY": "off"}', /^config file \/c\.json: unknown key "JACKIN_NOTIFYY"; the keys are the JACKIN_\* variables/u],
    ['{"JACKIN_CONFIG": "/x"}', /unknown key "JACKIN_CONFIG"/u],
    ['{"notify": "off", "JACKIN_NOTIFY": "on"}', /JACKIN_NOTIFY is set twice/u],
    ['{"notify": null}', /the value of "notify" is not a string, a boolean or a number/u],
    ['{"notify": ["off"]}', /the value of "notify" is not a string/u],
  ];
  for (const [text, message] of cases) assert.throws(() => parseConfig(text, '/c.json', parseToml), configError(message), text);
});

test('applyConfig: the environment wins, even when it sets a variable empty', () => {
  const env: Record<string, string | undefined> = { JACKIN_NOTIFY: 'desktop', JACKIN_COPY: '' };
  const applied = applyConfig(
    new Map([
      ['JACKIN_NOTIFY', 'off'],
      ['JACKIN_COPY', 'deny'],
      ['JACKIN_MOUSE', 'off'],
    ]),
    env,
  );
  assert.deepEqual(applied, ['JACKIN_MOUSE']);
  assert.deepEqual(env, { JACKIN_NOTIFY: 'desktop', JACKIN_COPY: '', JACKIN_MOUSE: 'off' });
});

test('parseConfig: a .toml file is TOML, with its errors located the same way', () => {
  const settings = parseConfig('# mine\nJACKIN_NOTIFY = "off"\nmouse = false\nstage_max_bytes = 1024\n', '/c.toml', parseToml);
  assert.deepEqual(Object.fromEntries(settings), { JACKIN_NOTIFY: 'off', JACKIN_MOUSE: 'false', JACKIN_STAGE_MAX_BYTES: '1024' });
  assert.equal(configFormat('/x/Config.TOML'), 'toml');
  assert.equal(configFormat('/x/config'), 'json');
  const cases: Array<[string, RegExp]> = [
    ['notify = "off"\ncopy = \n', /^config file \/c\.toml is not valid TOML at line 2, column \d+: write JACKIN_\* settings as top-level keys/u],
    ['[jackin]\nnotify = "off"\n', /unknown key "jackin"/u],
    ['[notify]\nmode = "off"\n', /the value of "notify" is not a string/u],
    ['when = 1979-05-27\n', /unknown key "when"/u],
    ['notify = 1979-05-27\n', /the value of "notify" is not a string/u],
  ];
  for (const [text, message] of cases) assert.throws(() => parseConfig(text, '/c.toml', parseToml), configError(message), text);
});
