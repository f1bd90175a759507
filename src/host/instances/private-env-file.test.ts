import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, statSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { JackinError } from '../../errors.ts';
import { ENV_FILE_LINE_MAX_BYTES, envFileText, privateParent, writePrivateEnvFile } from './private-env-file.ts';
import { parseEnvFile } from './run-image-options.ts';
import { testDir } from '../../../test/helpers/test-run.ts';

const SECRET = 'sk-ant-api03-very-secret-value';

function scratch(t: TestContext): string {
  return testDir(t, 'jackin-penv-');
}

function refused(fn: () => unknown): JackinError {
  try {
    fn();
  } catch (e) {
    assert.ok(e instanceof JackinError && e.code === 'E_BAD_ENV' && e.exitCode === 2, String(e));
    return e;
  }
  assert.fail('expected E_BAD_ENV');
}

test("envFileText: NAME=VALUE lines, each value as it is; what an engine's env file cannot carry is refused by name and origin, never by value", () => {
  assert.equal(
    envFileText(
      [
        { name: 'A', value: ' spaced "quoted" # not a comment ', from: '--env' },
        { name: 'E', value: '', from: '--env' },
        { name: 'U', value: 'é=ü', from: '--env' },
      ],
      {},
    ),
    'A= spaced "quoted" # not a comment \nE=\nU=é=ü\n',
  );
  for (const bad of [`${SECRET}\nX=injected`, `${SECRET}\r`, `a\rb${SECRET}`, `${SECRET}\0`]) {
    const e = refused(() => envFileText([{ name: 'ANTHROPIC_API_KEY', value: bad, from: '--env-file a.env line 3' }], {}));
    assert.match(e.message, /^--env-file a\.env line 3: the value of ANTHROPIC_API_KEY holds a line break/);
    assert.doesNotMatch(e.message, /secret|injected/);
  }
  // A lower-case name not set here may be a value given as a name: named by its length.
  assert.match(refused(() => envFileText([{ name: 'hunter2', value: 'a\nb', from: '--env' }], {})).message, /the value of a name of 7 characters/);
  // Go's bufio.Scanner, which both engines read env files with, holds 64 KiB a line, newline included.
  const fits = 'x'.repeat(ENV_FILE_LINE_MAX_BYTES - 2);
  assert.equal(envFileText([{ name: 'L', value: fits, from: '--env' }], {}), `L=${fits}\n`);
  assert.match(refused(() => envFileText([{ name: 'L', value: `${fits}é`, from: '--env' }], {})).message, /longer than the 65535 bytes/);
});

test('envFileText: what it writes reads back as the same variables, the way Docker and Podman read it (property)', () => {
  const name = fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_]{0,20}$/);
  const value = fc.string({ maxLength: 200, unit: 'grapheme' }).filter((v) => !/[\n\r\0]/.test(v));
  fc.assert(
    fc.property(fc.uniqueArray(fc.record({ name, value }), { selector: (e) => e.name, maxLength: 8 }), (vars) => {
      const passed = vars.map((v) => ({ ...v, from: '--env' }));
      const back = parseEnvFile('jackin', envFileText(passed, {}), {});
      assert.deepEqual(
        back.map(({ name: n, value: v }) => ({ name: n, value: v })),
        vars.map((v) => ({ ...v })),
      );
    }),
  );
});

test('privateParent: the first candidate no mount shows a container, else the last', (t) => {
  const dir = scratch(t);
  mkdirSync(join(dir, 'tmp'));
  mkdirSync(join(dir, 'home'));
  symlinkSync(join(dir, 'tmp'), join(dir, 'tmp-link'));
  assert.equal(privateParent([join(dir, 'tmp'), join(dir, 'home')], [join(dir, 'ws')]), join(dir, 'tmp'));
  // A workspace or volume that holds the temporary directory (by any spelling) sends it to jackin's home.
  assert.equal(privateParent([join(dir, 'tmp'), join(dir, 'home')], [join(dir, 'ws'), dir]), join(dir, 'home'));
  assert.equal(privateParent([join(dir, 'tmp-link'), join(dir, 'home')], [join(dir, 'tmp')]), join(dir, 'home'));
  assert.equal(privateParent([join(dir, 'tmp'), join(dir, 'home')], ['/']), join(dir, 'home'));
});

test('writePrivateEnvFile: 0600 in a fresh 0700 directory, exactly the text; remove() takes both away, twice is fine', (t) => {
  const dir = scratch(t);
  const f = writePrivateEnvFile(`A=${SECRET}\n`, dir);
  const fileStat = statSync(f.path);
  const dirStat = statSync(join(f.path, '..'));
  assert.equal(fileStat.mode & 0o777, 0o600);
  assert.equal(dirStat.mode & 0o777, 0o700);
  assert.equal(fileStat.uid, process.getuid!());
  assert.equal(readFileSync(f.path, 'utf8'), `A=${SECRET}\n`);
  assert.ok(join(f.path, '..').startsWith(`${dir}/jackin-env-`));
  f.remove();
  assert.equal(existsSync(join(f.path, '..')), false);
  f.remove();
  assert.equal(process.listenerCount('SIGTERM'), 0, 'the signal handlers are gone');
});

/** A node that writes a private env file under `dir`, prints its path, then does `then`. */
function childWriting(dir: string, then: string): { child: ReturnType<typeof spawn>; path: Promise<string> } {
  const module = fileURLToPath(new URL('./private-env-file.ts', import.meta.url));
  const script = `const m = await import(${JSON.stringify(module)}); const f = m.writePrivateEnvFile('A=1\\n', ${JSON.stringify(dir)}); console.log(f.path); ${then}`;
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  const path = new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (b: Buffer) => {
      out += b.toString();
      if (out.includes('\n')) resolve(out.trim());
    });
    child.on('close', () => reject(new Error(`the child exited first: ${out}`)));
  });
  return { child, path };
}

function exited(child: ReturnType<typeof spawn>): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve({ code: child.exitCode, signal: child.signalCode });
    child.on('exit', (code, signal) => resolve({ code, signal }));
  });
}

test('writePrivateEnvFile: a signal that ends jackin while the file exists removes it, and still ends jackin by that signal', {
  timeout: 60_000,
}, async (t) => {
  const dir = scratch(t);
  for (const sig of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) {
    const { child, path } = childWriting(dir, 'setInterval(() => {}, 1000);');
    t.after(() => child.kill('SIGKILL'));
    const file = await path;
    assert.ok(existsSync(file));
    child.kill(sig);
    assert.deepEqual(await exited(child), { code: null, signal: sig });
    assert.equal(existsSync(join(file, '..')), false, `${sig}: the directory is still there`);
  }
});

test('writePrivateEnvFile: an exit while the file exists removes it', { timeout: 60_000 }, async (t) => {
  const dir = scratch(t);
  const { child, path } = childWriting(dir, 'process.exit(3);');
  t.after(() => child.kill('SIGKILL'));
  const file = await path;
  assert.deepEqual(await exited(child), { code: 3, signal: null });
  assert.equal(existsSync(join(file, '..')), false);
});
