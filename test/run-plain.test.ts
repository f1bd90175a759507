/**
 * `jackin run` without a terminal relays the program plainly, like `docker run` without -t: stdout carries the
 * program's bytes and nothing of the host's (no alternate screen, modes, repaint, CRLF), stdin is the
 * program's input with its end as end of file, and the exit status is the program's. `jackin attach` without a
 * terminal refuses at once (E_NOT_A_TERMINAL) instead of waiting forever on a session nobody can see.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { CAPSULE_BIN, JACKIN_BIN } from './helpers/jackin-cli.ts';
import { capsulePid, isAlive, runDir, stopCapsules } from './helpers/capsules.ts';
import { pollUntil } from './helpers/poll.ts';
import { testDir, testRunEnv } from './helpers/test-run.ts';

interface Ran {
  code: number | null;
  stdout: Buffer;
  stderr: string;
}

/** Runs jackin with stdin `input` (null: /dev/null) and stdout and stderr piped. */
function jackin(args: string[], env: NodeJS.ProcessEnv, input: Buffer | null): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [JACKIN_BIN, ...args], { env, stdio: [input === null ? 'ignore' : 'pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    let stderr = '';
    child.stdout?.on('data', (b: Buffer) => out.push(b));
    child.stderr?.on('data', (b: Buffer) => (stderr += b.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout: Buffer.concat(out), stderr }));
    if (input !== null) child.stdin?.end(input);
  });
}

function setup(t: { after: (fn: () => void | Promise<void>) => void }): NodeJS.ProcessEnv {
  const home = testDir(t, 'jackin-plain-');
  // Registered after testDir's removal, so run before it: no capsule outlives its home.
  t.after(() => stopCapsules(home));
  return { ...process.env, ...testRunEnv(), JACKIN_HOME: home, JACKIN_CLIPBOARD: 'none' };
}

test('jackin run with stdin from /dev/null and stdout piped: only the program bytes, LF line ends, its exit status', { timeout: 60_000 }, async (t) => {
  const env = setup(t);
  // Written before the host attaches (the capsule keeps it for the first host), escapes included as written.
  const r = await jackin(['run', '--', 'sh', '-c', 'printf "a\\nb\\033[1mc\\033[0m\\n"; exit 3'], env, null);
  assert.equal(r.code, 3, r.stderr);
  assert.equal(r.stdout.toString('latin1'), 'a\nb\x1b[1mc\x1b[0m\n');
  assert.equal(r.stderr, '');
});

test('jackin run with stdin piped: the program reads it, its end is end of file (with and without a last newline)', { timeout: 60_000 }, async (t) => {
  const env = setup(t);
  const lines = await jackin(['run', '--', 'cat'], env, Buffer.from('hi\nthere\n'));
  assert.equal(lines.code, 0, lines.stderr);
  assert.equal(lines.stdout.toString('latin1'), 'hi\nthere\n', 'no echo of the input, no CR');
  const partial = await jackin(['run', '--', 'wc', '-c'], env, Buffer.from('x\ny'));
  assert.equal(partial.code, 0, partial.stderr);
  assert.equal(partial.stdout.toString('latin1').trim(), '3');
  // Control bytes in the data are data: no signal from 0x03, no flow control from 0x13.
  const controls = await jackin(['run', '--', 'od', '-An', '-tx1'], env, Buffer.from([0x03, 0x13, 0x1c, 0x0a]));
  assert.equal(controls.code, 0, controls.stderr);
  assert.equal(controls.stdout.toString('latin1').trim(), '03 13 1c 0a');
});

test('jackin run relays a flood through a program that echoes its input (input and output both backed up)', { timeout: 120_000 }, async (t) => {
  const env = setup(t);
  let text = '';
  for (let i = 1; i <= 100_000; i++) text += `${i}\n`;
  const r = await jackin(['run', '--', 'cat'], env, Buffer.from(text));
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout.length, text.length);
  assert.ok(r.stdout.equals(Buffer.from(text)), 'the output is the input, in order');
});

test('jackin attach without a terminal refuses at once with E_NOT_A_TERMINAL; the program keeps running', { timeout: 60_000 }, async (t) => {
  const env = setup(t);
  const home = env['JACKIN_HOME']!;
  const child = spawn(process.execPath, [CAPSULE_BIN, 'serve', '--run-dir', runDir(home, 'box'), '--name', 'box', '--', 'sleep', '600'], {
    detached: true,
    stdio: 'ignore',
    env,
  });
  child.unref();
  const pid = await capsulePid(home, 'box');
  const r = await jackin(['attach', 'box'], env, null);
  assert.equal(r.code, 1);
  assert.equal(r.stdout.length, 0);
  assert.match(r.stderr, /^jackin: cannot attach to box: stdin and stdout are not a terminal; .*\(E_NOT_A_TERMINAL\)\n$/);
  const piped = await jackin(['attach', 'box'], env, Buffer.from('ignored'));
  assert.equal(piped.code, 1);
  assert.match(piped.stderr, /\(E_NOT_A_TERMINAL\)\n$/);
  assert.ok(isAlive(pid), 'the refusal leaves the program alone');
  process.kill(pid, 'SIGTERM');
  await pollUntil('the capsule to stop', () => !isAlive(pid), { timeoutMs: 5000 });
});
