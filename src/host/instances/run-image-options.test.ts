import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { JackinError } from '../../errors.ts';
import { collectEnv, ENV_FILE_MAX_BYTES, nameForError, parseEnvFile, parseEnvOption, parseVolume, readEnvFile } from './run-image-options.ts';

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
  assert.deepEqual(parseEnvOption(`ANTHROPIC_API_KEY=${SECRET}`, {}), { name: 'ANTHROPIC_API_KEY', value: SECRET, from: '--env' });
  assert.deepEqual(parseEnvOption('A=', {}), { name: 'A', value: '', from: '--env' });
  assert.deepEqual(parseEnvOption('A=b=c', {}), { name: 'A', value: 'b=c', from: '--env' });
  assert.deepEqual(parseEnvOption('KEY', { KEY: SECRET }), { name: 'KEY', value: SECRET, from: '--env' });
  assert.match(refused(() => parseEnvOption('KEY', {}), 'E_BAD_ENV').message, /^--env KEY: KEY is not set in this environment/);
  for (const bad of [`1A=${SECRET}`, `A-B=${SECRET}`, `=${SECRET}`, '', `A B=${SECRET}`]) {
    const e = refused(() => parseEnvOption(bad, {}), 'E_BAD_ENV');
    assert.doesNotMatch(e.message, /secret/, 'the value is never in the message');
  }
  for (const reserved of ['PATH=/x', 'JACKIN_RUN_DIR=/x'])
    assert.match(refused(() => parseEnvOption(reserved, {}), 'E_BAD_ENV').message, /set by jackin run --image itself/);
});

test('a value passed where the name goes (--env "$TOKEN") is never echoed, whatever its form', () => {
  for (const token of [
    'sk-proj-abcdefghijklmnop',
    'ghp_abcdefghijklmnopqrstuvwxyz0123456789',
    'AIzaSyAbcdefghijklmnopqrstuvwxyz012345',
    '0123456789abcdef0123456789abcdef01234567',
    'AKIAIOSFODNN7EXAMPLE',
  ]) {
    for (const e of [refused(() => parseEnvOption(token, {}), 'E_BAD_ENV'), refused(() => parseEnvFile('f.env', `${token}\n`, {}), 'E_BAD_ENV')]) {
      assert.doesNotMatch(e.message, new RegExp(token.slice(4, 12)), e.message);
      assert.match(e.message, new RegExp(`a name of ${token.length} characters`));
    }
  }
  // The usual form of an exported variable is shown in full, and so is any name set in this environment.
  assert.match(refused(() => parseEnvOption('OPENAI_API_KEY', {}), 'E_BAD_ENV').message, /^--env OPENAI_API_KEY: OPENAI_API_KEY is not set/);
  for (const usual of ['EDITOR', 'CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC', 'S3_BUCKET']) {
    assert.match(refused(() => parseEnvOption(usual, {}), 'E_BAD_ENV').message, new RegExp(`^--env ${usual}: ${usual} is not set`));
  }
  assert.equal(nameForError('http_proxy', { http_proxy: 'http://proxy:3128' }), 'http_proxy');
  assert.equal(nameForError('http_proxy', {}), 'a name of 10 characters (not shown: it may be a value)');
});

test('a lower-case or mixed-case word where a name goes (--env hunter2) is named by its length only', () => {
  for (const word of ['hunter2', 'letmein', 'correcthorse', 'Tr0ub4dor', 'swordfish_42', 'http_proxy']) {
    for (const e of [refused(() => parseEnvOption(word, {}), 'E_BAD_ENV'), refused(() => parseEnvFile('f.env', `${word}\n`, {}), 'E_BAD_ENV')]) {
      assert.ok(!e.message.includes(word), e.message);
      assert.match(e.message, new RegExp(`a name of ${word.length} characters`));
    }
  }
});

test('E_BAD_ENV never echoes what is not an upper-case name or a variable set here (property)', () => {
  const upperName = /^[A-Z][A-Z0-9]{0,15}(?:_[A-Z0-9]{1,16})*$/;
  // Every message is one of these with the word's place taken by its length: nothing else of the word is in it.
  const templates = new Set([
    '--env <N>: it is not set in this environment: export it first, or pass --env NAME=VALUE',
    '--env: <N> is not a variable name (letters, digits and _, not starting with a digit)',
    '--env-file f.env line 1: <N> is not set in this environment: export it first, or write NAME=VALUE',
    '--env-file f.env line 1: <N> is not a variable name (letters, digits and _, not starting with a digit)',
  ]);
  const words = fc.oneof(
    fc.string({ minLength: 1, maxLength: 40 }),
    fc.stringMatching(/^[a-z][a-z0-9_]{0,30}$/),
    fc.stringMatching(/^[A-Za-z][A-Za-z0-9_]{0,30}$/),
  );
  fc.assert(
    fc.property(words, (word) => {
      fc.pre(!upperName.test(word) && word.trim() === word && !/[=\r\n]/.test(word) && !word.startsWith('#'));
      for (const attempt of [() => parseEnvOption(word, {}), () => parseEnvFile('f.env', `${word}\n`, {}), () => parseEnvOption(`${word}=x`, {})]) {
        try {
          attempt();
        } catch (e) {
          assert.ok(e instanceof JackinError && e.code === 'E_BAD_ENV', String(e));
          const slot = `a name of ${[...word].length} characters (not shown: it may be a value)`;
          assert.ok(templates.has(e.message.replace(slot, '<N>')), e.message);
        }
      }
    }),
  );
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

test("--env-file: Docker's form; comments and blank lines skipped; a bad line is named by number, not content", () => {
  const text = `# credentials\n\nA=1\n  B=two words "quoted"\nC\nD=\r\nE=x=y\n`;
  assert.deepEqual(parseEnvFile('f.env', text, { C: 'from-host' }), [
    { name: 'A', value: '1', from: '--env-file f.env line 3' },
    { name: 'B', value: 'two words "quoted"', from: '--env-file f.env line 4' },
    { name: 'C', value: 'from-host', from: '--env-file f.env line 5' },
    { name: 'D', value: '', from: '--env-file f.env line 6' },
    { name: 'E', value: 'x=y', from: '--env-file f.env line 7' },
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
  assert.deepEqual(collectEnv(['a.env'], ['B=flag', 'C'], dir, { C: 'host' }, dir), [
    { name: 'A', value: 'file', from: '--env-file a.env line 1' },
    { name: 'B', value: 'flag', from: '--env' },
    { name: 'C', value: 'host', from: '--env' },
  ]);
  assert.match(refused(() => collectEnv(['missing.env'], [], dir, {}, dir), 'E_BAD_ENV').message, /^--env-file missing\.env: cannot read it \(ENOENT\)$/);
});

test("--volume HOST:CONTAINER[:ro|rw]: relative host paths resolved, the host path must exist, jackin's own mounts refused", (t) => {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'jackin-vol-')));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  mkdirSync(join(dir, 'claude'));
  assert.deepEqual(parseVolume('claude:/home/op/.claude', dir, dir), { host: join(dir, 'claude'), container: '/home/op/.claude', mode: null });
  assert.deepEqual(parseVolume(`${dir}/claude:/c/:ro`, '/', dir), { host: join(dir, 'claude'), container: '/c', mode: 'ro' });
  assert.deepEqual(parseVolume('./claude:/c:rw', dir, dir), { host: join(dir, 'claude'), container: '/c', mode: 'rw' });
  assert.match(refused(() => parseVolume('nope:/c', dir, dir), 'E_BAD_VOLUME').message, /the host path .*nope does not exist \(ENOENT\): create it first$/);
  for (const bad of ['claude', 'claude:', ':/c', 'claude:/c:rx', 'claude:relative', 'a:b:c:d', 'claude:/c\n'])
    refused(() => parseVolume(bad, dir, dir), 'E_BAD_VOLUME');
  for (const own of ['/jackin/run', '/jackin/run/x', '/opt/jackin/pkg', '/workspace', '/']) {
    assert.match(refused(() => parseVolume(`claude:${own}`, dir, dir), 'E_BAD_VOLUME').message, /pick another container path/);
  }
});

test('--volume: a path written in the workspace that leads out of it through a symlink is refused; any other is mounted by its resolved path', (t) => {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'jackin-vol-')));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const ws = join(dir, 'ws');
  const outside = join(dir, 'private');
  mkdirSync(join(ws, 'real-data'), { recursive: true });
  mkdirSync(join(outside, 'keys'), { recursive: true });
  symlinkSync(outside, join(ws, 'data'));
  symlinkSync('real-data', join(ws, 'inside'));
  symlinkSync(ws, join(dir, 'ws-link'));
  // Planted in the workspace, leading out: refused however it is written (relative, absolute, through a
  // directory link, through the workspace's other spelling), naming where it leads.
  for (const [spec, cwd] of [
    ['./data:/d', ws],
    ['data/keys:/d', ws],
    [`${ws}/data:/d:ro`, '/'],
    ['ws/data:/d', dir],
    [`${dir}/ws-link/data:/d`, '/'],
  ] as const) {
    const e = refused(() => parseVolume(spec, cwd, ws), 'E_BAD_VOLUME');
    assert.match(e.message, /leads out of it through a symlink \(to .*private.*\): nothing was mounted/, spec);
  }
  refused(() => parseVolume(`${dir}/ws-link/data:/d`, '/', join(dir, 'ws-link')), 'E_BAD_VOLUME');
  // A symlink that stays in the workspace is mounted by its resolved path (what --dry-run shows).
  assert.deepEqual(parseVolume('./inside:/d', ws, ws), { host: join(ws, 'real-data'), container: '/d', mode: null });
  // A path written outside the workspace is the operator's choice, mounted by its resolved path.
  assert.deepEqual(parseVolume(`${dir}/ws-link/real-data:/d`, '/', join(dir, 'elsewhere')), { host: join(ws, 'real-data'), container: '/d', mode: null });
  assert.deepEqual(parseVolume('../private/keys:/k:ro', ws, ws), { host: join(outside, 'keys'), container: '/k', mode: 'ro' });
});

test('--env-file in the workspace: refused when it leads out through a symlink, or is not a regular file, or is too large; never blocks', (t) => {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'jackin-envws-')));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const ws = join(dir, 'ws');
  mkdirSync(ws);
  writeFileSync(join(dir, 'other.env'), `OTHER_TOKEN=${SECRET}\n`);
  writeFileSync(join(ws, 'own.env'), 'A=1\n');
  symlinkSync(join(dir, 'other.env'), join(ws, '.env'));
  symlinkSync('own.env', join(ws, 'linked.env'));
  const out = refused(() => readEnvFile('.env', ws, {}, ws), 'E_BAD_ENV');
  assert.match(
    out.message,
    /^--env-file \.env: it is in the workspace, which the container writes, and leads out of it through a symlink \(to .*other\.env\): nothing was read/,
  );
  assert.doesNotMatch(out.message, /secret/);
  // A link that stays inside is read; a file outside the workspace is read as it is, links and all.
  assert.deepEqual(readEnvFile('linked.env', ws, {}, ws), [{ name: 'A', value: '1', from: '--env-file linked.env line 1' }]);
  assert.deepEqual(readEnvFile(join(ws, '.env'), '/', {}, join(dir, 'elsewhere')), [
    { name: 'OTHER_TOKEN', value: SECRET, from: `--env-file ${join(ws, '.env')} line 1` },
  ]);
  // A FIFO would hang a plain read; a directory and a huge file are refused too.
  execFileSync('mkfifo', [join(ws, 'fifo.env')]);
  assert.match(refused(() => readEnvFile('fifo.env', ws, {}, ws), 'E_BAD_ENV').message, /cannot read it \(not a regular file\)/);
  mkdirSync(join(ws, 'dir.env'));
  refused(() => readEnvFile('dir.env', ws, {}, ws), 'E_BAD_ENV');
  writeFileSync(join(ws, 'big.env'), Buffer.alloc(ENV_FILE_MAX_BYTES + 1, 0x41));
  assert.match(refused(() => readEnvFile('big.env', ws, {}, ws), 'E_BAD_ENV').message, /larger than/);
});

test("--env-file in the workspace: a NAME line alone is refused (it would hand the operator's value to the container); outside, it takes the value", (t) => {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'jackin-envname-')));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const ws = join(dir, 'ws');
  mkdirSync(ws);
  const text = 'A=1\nAWS_SECRET_ACCESS_KEY\n';
  writeFileSync(join(ws, '.env'), text);
  writeFileSync(join(dir, 'own.env'), text);
  const hostEnv = { AWS_SECRET_ACCESS_KEY: SECRET };
  const e = refused(() => readEnvFile('.env', ws, hostEnv, ws), 'E_BAD_ENV');
  assert.match(e.message, /^--env-file \.env line 2: AWS_SECRET_ACCESS_KEY alone would take this environment's value, and the file is in the workspace/);
  assert.ok(!e.message.includes(SECRET));
  // The same file written by the operator outside the workspace keeps Docker's meaning.
  assert.deepEqual(readEnvFile(join(dir, 'own.env'), ws, hostEnv, ws), [
    { name: 'A', value: '1', from: `--env-file ${join(dir, 'own.env')} line 1` },
    { name: 'AWS_SECRET_ACCESS_KEY', value: SECRET, from: `--env-file ${join(dir, 'own.env')} line 2` },
  ]);
});
