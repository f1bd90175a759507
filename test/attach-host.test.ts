/**
 * The host side of the attach bridge, end to end with the real capsule: `jackin attach` through the
 * docker/podman/kubectl relays (stand-ins on PATH that record their argv and run the relay locally), and
 * the restoration of the operator's terminal, checked with `stty -a` in a real PTY.
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import pty from '@lydell/node-pty';
import { capsulePid, stopCapsules } from './helpers/capsules.ts';
import { REPO_ROOT, CAPSULE_BIN, JACKIN_BIN } from './helpers/jackin-cli.ts';
import { pollUntil } from './helpers/poll.ts';

const START_TIMEOUT_MS = 20_000;

function q(s: string): string {
  return `'${s.replaceAll("'", `'\\''`)}'`;
}

/** A fresh JACKIN_HOME with engine stand-ins on PATH; capsules are stopped when the test ends. */
function setup(t: TestContext) {
  const home = mkdtempSync(join(tmpdir(), 'jackin-host-'));
  const bin = join(home, 'bin');
  mkdirSync(bin);
  for (const engine of ['docker', 'podman', 'kubectl']) {
    // Answers `inspect` (and kubectl's `get`) as an engine does for a running container (jackin asks it whether the name exists);
    // otherwise records its own name and every argument (NUL-separated, so spaces stay visible) and one line
    // per run (in <argv>.runs), then relays locally.
    writeFileSync(
      join(bin, engine),
      `#!/bin/sh\nif [ "$1" = inspect ] || [ "$1" = get ]; then echo running; exit 0; fi\nprintf '%s\\0' "$(basename "$0")" "$@" > "$JACKIN_TEST_ARGV"\necho "$$" >> "$JACKIN_TEST_ARGV.runs"\nexec ${q(process.execPath)} ${q(CAPSULE_BIN)} attach-proxy --socket "$JACKIN_TEST_SOCKET"\n`,
    );
    chmodSync(join(bin, engine), 0o755);
  }
  t.after(async () => {
    await stopCapsules(home);
    rmSync(home, { recursive: true, force: true });
  });
  return { home, bin };
}

/** Starts `bash` in a capsule named `name` under home, as `jackin run` would. */
async function startCapsule(home: string, name: string): Promise<{ socket: string; pid: number }> {
  const runDir = join(home, 'sockets', name);
  const child = spawn(process.execPath, [CAPSULE_BIN, 'serve', '--run-dir', runDir, '--name', name, '--', 'bash', '--norc', '--noprofile'], {
    detached: true,
    stdio: 'ignore',
    env: { ...process.env, PS1: 'in$ ' },
  });
  child.unref();
  const pid = await capsulePid(home, name, START_TIMEOUT_MS);
  return { socket: join(runDir, 'jackin.sock'), pid };
}

/** Runs a shell line in a real PTY: the operator's terminal. */
function operator(t: TestContext, line: string, env: Record<string, string>) {
  const p = pty.spawn('/bin/bash', ['--norc', '--noprofile', '-c', line], {
    cols: 100,
    rows: 30,
    cwd: REPO_ROOT,
    env: { ...process.env, TERM: 'xterm-256color', ...env } as Record<string, string>,
  });
  let out = '';
  p.onData((d) => (out += d));
  const exited = new Promise<number>((r) => p.onExit(({ exitCode }) => r(exitCode)));
  t.after(() => {
    try {
      p.kill();
    } catch {
      // Already gone.
    }
  });
  return {
    pty: p,
    output: () => out,
    /** The output with CSI sequences taken out: the host writes its own (mouse capture after a Modes frame)
     * between the program's bytes wherever a frame ends, so text is matched without them. */
    waitForText: (re: RegExp) => {
      const text = (): string => out.replace(/\x1b\[[0-9;?]*[ -/]*[@-~]/g, '');
      return pollUntil(`${re} in the operator terminal's text`, () => re.test(text()), { timeoutMs: START_TIMEOUT_MS, last: () => text().slice(-400) });
    },
    exited,
  };
}

/** termios of the PTY as `stty -a` reports it. */
function sttyOf(ptsPath: string): string {
  return execFileSync('stty', ['-a', '-F', ptsPath], { encoding: 'utf8' });
}

// The shell then waits (read) until the test ends: node-pty drops output still unread when the program exits
// and the PTY closes, which lost the END marker now and then.
const AFTER = `; echo "rc=$?"; stty -a; echo END; read _`;

for (const engine of ['docker', 'podman', 'kubectl'] as const) {
  test(`jackin attach --via ${engine} runs the exact relay argv and a full session works through it`, async (t) => {
    const { home, bin } = setup(t);
    const { socket } = await startCapsule(home, 'agent');
    const argvFile = join(home, 'argv');
    const extra = engine === 'kubectl' ? ' -n dev -c main' : '';
    const op = operator(t, `node ${q(JACKIN_BIN)} attach agent --via ${engine}${extra}${AFTER}`, {
      PATH: `${bin}:${process.env['PATH']}`,
      JACKIN_HOME: home,
      JACKIN_TEST_ARGV: argvFile,
      JACKIN_TEST_SOCKET: socket,
    });
    await op.waitForText(/in\$ /);
    // While attached the operator's terminal is raw: no echo, no line discipline.
    const raw = sttyOf((op.pty as unknown as { _pty: string })._pty);
    assert.match(raw, /-icanon/);
    assert.match(raw, /-echo\b/);
    op.pty.write('echo $((6*7))\r');
    await op.waitForText(/\r42\r\n/);
    op.pty.write('exit 7\r');
    await op.waitForText(/END/);
    const expected =
      engine === 'kubectl'
        ? ['kubectl', 'exec', '-i', 'agent', '-n', 'dev', '-c', 'main', '--', 'jackin-capsule', 'attach-proxy']
        : [engine, 'exec', '-i', 'agent', 'jackin-capsule', 'attach-proxy'];
    assert.deepEqual(readFileSync(argvFile, 'utf8').split('\0').slice(0, -1), expected);
    // One engine exec: the relay bin/jackin.js started before the CLI loaded (the plain forms) is the one
    // the session used, not stopped and started again.
    assert.equal(readFileSync(`${argvFile}.runs`, 'utf8').trim().split('\n').length, 1, 'the engine ran once');
    assert.match(op.output(), /rc=7\r\n/, "the program exit status is jackin's");
    assert.match(op.output(), /[^-]icanon/);
    assert.match(op.output(), /[^-]echo /);
  });
}

test('without a flag and without a local socket, jackin attach --verbose falls back to docker exec and says why', async (t) => {
  const { home, bin } = setup(t);
  const { socket } = await startCapsule(home, 'elsewhere');
  const opHome = join(home, 'operator-home');
  const op = operator(t, `node ${q(JACKIN_BIN)} attach agent --verbose${AFTER}`, {
    PATH: `${bin}:${process.env['PATH']}`,
    JACKIN_HOME: opHome,
    JACKIN_TEST_ARGV: join(home, 'argv'),
    JACKIN_TEST_SOCKET: socket,
  });
  await op.waitForText(/in\$ /);
  assert.ok(
    op.output().includes(`jackin: transport: docker, because no socket at ${join(opHome, 'sockets', 'agent', 'jackin.sock')}; falling back to docker exec`),
    op.output(),
  );
  op.pty.write('\x1cd');
  await op.waitForText(/END/);
  assert.match(op.output(), /jackin: detached from agent\r\n/);
  assert.match(op.output(), /rc=0\r\n/);
});

test('a SIGKILLed capsule leaves a sane terminal (alternate screen left, echo/icanon back) and a one-line reason', async (t) => {
  const { home } = setup(t);
  const { pid } = await startCapsule(home, 'victim');
  const op = operator(t, `node ${q(JACKIN_BIN)} attach victim${AFTER}`, { JACKIN_HOME: home });
  await op.waitForText(/in\$ /);
  op.pty.write(`printf '\\033[?1049h\\033[?1000h\\033[?25lALT'\r`);
  await op.waitForText(/ALT/);
  const before = op.output().length;
  process.kill(pid, 'SIGKILL');
  await op.waitForText(/END/);
  const tail = op.output().slice(before);
  assert.ok(tail.includes('\x1b[?1049l'), 'left the alternate screen');
  assert.ok(tail.includes('\x1b[?1000l') && tail.includes('\x1b[?25h'), 'mouse off, cursor shown');
  assert.match(tail, /jackin: lost connection to victim: the capsule closed the connection\r\n/);
  assert.match(tail, /rc=1\r\n/);
  assert.match(tail, /[^-]icanon/);
  assert.match(tail, /[^-]echo /);
});

test('SIGTERM to jackin restores the terminal and exits 143; the program keeps running', async (t) => {
  const { home } = setup(t);
  const { pid } = await startCapsule(home, 'keep');
  const op = operator(t, `node ${q(JACKIN_BIN)} attach keep${AFTER}`, { JACKIN_HOME: home });
  await op.waitForText(/in\$ /);
  const jackinPid = await pollUntil('the jackin process', () => {
    try {
      return (
        Number(
          execFileSync('pgrep', ['-P', String(op.pty.pid), '-f', 'jackin.js attach'], { encoding: 'utf8' })
            .trim()
            .split('\n')[0],
        ) || undefined
      );
    } catch {
      return undefined;
    }
  });
  process.kill(jackinPid, 'SIGTERM');
  await op.waitForText(/END/);
  assert.match(op.output(), /jackin: terminated by SIGTERM\r\n/);
  assert.match(op.output(), /rc=143\r\n/);
  assert.match(op.output(), /[^-]icanon/);
  process.kill(pid, 0); // still alive: throws if not
});

test('jackin ls lists live instances with their program and attached state, and stale ones', async (t) => {
  const { home } = setup(t);
  await startCapsule(home, 'one');
  mkdirSync(join(home, 'sockets', 'gone'), { recursive: true });
  writeFileSync(
    join(home, 'sockets', 'gone', 'capsule.json'),
    JSON.stringify({ pid: 2147483646, name: 'gone', program: ['vim'], workspace: '/w', startedAt: 'x' }),
  );
  const out = execFileSync(process.execPath, [JACKIN_BIN, 'ls', '--json'], { env: { ...process.env, JACKIN_HOME: home }, encoding: 'utf8' });
  const list = JSON.parse(out) as Array<Record<string, unknown>>;
  assert.deepEqual(
    list.map((i) => [i['name'], i['state'], i['attached'], i['program']]),
    [
      ['gone', 'stale', null, ['vim']],
      ['one', 'live', false, ['bash', '--norc', '--noprofile']],
    ],
  );
  const table = execFileSync(process.execPath, [JACKIN_BIN, 'ls'], { env: { ...process.env, JACKIN_HOME: home }, encoding: 'utf8' });
  assert.match(table, /^NAME +STATE +ATTACHED +PROGRAM +SOCKET\n/);
  assert.match(table, /\none +live +no +bash --norc --noprofile +\S+one\/jackin.sock\n/);
});

test('jackin errors are one line on stderr, their code last, with a non-zero status; usage errors exit 2 as the plain line', () => {
  const home = mkdtempSync(join(tmpdir(), 'jackin-host-'));
  try {
    const r = spawnSyncJackin(['attach', 'nope', '--socket', join(home, 'missing.sock')], home);
    assert.equal(r.status, 1);
    assert.equal(r.stderr, `jackin: no socket at ${join(home, 'missing.sock')} (E_SOCKET_UNAVAILABLE)\n`);
    const u = spawnSyncJackin(['attach', 'x', '--socket', '/a', '--via', 'docker'], home);
    assert.equal(u.status, 2);
    assert.equal(u.stderr, 'jackin: --socket and --via cannot be combined: pick one transport\n');
    const bad = spawnSyncJackin(['attach', 'x', '--bogus'], home);
    assert.equal(bad.status, 2);
    assert.match(bad.stderr, /unknown option '--bogus'/);
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
});

import { spawnSync } from 'node:child_process';
function spawnSyncJackin(args: string[], home: string) {
  return spawnSync(process.execPath, [JACKIN_BIN, ...args], { env: { ...process.env, JACKIN_HOME: home }, encoding: 'utf8' });
}
