// needs-docker-engine
// End-to-end: what a hostile program can leave in its workspace against the operator's next
// `jackin run --image` (issue 43), on Podman (the .env test on a real Docker engine too) with tmux as the
// operator's terminal. Each attack acted before its fix: a workspace `.env` put LD_PRELOAD (and
// CONTAINER_HOST, DOCKER_HOST, CONTAINERS_CONF, HOME, ...) into the environment of the host's own engine
// client, whose loader then ran the agent's library as the operator, and which sent its `run` to the
// agent's socket; a
// `--volume ./data:/data` followed a symlink the agent planted and mounted a directory outside the
// workspace; an `--env-file .env` followed one and read a file of the operator's outside it; and
// `--env hunter2` was echoed as if it were a name.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { INNER_PROMPT, INNER_SHELL, JACKIN, paneFor, waitForJackinExit, JACKIN_BIN } from './helpers/jackin-cli.ts';
import { containerName, glibcTestImage, removeContainer, type TestEngine } from './helpers/podman-image.mjs';
import { shellQuote } from './helpers/tmux.ts';
import { testDir } from './helpers/test-run.ts';

const execFileP = promisify(execFile);
const CONTAINER_START_MS = 60_000;

function scratch(t: TestContext, label: string): string {
  return testDir(t, `jackin-hri-${label}-`, { shared: true });
}

/** The real engine on this machine's PATH (the recording wrapper execs it). */
function realEngine(engine: TestEngine): string {
  for (const dir of (process.env['PATH'] ?? '/usr/bin:/bin').split(':')) {
    const p = join(dir, engine);
    if (dir !== '' && existsSync(p)) return p;
  }
  throw new Error(`${engine} is not installed`);
}

/** A NUL-separated environment (as /proc/PID/environ holds it) as a map. */
function environ(bytes: Buffer): Map<string, string> {
  const m = new Map<string, string>();
  for (const e of bytes.toString('utf8').split('\0')) {
    if (e === '') continue;
    const eq = e.indexOf('=');
    m.set(e.slice(0, eq), e.slice(eq + 1));
  }
  return m;
}

/** Whether a container of that exact name exists (running or not). */
async function containerExists(name: string): Promise<boolean> {
  return execFileP('podman', ['container', 'exists', name]).then(
    () => true,
    () => false,
  );
}

for (const engine of ['podman', 'docker'] as const satisfies readonly TestEngine[]) {
  test(`${engine}: hostile workspace .env: the host's ${engine} runs with the operator's environment only (LD_PRELOAD never loads on the host, no socket the .env names is reached), jackin's env file is private and gone once the container started, and the ordinary variable reaches the program`, {
    timeout: 180_000,
  }, async (t) => {
    const dir = scratch(t, `env-${engine}`);
    const ws = join(dir, 'ws');
    mkdirSync(join(ws, '.cache', 'home'), { recursive: true });
    mkdirSync(join(ws, '.cache', 'tmp'));
    chmodSync(ws, 0o777);
    // The agent's library: its constructor writes, in any host process that loads it, which program it runs in.
    // The marker is outside the workspace, a path the container does not have: only a host process can write it.
    const marker = join(dir, 'preload-ran-in');
    const source = join(dir, 'x.c');
    writeFileSync(
      source,
      `#include <fcntl.h>\n#include <unistd.h>\n` +
        `__attribute__((constructor)) static void ran(void) {\n` +
        `  char exe[512]; ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1); if (n < 0) n = 0; exe[n++] = '\\n';\n` +
        `  int fd = open(${JSON.stringify(marker)}, O_WRONLY | O_CREAT | O_APPEND, 0600); if (fd >= 0) { (void)!write(fd, exe, n); close(fd); }\n}\n`,
    );
    execFileSync('gcc', ['-shared', '-fPIC', '-o', join(ws, '.cache', 'x.so'), source]);
    writeFileSync(join(ws, '.cache', 'containers.conf'), "# the agent's\n");
    const ordinary = `ord-${randomBytes(8).toString('hex')}`;
    const hostile: Record<string, string> = {
      LD_PRELOAD: './.cache/x.so',
      DOCKER_HOST: `unix://${join(dir, 'other', 'd.sock')}`,
      DOCKER_CONFIG: './.cache',
      CONTAINER_HOST: `unix://${join(dir, 'other', 'p.sock')}`,
      CONTAINERS_CONF: './.cache/containers.conf',
      HOME: join(ws, '.cache', 'home'),
      TMPDIR: join(ws, '.cache', 'tmp'),
      SSL_CERT_FILE: './.cache/ca.pem',
    };
    // A value as an env file carries it: leading and trailing blanks, quotes, `#` and `=` kept as they are.
    const tricky = `  "quoted" 'single' # not a comment = é ${randomBytes(4).toString('hex')}  `;
    writeFileSync(
      join(ws, '.env'),
      `# written by the agent\n${Object.entries(hostile)
        .map(([k, v]) => `${k}=${v}\n`)
        .join('')}JT_ORDINARY=${ordinary}\nJT_TRICKY=${tricky}\n`,
    );

    // A recording engine client first on PATH: for each call, its own environment and its parent's (jackin's) as the
    // kernel holds them, its argv, and the env file it was given (mode, owner, content) before exec'ing the real one.
    const rec = join(dir, 'rec');
    const bin = join(dir, 'bin');
    mkdirSync(rec);
    mkdirSync(bin);
    writeFileSync(
      join(bin, engine),
      `#!/bin/sh\nr=${shellQuote(rec)}/$$\ncat /proc/$$/environ > "$r.env"\ncat /proc/$PPID/environ > "$r.parent-env"\ntr '\\0' ' ' < /proc/$PPID/cmdline > "$r.parent-cmdline"\nprintf '%s\\0' "$@" > "$r.argv"\n` +
        `prev=\nfor a in "$@"; do\n  if [ "$prev" = --env-file ]; then stat -c '%a %u' "$a" "$(dirname "$a")" > "$r.env-file-mode"; cat "$a" > "$r.env-file"; fi\n  prev=$a\ndone\n` +
        `exec ${shellQuote(realEngine(engine))} "$@"\n`,
      { mode: 0o755 },
    );
    const name = containerName(`hostile-env-${engine}`);
    t.after(() => removeContainer(name, engine));
    const image = await glibcTestImage(engine);
    const pane = await paneFor(t, { rows: 30, cols: 200, cwd: ws, env: { PATH: `${bin}:${process.env['PATH'] ?? '/usr/bin:/bin'}` } });
    // Sockets "in another container's run directory" where CONTAINER_HOST and DOCKER_HOST point: each counts
    // the clients that connect (an engine client sending its next `run` there), and hangs up on them.
    const connected: string[] = [];
    mkdirSync(join(dir, 'other'));
    for (const sock of ['p.sock', 'd.sock']) {
      const server = createServer((c) => {
        connected.push(sock);
        c.destroy();
      });
      await new Promise<void>((resolve) => server.listen(join(dir, 'other', sock), resolve));
      t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
    }
    await pane.typeLine(`clear; ${JACKIN} run --image ${image.ref} --engine ${engine} --name ${name} --env-file .env -- ${INNER_SHELL}; echo "jackin-rc=$?"`);
    const started = await pane.waitForText(/^in\$$|^jackin-rc=\d+$/m, { timeoutMs: CONTAINER_START_MS });

    const calls = readdirSync(rec)
      .filter((f) => f.endsWith('.argv'))
      .map((f) => f.slice(0, -'.argv'.length));
    const argvOf = (c: string) =>
      readFileSync(join(rec, `${c}.argv`), 'utf8')
        .split('\0')
        .slice(0, -1);
    const run = calls.find((c) => argvOf(c)[0] === 'run');
    assert.ok(run !== undefined, `no ${engine} run among ${calls.map((c) => argvOf(c).join(' ')).join(' | ')}`);

    // The library ran in no host process: LD_PRELOAD never reached the host's engine client (or the shell before it).
    assert.equal(existsSync(marker) ? readFileSync(marker, 'utf8') : '', '', "the workspace's LD_PRELOAD library ran on the host, in these programs");
    assert.deepEqual(connected, [], `the host's ${engine} connected to the sockets the workspace's .env named`);
    for (const c of calls) {
      // Exactly the operator's environment, byte for byte: jackin added nothing to it.
      const own = readFileSync(join(rec, `${c}.env`));
      const parent = readFileSync(join(rec, `${c}.parent-env`));
      const said = argvOf(c).join(' ');
      if (readFileSync(join(rec, `${c}.parent-cmdline`), 'utf8').includes(' jackin-reaper ')) {
        // The container reaper (a detached sh, container-reaper.ts) passes jackin's environment on as a shell
        // does: the same variables in its own order, and PWD set to its working directory. Nothing added.
        const mine = environ(own);
        const theirs = environ(parent);
        if (mine.get('PWD') !== theirs.get('PWD')) assert.equal(theirs.get('PWD'), undefined, `${engine} ${said}: PWD changed`);
        mine.delete('PWD');
        theirs.delete('PWD');
        assert.deepEqual(new Map([...mine].sort()), new Map([...theirs].sort()), `${engine} ${said}: its environment is not jackin's`);
      } else assert.ok(own.equals(parent), `${engine} ${said}: its environment is not jackin's`);
      const env = environ(own);
      for (const [k, v] of Object.entries(hostile)) assert.notEqual(env.get(k), v, `${engine} ${said}: ${k} from the workspace's .env`);
      assert.equal(env.has('JT_ORDINARY'), false, `${engine} ${said}: JT_ORDINARY`);
      assert.ok(!argvOf(c).some((a) => a.includes(ordinary)), `${engine} ${said}: a value on its command line`);
    }
    // The values went in a file of jackin's: private (0600 in a 0700 directory, the operator's), outside the
    // workspace and the run directory, with every variable of the .env for the container only.
    const runArgv = argvOf(run);
    const envFile = runArgv[runArgv.indexOf('--env-file') + 1];
    assert.ok(runArgv.includes('--env-file') && envFile !== undefined, `${engine} run without --env-file: ${runArgv.join(' ')}`);
    assert.equal(readFileSync(join(rec, `${run}.env-file-mode`), 'utf8'), `600 ${process.getuid!()}\n700 ${process.getuid!()}\n`);
    assert.ok(!envFile.startsWith(`${ws}/`) && !envFile.startsWith(`${pane.jackinHome}/sockets/`), envFile);
    const lines = readFileSync(join(rec, `${run}.env-file`), 'utf8');
    assert.ok(lines.includes(`\nJT_ORDINARY=${ordinary}\n`) || lines.startsWith(`JT_ORDINARY=${ordinary}\n`), lines);
    assert.ok(lines.includes('LD_PRELOAD=./.cache/x.so\n'), lines);
    // The program has the ordinary variable, and LD_PRELOAD too: the container's business.
    assert.match(started, INNER_PROMPT, started);
    await pane.typeLine('echo "got=$JT_ORDINARY"; echo "preload=$LD_PRELOAD"');
    await pane.waitForText(`got=${ordinary}`);
    await pane.waitForText(/^preload=\.\/\.cache\/x\.so$/m);
    await pane.typeLine('printf %s "$JT_TRICKY" | sha256sum');
    await pane.waitForText(createHash('sha256').update(tricky).digest('hex'));
    // Removed once the engine had started the container, with its directory.
    assert.equal(existsSync(envFile), false, `${envFile} is still there`);
    assert.equal(existsSync(join(envFile, '..')), false, `the directory of ${envFile} is still there`);

    await pane.typeLine('exit 0');
    assert.equal(await waitForJackinExit(pane, 30_000), 0);
  });
}

test('hostile workspace symlink: --volume ./data:/data leading out of the workspace is refused (E_BAD_VOLUME) and nothing starts', {
  timeout: 120_000,
}, async (t) => {
  const dir = scratch(t, 'vol');
  const ws = join(dir, 'ws');
  const outside = join(dir, 'operator-private');
  mkdirSync(ws);
  mkdirSync(outside);
  const secret = `private-${randomBytes(8).toString('hex')}`;
  writeFileSync(join(outside, 'secret.txt'), `${secret}\n`);
  // Planted by the agent: the workspace's `data` is the operator's private directory.
  symlinkSync(outside, join(ws, 'data'));
  const name = containerName('hostile-vol');
  t.after(() => removeContainer(name, 'podman'));
  const image = await glibcTestImage('podman');
  const pane = await paneFor(t, { rows: 30, cols: 200, cwd: ws });
  await pane.typeLine(
    `clear; ${JACKIN} run --image ${image.ref} --engine podman --name ${name} --volume ./data:/data -- cat /data/secret.txt; echo "jackin-rc=$?"`,
  );
  const rc = await waitForJackinExit(pane, CONTAINER_START_MS);
  const screen = await pane.capture({ history: true, joined: true });
  assert.ok(!screen.includes(secret), `the operator's file was mounted and read:\n${screen}`);
  assert.equal(rc, 2, screen);
  assert.match(screen, /\(E_BAD_VOLUME\)/);
  assert.equal(await containerExists(name), false, 'a container was created');
});

test('hostile workspace symlink: --env-file .env leading out of the workspace is refused (E_BAD_ENV) and nothing is read', { timeout: 120_000 }, async (t) => {
  const dir = scratch(t, 'envlink');
  const ws = join(dir, 'ws');
  mkdirSync(ws);
  const secret = `private-${randomBytes(8).toString('hex')}`;
  // Another project's env file of the operator's, outside this workspace; the agent links `.env` to it.
  writeFileSync(join(dir, 'other-project.env'), `OTHER_PROJECT_TOKEN=${secret}\n`);
  symlinkSync(join(dir, 'other-project.env'), join(ws, '.env'));
  const name = containerName('hostile-envlink');
  t.after(() => removeContainer(name, 'podman'));
  const image = await glibcTestImage('podman');
  const pane = await paneFor(t, { rows: 30, cols: 200, cwd: ws });
  await pane.typeLine(
    `clear; ${JACKIN} run --image ${image.ref} --engine podman --name ${name} --env-file .env -- sh -c 'echo "leak=$OTHER_PROJECT_TOKEN"'; echo "jackin-rc=$?"`,
  );
  const rc = await waitForJackinExit(pane, CONTAINER_START_MS);
  const screen = await pane.capture({ history: true, joined: true });
  assert.ok(!screen.includes(secret), `the operator's file was read into the container:\n${screen}`);
  assert.equal(rc, 2, screen);
  assert.match(screen, /--env-file \.env: .*\(E_BAD_ENV\)/s);
  assert.equal(await containerExists(name), false, 'a container was created');
});

test('a value given where a name goes (--env hunter2) is never echoed by E_BAD_ENV', async (t) => {
  const dir = scratch(t, 'echo');
  for (const value of ['hunter2', 'letmein', 'correcthorse', 'Tr0ub4dor', 'swordfish_42']) {
    let stderr = '';
    let code = 0;
    try {
      await execFileP(
        process.execPath,
        [JACKIN_BIN, 'run', '--image', 'img', '--engine', 'podman', '--name', 'echo', '--workspace', dir, '--dry-run', '--env', value, '--', 'sh'],
        {
          env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', JACKIN_HOME: join(dir, 'jh') },
          encoding: 'utf8',
        },
      );
    } catch (e) {
      const x = e as { code?: number; stderr?: string };
      code = x.code ?? -1;
      stderr = x.stderr ?? '';
    }
    assert.equal(code, 2, `--env ${value}: ${stderr}`);
    assert.match(stderr, /\(E_BAD_ENV\)/);
    assert.ok(!stderr.includes(value), `echoed: ${stderr}`);
  }
});
