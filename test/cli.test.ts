/**
 * The CLI's output contract for errors: one line on stderr, or one JSON object when the command that ran
 * was given --json, decided from the options commander parsed (not from the raw argv).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pty from '@lydell/node-pty';
import { CAPSULE_BIN, JACKIN_BIN } from './helpers/jackin-cli.ts';
import { jackinStderrOffTerminal } from './helpers/terminal-stderr.ts';

function runBin(bin: string, args: string[], stdout: 'pipe' | number = 'pipe', extraEnv: NodeJS.ProcessEnv = {}) {
  const home = mkdtempSync(join(tmpdir(), 'jackin-cli-'));
  try {
    const env = { ...process.env, JACKIN_HOME: home, JACKIN_RUN_DIR: join(home, 'run'), ...extraEnv };
    return spawnSync(process.execPath, [bin, ...args], { env, encoding: 'utf8', stdio: ['ignore', stdout, 'pipe'] });
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}

function jackin(args: string[]) {
  return runBin(JACKIN_BIN, args);
}

function capsule(args: string[]) {
  return runBin(CAPSULE_BIN, args);
}

test('a --json after `jackin run --` belongs to the program: the error stays one plain line', () => {
  const missing = join(tmpdir(), 'jackin-cli-no-such-workspace');
  const r = jackin(['run', '--workspace', missing, '--', 'tool', '--json']);
  assert.equal(r.status, 2);
  assert.equal(r.stderr, `jackin: workspace ${missing} is not a directory: pass an existing --workspace\n`);
});

test('a command given --json reports its error as one JSON object', () => {
  const r = jackin(['export', '--json']);
  assert.equal(r.status, 2);
  assert.deepEqual(JSON.parse(r.stderr), { error: { code: 'E_USAGE', message: 'name at least one container path, or pass --offered' } });
  assert.equal(r.stderr.split('\n').length, 2, 'one line');
  // The same error without --json is one plain line.
  const plain = jackin(['export']);
  assert.equal(plain.status, 2);
  assert.equal(plain.stderr, 'jackin: name at least one container path, or pass --offered\n');
});

test('every command is registered, in the documented order', () => {
  const r = jackin(['--help']);
  assert.equal(r.status, 0, r.stderr);
  const commands = [...r.stdout.matchAll(/^ {2}(\w[\w-]*)(?= )/gm)].map((m) => m[1]);
  assert.deepEqual(commands.slice(0, 15), [
    'attach',
    'run',
    'ls',
    'doctor',
    'export',
    'stop',
    'rm',
    'prune',
    'logs',
    'stage',
    'log',
    'forward',
    'runtime',
    'completion',
    'help',
  ]);
});

test('a usage error is one line on stderr naming the help to read, with exit status 2, from both programs', () => {
  const cases: Array<[ReturnType<typeof jackin>, string]> = [
    [jackin(['exprot']), "jackin: unknown command 'exprot' (did you mean export?); see `jackin --help`\n"],
    [jackin(['ls', '--bogus']), "jackin: unknown option '--bogus'; see `jackin ls --help`\n"],
    [jackin(['attach']), 'jackin: missing the instance: `jackin attach NAME` or `jackin attach --name NAME`; see `jackin attach --help`\n'],
    [
      jackin(['attach', 'x', '--via', 'foo']),
      "jackin: option '--via <engine>' argument 'foo' is invalid. Allowed choices are docker, podman, kubectl; see `jackin attach --help`\n",
    ],
    [jackin(['export', '--reveal', '--open', 'x']), "jackin: option '--reveal' cannot be used with option '--open'; see `jackin export --help`\n"],
    [capsule(['bogus']), "jackin-capsule: unknown command 'bogus'; see `jackin-capsule --help`\n"],
    [capsule(['serve']), "jackin-capsule: missing required argument 'cmd'; see `jackin-capsule serve --help`\n"],
    [
      capsule(['serve', '--rows', 'x', '--', 'true']),
      `jackin-capsule: option '--rows <n>' argument 'x' is invalid. expected a positive integer, got "x"; see \`jackin-capsule serve --help\`\n`,
    ],
    [capsule(['copy', '--bogus']), "jackin-capsule: unknown option '--bogus'; see `jackin-capsule copy --help`\n"],
  ];
  for (const [r, line] of cases) {
    assert.equal(r.stderr, line);
    assert.equal(r.stdout, '');
    assert.equal(r.status, 2, line);
  }
});

test('a reader that closes early (`jackin log | head -1`) ends jackin quietly with 141, as SIGPIPE would', async (t) => {
  const home = mkdtempSync(join(tmpdir(), 'jackin-cli-'));
  t.after(() => rmSync(home, { recursive: true, force: true }));
  mkdirSync(join(home, 'log'), { mode: 0o700 });
  // Far more than a pipe holds (64 KiB), so jackin is still writing when the reader goes.
  const record = JSON.stringify({ time: '2026-01-01T00:00:00.000Z', instance: 'a', action: 'export', target: 'x'.repeat(200), result: 'ok' });
  writeFileSync(join(home, 'log', 'actions.jsonl'), `${record}\n`.repeat(20_000), { mode: 0o600 });
  for (const args of [
    ['log', '--tail', '0'],
    ['log', '--tail', '0', '--json'],
  ]) {
    const child = spawn(process.execPath, [JACKIN_BIN, ...args], { env: { ...process.env, JACKIN_HOME: home }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    const exited = new Promise<number | null>((res) => child.once('close', (code) => res(code)));
    // Like `head -1`: read the first chunk, then close the pipe.
    await new Promise<void>((res) => child.stdout.once('data', () => res()));
    child.stdout.destroy();
    assert.equal(await exited, 141, args.join(' '));
    assert.equal(stderr, '', 'no EPIPE error or stack trace');
  }
});

test('output that cannot be written (a full disk) is one line on stderr and status 1, from both programs', () => {
  const full = openSync('/dev/full', 'w');
  try {
    const cases: Array<[ReturnType<typeof jackin>, string]> = [
      [runBin(JACKIN_BIN, ['ls'], full), 'jackin'],
      [runBin(JACKIN_BIN, ['--help'], full), 'jackin'],
      [runBin(CAPSULE_BIN, ['--help'], full), 'jackin-capsule'],
    ];
    for (const [r, bin] of cases) {
      assert.equal(r.stderr, `${bin}: cannot write the output: ENOSPC: no space left on device, write\n`);
      assert.equal(r.status, 1);
    }
  } finally {
    closeSync(full);
  }
});

test('the reason an attach ended is one line when stderr is not a terminal (no blank line, no carriage return)', async (t) => {
  const home = mkdtempSync(join(tmpdir(), 'jackin-cli-'));
  t.after(() => rmSync(home, { recursive: true, force: true }));
  const r = await jackinStderrOffTerminal(t, ['attach', 'nope', '--exec', 'echo boom >&2; exit 3'], { ...process.env, JACKIN_HOME: home });
  assert.equal(r.code, 1);
  assert.match(r.stderr.toString('utf8'), /^jackin: lost connection to nope: [^\r\n]*boom[^\r\n]*\n$/);
});

test('jackin attach on a terminal: a relay that fails at once ends the session with its own reason, not the handshake timeout', async (t) => {
  // Node drains a child's stdout once the child exits if nothing reads it yet: a session that starts
  // listening after that misses the end, and waited for the capsule's handshake timeout instead.
  const home = mkdtempSync(join(tmpdir(), 'jackin-cli-'));
  t.after(() => rmSync(home, { recursive: true, force: true }));
  const relay = `echo 'Error: no container with name or ID "box" found: no such container' >&2; exit 125`;
  const env = { ...process.env, JACKIN_HOME: home, JACKIN_CLIPBOARD: 'none' } as Record<string, string>;
  const term = pty.spawn(process.execPath, [JACKIN_BIN, 'attach', 'box', '--exec', relay], {
    name: 'xterm-256color',
    cols: 300,
    rows: 30,
    env,
    encoding: null,
  });
  t.after(() => {
    try {
      term.kill();
    } catch {
      // already gone
    }
  });
  const chunks: Buffer[] = [];
  term.onData((d) => chunks.push(typeof d === 'string' ? Buffer.from(d) : d));
  const code = await new Promise<number>((resolve) => term.onExit(({ exitCode }) => resolve(exitCode)));
  const text = Buffer.concat(chunks).toString('utf8');
  assert.equal(code, 1, text);
  // The first thing that fails says it (the relay's stdout closing, or the host's Hello meeting a closed
  // stdin): either way the line names the relay's own account, which only comes once the relay exited.
  assert.match(text, /jackin: lost connection to box: [^\r\n]*\(no such container[^\r\n]*relay exited with status 125/);
  assert.doesNotMatch(text, /handshake/);
});

test('every command of both programs has help with an example, on stdout with status 0', () => {
  for (const [bin, run] of [
    ['jackin', jackin],
    ['jackin-capsule', capsule],
  ] as const) {
    const top = run(['--help']);
    assert.equal(top.status, 0, top.stderr);
    const section = top.stdout.split('\n\n').find((block) => block.startsWith('Commands:')) ?? '';
    const commands = [...section.matchAll(/^ {2}(\w[\w-]*)(?= )/gm)].map((m) => m[1]!).filter((c) => c !== 'help');
    assert.ok(commands.length >= 5, `${bin} lists its commands`);
    for (const command of commands) {
      const r = run([command, '--help']);
      assert.equal(r.status, 0, `${bin} ${command} --help: ${r.stderr}`);
      assert.equal(r.stderr, '');
      assert.match(r.stdout, new RegExp(`^Usage: ${bin} ${command} `, 'm'));
      assert.match(r.stdout, /^Examples?( \([^)]*\))?:$/m, `${bin} ${command} --help shows an example`);
    }
  }
});

test('a JACKIN_HOME (or a capsule run directory) that cannot be used is E_HOST_IO (E_RUN_DIR): one line with the path, the system error and the fix, status 1', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'jackin-cli-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const home = join(dir, 'a-file');
  writeFileSync(home, '');
  const fix = 'a part of that path is not a directory: check JACKIN_HOME';
  for (const [args, line] of [
    [['ls'], `jackin: cannot scandir ${home}/sockets: not a directory (ENOTDIR); ${fix} (E_HOST_IO)\n`],
    [['log'], `jackin: cannot open ${home}/log/actions.jsonl: not a directory (ENOTDIR); ${fix} (E_HOST_IO)\n`],
    [['run', '--name', 'x', '--', 'true'], `jackin: cannot mkdir ${home}/sockets/x: not a directory (ENOTDIR); ${fix} (E_HOST_IO)\n`],
  ] as const) {
    const r = runBin(JACKIN_BIN, [...args], 'pipe', { JACKIN_HOME: home });
    assert.equal(r.stderr, line);
    assert.equal(r.status, 1);
  }
  // The same for jackin-capsule's run directory.
  const serve = capsule(['serve', '--run-dir', join(home, 'run'), '--', 'true']);
  assert.equal(
    serve.stderr,
    `jackin-capsule: E_RUN_DIR: cannot mkdir ${home}/run: not a directory (ENOTDIR); a part of that path is not a directory: check --run-dir (or JACKIN_RUN_DIR)\n`,
  );
  assert.equal(serve.status, 1);
  const json = runBin(JACKIN_BIN, ['ls', '--json'], 'pipe', { JACKIN_HOME: home });
  assert.equal(json.status, 1);
  assert.equal(json.stdout, '');
  assert.equal((JSON.parse(json.stderr) as { error: { code: string } }).error.code, 'E_HOST_IO');
});

/** A stand-in docker that appends its argv (one line per call) to `asked` and answers as docker does for a missing container. */
function missingContainerDocker(dir: string): string {
  const asked = join(dir, 'asked');
  writeFileSync(join(dir, 'docker'), `#!/bin/sh\necho "$*" >> '${asked}'\necho "Error response from daemon: No such container: $4$3" >&2\nexit 1\n`, {
    mode: 0o755,
  });
  return asked;
}

/** Every command that targets an instance, naming `name` (the old spellings too). */
function targeting(name: string): string[][] {
  return [
    ['attach', name],
    ['attach', '--name', name],
    ['export', '--name', name, 'x.txt'],
    ['export', '--from', name, 'x.txt'],
    ['stage', '--name', name, '/etc/hostname'],
    ['stage', '--to', name, '/etc/hostname'],
    ['forward', name, '5173'],
    ['forward', '--name', name, '5173', ':3000'],
    ['stop', name],
  ];
}

test('every command given a name that matches nothing says E_NO_INSTANCE, where it looked and the fix', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'jackin-cli-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const asked = missingContainerDocker(dir);
  for (const args of [...targeting('tpyo'), ['log', 'tpyo'], ['log', '--name', 'tpyo']]) {
    const r = runBin(JACKIN_BIN, args, 'pipe', { PATH: dir });
    const what = args.join(' ');
    assert.equal(r.status, 1, `${what}: ${r.stderr}`);
    assert.match(
      r.stderr,
      /^jackin: no instance named tpyo: none in \/.*\/sockets[,; ].*`jackin ls` lists the local instances, `jackin run --name tpyo` starts one \(E_NO_INSTANCE\)\n$/,
      what,
    );
    // attach, export, stage and forward asked the engine they would exec through; stop and log ask none.
    if (!['stop', 'log'].includes(args[0]!)) assert.match(r.stderr, /and docker has no container of that name \(`docker ps -a` lists them\)/, what);
  }
  assert.ok(readFileSync(asked, 'utf8').includes('inspect --type container --format {{.State.Status}} tpyo\n'));
  // The same with --via docker: the engine's "no such container" is E_NO_INSTANCE too.
  const via = runBin(JACKIN_BIN, ['export', '--name', 'tpyo', '--via', 'docker', 'x.txt'], 'pipe', { PATH: dir });
  assert.match(via.stderr, /^jackin: no instance named tpyo: docker has no container of that name .*\(E_NO_INSTANCE\)\n$/);
});

test('every command given a local capsule that died (its run directory, log and socket left, nothing listening) says E_INSTANCE_DEAD and how to clean up', (t) => {
  const home = mkdtempSync(join(tmpdir(), 'jackin-cli-'));
  t.after(() => rmSync(home, { recursive: true, force: true }));
  const runDir = join(home, 'sockets', 'gone');
  mkdirSync(runDir, { recursive: true });
  writeFileSync(join(runDir, 'capsule.log'), 'capsule started\n');
  // A real socket whose process was killed: the file stays, nothing listens.
  const killed = spawnSync(
    process.execPath,
    ['-e', `require('node:net').createServer().listen(${JSON.stringify(join(runDir, 'jackin.sock'))}, () => process.kill(process.pid, 'SIGKILL'))`],
    { stdio: 'ignore' },
  );
  assert.equal(killed.signal, 'SIGKILL');
  assert.ok(existsSync(join(runDir, 'jackin.sock')));
  // A docker that would answer "running" must not be asked: the local run directory is the instance.
  writeFileSync(join(home, 'docker'), '#!/bin/sh\necho running\n', { mode: 0o755 });
  for (const args of targeting('gone')) {
    const r = runBin(JACKIN_BIN, args, 'pipe', { JACKIN_HOME: home, PATH: home });
    const what = args.join(' ');
    assert.equal(r.status, 1, `${what}: ${r.stderr}`);
    assert.equal(
      r.stderr,
      `jackin: the capsule of gone is not running: it left its run directory ${runDir} behind, and nothing listens on its socket; remove it with \`jackin rm gone\`, or start it again with \`jackin run --name gone\` (E_INSTANCE_DEAD)\n`,
      what,
    );
  }
});

test('jackin-capsule serve refuses a missing workspace (2) or a program it cannot run (E_SPAWN_FAILED) before it opens a socket; jackin run says so', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'jackin-cli-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const runDir = join(dir, 'run');
  const missing = join(dir, 'no-such-workspace');
  const ws = capsule(['serve', '--run-dir', runDir, '--workspace', missing, '--', 'true']);
  assert.equal(ws.status, 2);
  assert.equal(ws.stderr, `jackin-capsule: E_USAGE: workspace ${missing} is not a directory: pass an existing --workspace\n`);
  const PATH = join(dir, 'bin');
  const byName = runBin(CAPSULE_BIN, ['serve', '--run-dir', runDir, '--', 'no-such-program'], 'pipe', { PATH });
  assert.equal(byName.status, 1);
  assert.equal(byName.stderr, `jackin-capsule: E_SPAWN_FAILED: cannot run "no-such-program": not found on PATH (${PATH}); check the name, or give its path\n`);
  const byPath = capsule(['serve', '--run-dir', runDir, '--workspace', dir, '--', './no-such-program']);
  assert.equal(byPath.status, 1);
  assert.equal(byPath.stderr, `jackin-capsule: E_SPAWN_FAILED: cannot run ${join(dir, 'no-such-program')}: ENOENT; check the path and that it is executable\n`);
  assert.equal(existsSync(join(runDir, 'jackin.sock')), false, 'no socket was opened');
  const run = jackin(['run', '--name', 'x', '--', 'no-such-program']);
  assert.equal(run.status, 1);
  assert.match(
    run.stderr,
    /^jackin: capsule for x exited with status 1 before its socket was ready: jackin-capsule: E_SPAWN_FAILED: cannot run "no-such-program": not found on PATH/,
  );
});

test('jackin export --to a file is a usage error said once, before anything is pulled', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'jackin-cli-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'a-file');
  writeFileSync(file, 'kept');
  const r = jackin(['export', '--from', 'agent', '--to', file, 'a.txt', 'b.txt']);
  assert.equal(r.status, 2);
  assert.equal(r.stderr, `jackin: --to ${file} is not a directory: pass a directory (one that does not exist yet is created)\n`);
  assert.equal(readFileSync(file, 'utf8'), 'kept');
});

test('usage errors jackin finds itself name the fix too', () => {
  for (const [args, line] of [
    [['run', '--engine', 'docker', '--', 'true'], 'jackin: --engine applies only with --image: add --image IMAGE, or leave it out\n'],
    [['run', '--dry-run', '--user', '1', '--', 'true'], 'jackin: --user, --dry-run apply only with --image: add --image IMAGE, or leave them out\n'],
    [['run', '--format', 'compose', '--', 'true'], 'jackin: --format applies only with --image: add --image IMAGE, or leave it out\n'],
    [['run', '--image', 'img', '--format', 'compose', '--', 'true'], 'jackin: --format applies only with --dry-run: add --dry-run, or leave it out\n'],
    [['log', '--tail', 'x'], 'jackin: --tail "x" is not a number of records: pass a whole number (0 shows them all)\n'],
    [['log', '--lines', 'x'], 'jackin: --tail "x" is not a number of records: pass a whole number (0 shows them all)\n'],
    [['log', '-n', '5'], 'jackin: -n is no longer the number of records: use --tail 5 (-n is the Kubernetes namespace in the other commands)\n'],
    [['attach', 'a', '--name', 'b'], 'jackin: NAME and --name name different instances (a, b): name it once\n'],
    [['export', '--name', 'a', '--from', 'b', 'x'], 'jackin: --name and --from name different instances (a, b): name it once\n'],
    [['stage', '--name', 'a', '--to', 'b', '/etc/hostname'], 'jackin: --name and --to name different instances (a, b): name it once\n'],
    [['stop'], 'jackin: missing the instance: `jackin stop NAME` or `jackin stop --name NAME`; see `jackin stop --help`\n'],
    [['forward', '--name', 'a'], 'jackin: name at least one port: PORT, HOSTPORT:CONTAINERPORT or :CONTAINERPORT (E_FORWARD_PORT)\n'],
    [['forward', 'a', '9000', '9000:80'], 'jackin: host port 9000 is named twice: each forward needs its own host port (E_FORWARD_PORT)\n'],
  ] as const) {
    const r = jackin([...args]);
    assert.equal(r.stderr, line);
    assert.equal(r.status, 2);
  }
});

test('an instance name holding a control, bidi or path character is refused at every entry with one code, and shown inert', () => {
  const names = ['q\x1b]52;c;SEVZ\x07', 'evil\u202egnp', 'a/b', 'a\u200bb'];
  const entries = (name: string): Array<[string, string[]]> => [
    [JACKIN_BIN, ['run', '--name', name, '--', 'true']],
    [JACKIN_BIN, ['run', '--image', 'debian:bookworm', '--name', name, '--', 'true']],
    [JACKIN_BIN, ['attach', name]],
    [JACKIN_BIN, ['stop', name]],
    [JACKIN_BIN, ['log', name]],
    [JACKIN_BIN, ['export', '--from', name, '/etc/hostname']],
    [JACKIN_BIN, ['stage', '--to', name, '/etc/hostname']],
    [JACKIN_BIN, ['forward', name, '3000']],
    [CAPSULE_BIN, ['serve', '--name', name, '--', 'true']],
  ];
  for (const name of names) {
    for (const [bin, args] of entries(name)) {
      const r = runBin(bin, args);
      const what = `${bin === CAPSULE_BIN ? 'jackin-capsule' : 'jackin'} ${args[0]} ${JSON.stringify(name)}`;
      assert.equal(r.status, 2, `${what}: ${r.stderr}`);
      assert.match(r.stderr, /E_BAD_INSTANCE_NAME/u, what);
      // Nothing of the name reaches the terminal as it is: no control, format or bidi character at all.
      for (const line of r.stderr.split('\n')) assert.doesNotMatch(line, /[\p{Cc}\p{Cf}]/u, what);
    }
  }
});
