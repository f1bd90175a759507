import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { JackinError } from '../../errors.ts';
import { collectEnv, parseEnvFile, parseEnvOption, parseVolume } from './run-image-options.ts';

const SECRET = 'sk-ant-api03-very-secret-value';

function refused(fn: () => unknown, code: string): JackinError {
  try {
    fn();
  } catch (e) {
    assert.ok(e instanceof JackinError, String(e));
    assert.equal(e.code, code, e.message);
    assert.equal(e.exitCode, 2);
    return e;
  }
  assert.fail('expected an error');
}

test('--env NAME=VALUE and NAME alone (the host value); bad names and unset names are refused without the value', () => {
  assert.deepEqual(parseEnvOption(`ANTHROPIC_API_KEY=${SECRET}`, {}), { name: 'ANTHROPIC_API_KEY', value: SECRET });
  assert.deepEqual(parseEnvOption('A=', {}), { name: 'A', value: '' });
  assert.deepEqual(parseEnvOption('A=b=c', {}), { name: 'A', value: 'b=c' });
  assert.deepEqual(parseEnvOption('KEY', { KEY: SECRET }), { name: 'KEY', value: SECRET });
  assert.match(refused(() => parseEnvOption('KEY', {}), 'E_BAD_ENV').message, /^--env KEY: KEY is not set in this environment/);
  for (const bad of [`1A=${SECRET}`, `A-B=${SECRET}`, `=${SECRET}`, '', `A B=${SECRET}`]) {
    const e = refused(() => parseEnvOption(bad, {}), 'E_BAD_ENV');
    assert.doesNotMatch(e.message, /secret/, 'the value is never in the message');
  }
  for (const reserved of ['PATH=/x', 'JACKIN_RUN_DIR=/x']) assert.match(refused(() => parseEnvOption(reserved, {}), 'E_BAD_ENV').message, /set by jackin run --image itself/);
});

test('a value passed where the name goes (--env "$TOKEN") is never echoed, whatever its form', () => {
  for (const token of ['sk-proj-abcdefghijklmnop', 'ghp_abcdefghijklmnopqrstuvwxyz0123456789', 'AIzaSyAbcdefghijklmnopqrstuvwxyz012345', '0123456789abcdef0123456789abcdef01234567', 'AKIAIOSFODNN7EXAMPLE']) {
    for (const e of [refused(() => parseEnvOption(token, {}), 'E_BAD_ENV'), refused(() => parseEnvFile('f.env', `${token}\n`, {}), 'E_BAD_ENV')]) {
      assert.doesNotMatch(e.message, new RegExp(token.slice(4, 12)), e.message);
      assert.match(e.message, new RegExp(`a name of ${token.length} characters`));
    }
  }
  // The usual forms of a variable name are shown in full.
  assert.match(refused(() => parseEnvOption('OPENAI_API_KEY', {}), 'E_BAD_ENV').message, /^--env OPENAI_API_KEY: OPENAI_API_KEY is not set/);
  for (const usual of ['http_proxy', 'EDITOR', 'CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC']) {
    assert.match(refused(() => parseEnvOption(usual, {}), 'E_BAD_ENV').message, new RegExp(`^--env ${usual}: ${usual} is not set`));
  }
});

test('a value never appears in an --env error (property)', () => {
  fc.assert(
    fc.property(fc.string({ minLength: 1 }), fc.stringMatching(/^[a-z0-9]{12,20}$/), (name, value) => {
      try {
        parseEnvOption(`${name}=${value}`, {});
      } catch (e) {
        assert.ok(!(e as Error).message.includes(value));
      }
    }),
  );
});

test('--env-file: Docker\'s form; comments and blank lines skipped; a bad line is named by number, not content', () => {
  const text = `# credentials\n\nA=1\n  B=two words "quoted"\nC\nD=\r\nE=x=y\n`;
  assert.deepEqual(parseEnvFile('f.env', text, { C: 'from-host' }), [
    { name: 'A', value: '1' },
    { name: 'B', value: 'two words "quoted"' },
    { name: 'C', value: 'from-host' },
    { name: 'D', value: '' },
    { name: 'E', value: 'x=y' },
  ]);
  const e = refused(() => parseEnvFile('f.env', `A=1\nexport B=${SECRET}\n`, {}), 'E_BAD_ENV');
  assert.match(e.message, /^--env-file f\.env line 2: /);
  assert.doesNotMatch(e.message, /secret/);
  assert.match(refused(() => parseEnvFile('f.env', 'MISSING\n', {}), 'E_BAD_ENV').message, /line 1: MISSING is not set/);
});

test('--env-file then --env, a later one of a name winning; an unreadable file is refused', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'jackin-envfile-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'a.env'), 'A=file\nB=file\n');
  assert.deepEqual(collectEnv(['a.env'], ['B=flag', 'C'], dir, { C: 'host' }), [
    { name: 'A', value: 'file' },
    { name: 'B', value: 'flag' },
    { name: 'C', value: 'host' },
  ]);
  assert.match(refused(() => collectEnv(['missing.env'], [], dir, {}), 'E_BAD_ENV').message, /^--env-file missing\.env: cannot read it \(ENOENT\)$/);
});

test('--volume HOST:CONTAINER[:ro|rw]: relative host paths resolved, the host path must exist, jackin\'s own mounts refused', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'jackin-vol-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  mkdirSync(join(dir, 'claude'));
  assert.deepEqual(parseVolume('claude:/home/op/.claude', dir), { host: join(dir, 'claude'), container: '/home/op/.claude', mode: null });
  assert.deepEqual(parseVolume(`${dir}/claude:/c/:ro`, '/'), { host: join(dir, 'claude'), container: '/c', mode: 'ro' });
  assert.deepEqual(parseVolume('./claude:/c:rw', dir), { host: join(dir, 'claude'), container: '/c', mode: 'rw' });
  assert.match(refused(() => parseVolume('nope:/c', dir), 'E_BAD_VOLUME').message, /the host path .*nope does not exist \(ENOENT\): create it first$/);
  for (const bad of ['claude', 'claude:', ':/c', 'claude:/c:rx', 'claude:relative', 'a:b:c:d', 'claude:/c\n']) refused(() => parseVolume(bad, dir), 'E_BAD_VOLUME');
  for (const own of ['/jackin/run', '/jackin/run/x', '/opt/jackin/pkg', '/workspace', '/']) {
    assert.match(refused(() => parseVolume(`claude:${own}`, dir), 'E_BAD_VOLUME').message, /pick another container path/);
  }
});
