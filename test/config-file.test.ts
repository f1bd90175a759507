/**
 * The config file (docs/guide.md, "The config file"), through the built `jackin`: a setting in it takes effect,
 * the environment overrides it, JACKIN_CONFIG names another file, and a malformed file is E_CONFIG.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runJackin } from './helpers/jackin-cli.ts';
import { testDir } from './helpers/test-run.ts';

/** A JACKIN_HOME whose action log holds one record, naming `instance`. */
function homeWithRecord(dir: string, instance: string): string {
  const home = join(dir, `home-${instance}`);
  mkdirSync(join(home, 'log'), { recursive: true, mode: 0o700 });
  const record = { time: '2026-01-01T00:00:00.000Z', instance, action: 'open-url', target: 'https://example.com/', result: 'ok' };
  writeFileSync(join(home, 'log', 'actions.jsonl'), `${JSON.stringify(record)}\n`, { mode: 0o600 });
  return home;
}

/** The environment of a run: no JACKIN_* of the test runner's, XDG_CONFIG_HOME in `dir`. */
function baseEnv(dir: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, XDG_CONFIG_HOME: join(dir, 'xdg') };
  for (const name of Object.keys(env)) if (name.startsWith('JACKIN_')) delete env[name];
  return env;
}

const loggedInstances = (stdout: string): string[] =>
  stdout
    .trim()
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => (JSON.parse(l) as { instance: string }).instance);

test('a setting in $XDG_CONFIG_HOME/jackin/config.json takes effect, and the environment overrides it', async (t) => {
  const dir = testDir(t, 'jackin-config-');
  const fromFile = homeWithRecord(dir, 'from-file');
  const fromEnv = homeWithRecord(dir, 'from-env');
  mkdirSync(join(dir, 'xdg', 'jackin'), { recursive: true });
  writeFileSync(join(dir, 'xdg', 'jackin', 'config.json'), JSON.stringify({ JACKIN_HOME: fromFile }));

  const viaFile = await runJackin(['log', '--json'], baseEnv(dir));
  assert.equal(viaFile.code, 0, viaFile.stderr);
  assert.deepEqual(loggedInstances(viaFile.stdout), ['from-file']);

  const viaEnv = await runJackin(['log', '--json'], { ...baseEnv(dir), JACKIN_HOME: fromEnv });
  assert.equal(viaEnv.code, 0, viaEnv.stderr);
  assert.deepEqual(loggedInstances(viaEnv.stdout), ['from-env']);

  // The short name works the same; JACKIN_CONFIG=none reads no file (the default home has no record).
  writeFileSync(join(dir, 'xdg', 'jackin', 'config.json'), JSON.stringify({ home: fromEnv }));
  assert.deepEqual(loggedInstances((await runJackin(['log', '--json'], baseEnv(dir))).stdout), ['from-env']);
  const none = await runJackin(['log', '--json'], { ...baseEnv(dir), JACKIN_CONFIG: 'none', HOME: join(dir, 'empty-home') });
  assert.equal(none.code, 0, none.stderr);
  assert.deepEqual(loggedInstances(none.stdout), []);
});

test('JACKIN_CONFIG names the file; one that does not exist is E_CONFIG', async (t) => {
  const dir = testDir(t, 'jackin-config-');
  const home = homeWithRecord(dir, 'named');
  const file = join(dir, 'other.json');
  writeFileSync(file, JSON.stringify({ JACKIN_HOME: home }));
  const r = await runJackin(['log', '--json'], { ...baseEnv(dir), JACKIN_CONFIG: file });
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(loggedInstances(r.stdout), ['named']);

  const missing = join(dir, 'missing.json');
  const m = await runJackin(['ls'], { ...baseEnv(dir), JACKIN_CONFIG: missing });
  assert.equal(m.code, 1);
  assert.equal(m.stderr, `jackin: config file ${missing} (JACKIN_CONFIG) does not exist: fix the path in JACKIN_CONFIG or create the file (E_CONFIG)\n`);
});

test('a malformed config file or an unknown key stops jackin with E_CONFIG naming the file and the line or key', async (t) => {
  const dir = testDir(t, 'jackin-config-');
  const file = join(dir, 'config.json');
  writeFileSync(file, '{\n  "JACKIN_NOTIFY": "off",\n}\n');
  const bad = await runJackin(['ls'], { ...baseEnv(dir), JACKIN_CONFIG: file });
  assert.equal(bad.code, 1);
  assert.match(bad.stderr, /^jackin: config file \S+config\.json is not valid JSON at line 3, column 1: write one JSON object .* \(E_CONFIG\)\n$/u);

  writeFileSync(file, '{"JACKIN_NOTIFYY": "off"}');
  const unknown = await runJackin(['ls', '--json'], { ...baseEnv(dir), JACKIN_CONFIG: file });
  assert.equal(unknown.code, 1);
  assert.match(unknown.stderr, /^jackin: config file \S+config\.json: unknown key "JACKIN_NOTIFYY"; .* \(E_CONFIG\)\n$/u);
});

test('jackin doctor shows which config file was read and what it sets', async (t) => {
  const dir = testDir(t, 'jackin-config-');
  const file = join(dir, 'config.json');
  writeFileSync(file, JSON.stringify({ notify: 'terminal', JACKIN_COPY: 'deny' }));
  const r = await runJackin(['doctor', '--json'], { ...baseEnv(dir), JACKIN_HOME: join(dir, 'home'), JACKIN_CONFIG: file, JACKIN_COPY: 'allow' });
  const checks = (JSON.parse(r.stdout) as { checks: Array<{ name: string; status: string; detail: string }> }).checks;
  assert.deepEqual(checks[0], {
    name: 'config',
    status: 'ok',
    detail: `read ${file}: sets JACKIN_NOTIFY, JACKIN_COPY (the environment's value wins)`,
  });
});

test('config.toml is read like config.json; both at once is E_CONFIG', async (t) => {
  const dir = testDir(t, 'jackin-config-');
  const home = homeWithRecord(dir, 'from-toml');
  mkdirSync(join(dir, 'xdg', 'jackin'), { recursive: true });
  writeFileSync(join(dir, 'xdg', 'jackin', 'config.toml'), `# jackin\nhome = ${JSON.stringify(home)}\n`);
  const r = await runJackin(['log', '--json'], baseEnv(dir));
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(loggedInstances(r.stdout), ['from-toml']);

  writeFileSync(join(dir, 'xdg', 'jackin', 'config.json'), '{}');
  const both = await runJackin(['ls'], baseEnv(dir));
  assert.equal(both.code, 1);
  assert.match(both.stderr, /^jackin: two config files, \S+config\.json and \S+config\.toml: keep one \(E_CONFIG\)\n$/u);
});
