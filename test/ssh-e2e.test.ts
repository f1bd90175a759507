// End-to-end: jackin over a real OpenSSH server on loopback (issue 47): test/helpers/sshd.mjs is the remote.
// Debian packages: openssh-server, openssh-client, tmux, xvfb, xclip.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { get as httpGet } from 'node:http';
import { existsSync, mkdirSync, readdirSync, readFileSync, readlinkSync, rmdirSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { capsulePid, isAlive } from './helpers/capsules.ts';
import { INNER_PROMPT, INNER_SHELL, JACKIN, JACKIN_BIN, paneFor, runJackin, waitForInnerShell, waitForJackinExit } from './helpers/jackin-cli.ts';
import { freePort, probePort } from './helpers/free-port.ts';
import { pollUntil } from './helpers/poll.ts';
import { stopChild } from './helpers/stop-child.ts';
import { ownClipboard, startXvfb } from './helpers/xvfb.ts';
import { SSH_TEST_HOST, startSshd } from './helpers/sshd.mjs';
import { shellQuote } from './helpers/tmux.ts';
import { testDir, testRunEnv } from './helpers/test-run.ts';
import { ownControlSockets, sshClient, testSshCommand } from './helpers/ssh-client.ts';
import { runtimeNode, sharedRuntimeCache } from './helpers/runtime-cache.ts';

const CTRL_BACKSLASH = 0x1c;
/** The first run copies the host's Node and package (about 110 MB) over ssh and checks them there. */
const FIRST_RUN_TIMEOUT_MS = 60_000;

test('the test sshd takes `ssh -F CFG testhost` with its own keys and gives the session its JACKIN_HOME', async (t) => {
  const sshd = await startSshd(t);
  const out = execFileSync('ssh', ['-F', sshd.clientConfig, SSH_TEST_HOST, 'echo "$JACKIN_HOME"; uname -s'], { encoding: 'utf8' });
  assert.equal(out, `${sshd.remoteJackinHome}\nLinux\n`);
  // A dropped server: a new one on the same port with the same keys is trusted as before.
  await sshd.kill();
  await sshd.restart();
  assert.equal(execFileSync('ssh', ['-F', sshd.clientConfig, SSH_TEST_HOST, 'echo again'], { encoding: 'utf8' }), 'again\n');
});

/** The remote's runtime cache: its entries, and the one runtime's inode (a new copy is a new directory). */
function cacheState(cacheHome: string): { entries: string[]; ino: number } {
  const dir = join(cacheHome, 'jackin', 'capsule');
  const entries = readdirSync(dir).sort();
  return { entries, ino: entries.length === 1 ? statSync(join(dir, entries[0]!)).ino : -1 };
}

test('jackin run --ssh: nothing of jackin on the remote, detach, ls/export/attach --ssh, a dropped link, the cache reused, stop --ssh', async (t) => {
  const sshd = await startSshd(t);
  const downloads = testDir(t, 'jackin-ssh-downloads-');
  const workspace = join(sshd.dir, 'remote-workspace');
  mkdirSync(workspace);
  const pane = await paneFor(t, { env: { JACKIN_SSH_COMMAND: testSshCommand(sshd), JACKIN_DOWNLOAD_DIR: downloads } });
  const { env, sockets } = sshClient(sshd, pane.home, { JACKIN_DOWNLOAD_DIR: downloads });
  const remote = ['--ssh', SSH_TEST_HOST];
  const attachLine = `clear; ${JACKIN} attach --ssh ${SSH_TEST_HOST} remote; echo "jackin-rc=$?"`;
  const detach = async (): Promise<void> => {
    await pane.sendBytes([CTRL_BACKSLASH]);
    await pane.type('d');
    const rc = await waitForJackinExit(pane);
    assert.equal(rc, 0, `a detach is a clean exit:\n${await pane.capture()}`);
  };

  await pane.typeLine(`clear; ${JACKIN} run --ssh ${SSH_TEST_HOST} --name remote -w ${shellQuote(workspace)} -- ${INNER_SHELL}; echo "jackin-rc=$?"`);
  await pane.waitForText(INNER_PROMPT, { timeoutMs: FIRST_RUN_TIMEOUT_MS });
  // The program runs on the remote side: the session's environment is sshd's (SetEnv), its directory the workspace.
  await pane.typeLine('clear; echo "remote-$((6*7)) $JACKIN_HOME"; pwd; printf \'exported \\001 bytes\\n\' > out.bin');
  await pane.waitForText(new RegExp(`^remote-42 ${sshd.remoteJackinHome}\\n${workspace}\\nin\\$$`, 'm'));
  const cached = cacheState(sshd.remoteCacheHome);
  assert.equal(cached.entries.length, 1, `one runtime in the remote's cache: ${cached.entries.join(', ')}`);
  await detach();
  const pid = await capsulePid(sshd.remoteJackinHome, 'remote');
  assert.ok(isAlive(pid), 'the remote capsule survives the detach');

  const ls = await runJackin(['ls', ...remote, '--json'], env);
  assert.equal(ls.code, 0, ls.stderr);
  const listed = JSON.parse(ls.stdout) as { name: string; state: string; pid: number }[];
  assert.deepEqual(
    listed.map((i) => [i.name, i.state, i.pid]),
    [['remote', 'live', pid]],
  );

  // logs --ssh: the remote capsule's own log, through the copied jackin there; a name it does not know is its error.
  const logs = await runJackin(['logs', ...remote, 'remote'], env);
  assert.equal(logs.code, 0, logs.stdout + logs.stderr);
  const noLogs = await runJackin(['logs', ...remote, 'no-such'], env);
  assert.equal(noLogs.code, 1);
  assert.match(noLogs.stdout + noLogs.stderr, /E_NO_INSTANCE/);

  const exported = await runJackin(['export', ...remote, '--name', 'remote', 'out.bin'], env);
  assert.equal(exported.code, 0, exported.stderr);
  assert.deepEqual(readFileSync(join(downloads, 'jackin', 'remote', 'out.bin')), Buffer.from('exported \x01 bytes\n'));

  // Reattached: the same screen, the same program.
  await pane.typeLine(attachLine);
  await pane.typeLine('echo "back-$((1+1))"');
  await pane.waitForText(/^back-2$/m);
  // Only the inner shell prints back-2, so `clear` has run: what was printed before it is the repaint.
  await pane.waitForText(/^remote-42 /m);

  // A dropped link: sshd and every connection killed. The session ends; the capsule does not.
  // OpenSSH's multiplexing at work: the probe, the relay, ls and export all went over one connection.
  assert.equal(sockets().length, 1, 'one shared connection for the whole session');
  assert.equal(sshd.connections(), 1, 'sshd serves one connection');
  await sshd.kill();
  assert.notEqual(await waitForJackinExit(pane, 20_000), 0, 'a lost connection is not a clean exit');
  assert.ok(isAlive(pid), 'the remote capsule survives the dropped connection');
  await pollUntil('the shared connection to end with its link', () => sockets().length === 0, { timeoutMs: 15_000 });

  await sshd.restart();
  await pane.typeLine(attachLine);
  // The ended session's screen is up until `clear` runs, and a Ctrl+\ that reaches the terminal before jackin
  // takes it is the terminal's quit key: wait for the inner shell's answer, then for the repaint.
  await waitForInnerShell(pane, 20_000);
  await pane.waitForText(/^back-2$/m);
  await pane.waitForText(/^remote-42 /m);
  await detach();

  // A second capsule: the runtime is in the cache, checked and reused, not copied again.
  const second = await runJackin(['run', ...remote, '-d', '--name', 'second', '--', 'sleep', '1000'], env);
  assert.equal(second.code, 0, second.stderr);
  assert.equal(second.stdout, 'second\n');
  assert.doesNotMatch(second.stderr, /copying the capsule runtime/);
  assert.deepEqual(cacheState(sshd.remoteCacheHome), cached, 'the cache holds the same runtime directory, not a new copy');

  for (const name of ['remote', 'second']) {
    const stopped = await runJackin(['stop', ...remote, name], env);
    assert.equal(stopped.code, 0, stopped.stderr);
    assert.equal(stopped.stdout, `stopped ${name}\n`);
  }
  await pollUntil('stop --ssh to end the capsule', () => !isAlive(pid));
  assert.ok(!existsSync(join(sshd.remoteJackinHome, 'sockets', 'remote', 'jackin.sock')), 'its socket is gone');
  await pollUntil('the shared connection to end by itself', () => sockets().length === 0, { timeoutMs: 20_000 });
});

test("--ssh: ssh's host key question reaches the terminal before the session takes it; stage and forward reach the remote capsule", async (t) => {
  const sshd = await startSshd(t);
  // A client that has never seen this host and asks, as an operator's ssh does the first time.
  const asking = join(sshd.dir, 'ssh_config_asking');
  writeFileSync(join(sshd.dir, 'known_hosts_empty'), '');
  writeFileSync(
    asking,
    readFileSync(sshd.clientConfig, 'utf8')
      .replace(/UserKnownHostsFile .*/, `UserKnownHostsFile ${join(sshd.dir, 'known_hosts_empty')}`)
      .replace('StrictHostKeyChecking yes', 'StrictHostKeyChecking ask')
      .replace('BatchMode yes', 'BatchMode no'),
  );
  const pane = await paneFor(t, { env: { JACKIN_SSH_COMMAND: `ssh -F ${shellQuote(asking)}` } });
  const env = {
    ...testRunEnv(),
    PATH: process.env['PATH'] ?? '/usr/bin:/bin',
    HOME: pane.home,
    JACKIN_HOME: pane.jackinHome,
    JACKIN_SSH_COMMAND: `ssh -F ${shellQuote(sshd.clientConfig)}`,
  };
  const sockets = ownControlSockets(pane.jackinHome, env.JACKIN_SSH_COMMAND, `ssh -F ${shellQuote(asking)}`);
  const port = await freePort();
  const server = `node -e 'require("http").createServer((q, r) => r.end("hello-" + "remote")).listen(${port}, "127.0.0.1", () => console.log("listening-" + "now"))'`;
  await pane.typeLine(`clear; ${JACKIN} run --ssh ${SSH_TEST_HOST} --name web -- ${server}; echo "jackin-rc=$?"`);
  await pane.waitForText(/continue connecting \(yes\/no/, { timeoutMs: FIRST_RUN_TIMEOUT_MS });
  await pane.typeLine('yes');
  // The answer went to ssh (the connection opened, the key is now known), and the session started after it.
  await pollUntil('the host key to be remembered', () => readFileSync(join(sshd.dir, 'known_hosts_empty'), 'utf8').includes('ssh-ed25519'));
  // On the session's screen: the session has the terminal now (a Ctrl+\\ before it would be the shell's SIGQUIT).
  await pane.waitForText(/^listening-now$/m, { timeoutMs: FIRST_RUN_TIMEOUT_MS });
  assert.equal(await probePort(port), 'open');
  await pane.sendBytes([CTRL_BACKSLASH]);
  await pane.type('d');
  const rc = await waitForJackinExit(pane);
  assert.equal(rc, 0, `a detach is a clean exit:\n${await pane.capture()}`);

  // stage --ssh: a host file into the remote capsule's run directory, the same bytes.
  const file = join(testDir(t, 'jackin-ssh-stage-'), 'notes.bin');
  const bytes = Buffer.alloc(300_000, 0x5a);
  writeFileSync(file, bytes);
  const staged = await runJackin(['stage', '--ssh', SSH_TEST_HOST, '--name', 'web', '--json', file], env);
  assert.equal(staged.code, 0, staged.stderr);
  const line = JSON.parse(staged.stdout.trim().split('\n')[0]!) as { ok: boolean; destination: string };
  assert.equal(line.ok, true);
  assert.ok(line.destination.startsWith(join(sshd.remoteJackinHome, 'sockets', 'web')), line.destination);
  assert.deepEqual(readFileSync(line.destination), bytes);

  // forward --ssh: a local port leads to the remote program's loopback port, through the capsule.
  const forward = spawn(process.execPath, [JACKIN_BIN, 'forward', '--ssh', SSH_TEST_HOST, 'web', `:${port}`], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  t.after(() => stopChild(forward, 'SIGINT'));
  let out = '';
  let err = '';
  forward.stdout!.on('data', (b: Buffer) => (out += b.toString()));
  forward.stderr!.on('data', (b: Buffer) => (err += b.toString()));
  const url = await pollUntil(
    'jackin forward --ssh to print its URL',
    () => {
      if (forward.exitCode !== null) throw new Error(`jackin forward exited ${forward.exitCode}: ${err}`);
      return /^(http:\/\/localhost:\d+\/)$/m.exec(out)?.[1];
    },
    { timeoutMs: 20_000, last: () => err },
  );
  assert.notEqual(new URL(url).port, String(port), 'another local port than the program listens on');
  const body = await new Promise<string>((resolve, reject) => {
    httpGet(url, (res) => {
      let text = '';
      res.on('data', (b: Buffer) => (text += b.toString()));
      res.on('end', () => resolve(text));
    }).on('error', reject);
  });
  assert.equal(body, 'hello-remote');
  await stopChild(forward, 'SIGINT');

  const stopped = await runJackin(['stop', '--ssh', SSH_TEST_HOST, 'web'], env);
  assert.equal(stopped.code, 0, stopped.stderr);
  await pollUntil('the program to end with its capsule', async () => (await probePort(port)) !== 'open');
  await pollUntil('the shared connection to end by itself', () => sockets().length === 0, { timeoutMs: 20_000 });
});

test('--ssh: a copy the remote cannot take fails with E_SSH_FAILED, leaves no runtime there, and starts nothing', async (t) => {
  const sshd = await startSshd(t);
  // The remote's cache directory cannot be made: a file stands where it goes.
  rmdirSync(sshd.remoteCacheHome);
  writeFileSync(sshd.remoteCacheHome, 'not a directory');
  const home = testDir(t, 'jackin-ssh-home-');
  const env = {
    ...testRunEnv(),
    PATH: process.env['PATH'] ?? '/usr/bin:/bin',
    HOME: home,
    JACKIN_HOME: join(home, '.jackin'),
    JACKIN_SSH_COMMAND: `ssh -F ${shellQuote(sshd.clientConfig)}`,
  };
  const r = await runJackin(['run', '--ssh', SSH_TEST_HOST, '-d', '--name', 'nope', '--', 'true'], env);
  assert.equal(r.code, 1, r.stderr);
  assert.match(r.stderr, /copying the capsule runtime on testhost failed .*E_SSH_FAILED|E_SSH_FAILED.*copying the capsule runtime on testhost failed/s);
  assert.doesNotMatch(r.stderr, /EPIPE.*\n\s+at /, 'no unhandled stream error');
  assert.equal(readFileSync(sshd.remoteCacheHome, 'utf8'), 'not a directory');
  assert.ok(!existsSync(join(sshd.remoteJackinHome, 'sockets', 'nope')), 'no capsule was started');
  const sockets = ownControlSockets(join(home, '.jackin'), env.JACKIN_SSH_COMMAND);
  await pollUntil('the shared connection to end by itself', () => sockets().length === 0, { timeoutMs: 20_000 });
});

test('--ssh: Ctrl+V stages the local clipboard image on the remote, its path typed on the command line there', async (t) => {
  const x = await startXvfb();
  t.after(() => x.stop());
  const sshd = await startSshd(t);
  const pane = await paneFor(t, {
    cols: 200,
    env: { DISPLAY: x.display, JACKIN_PASTE_KEY: 'ctrl+v', JACKIN_SSH_COMMAND: `ssh -F ${shellQuote(sshd.clientConfig)}` },
  });
  const sockets = ownControlSockets(pane.jackinHome, testSshCommand(sshd));
  await pane.typeLine(`clear; ${JACKIN} run --ssh ${SSH_TEST_HOST} --name paste -- ${INNER_SHELL}; echo "jackin-rc=$?"`);
  await pane.waitForText(INNER_PROMPT, { timeoutMs: FIRST_RUN_TIMEOUT_MS });
  const png = readFileSync(new URL('./fixtures/images/sample.png', import.meta.url));
  const owner = await ownClipboard(x, 'image/png', png);
  t.after(() => owner.stop());
  await pane.sendKeys('C-v');
  const staging = join(sshd.remoteJackinHome, 'sockets', 'paste', 'clipboard');
  const path = await pollUntil(
    'a staged .png path on the remote command line',
    async () => {
      const line = (await pane.capture()).split('\n').findLast((l) => l.startsWith('in$'));
      return /^in\$ (\/\S+\.png)$/.exec(line ?? '')?.[1];
    },
    { timeoutMs: 60_000 },
  );
  assert.ok(path.startsWith(`${staging}/`), `${path} is in the remote capsule's clipboard directory ${staging}`);
  assert.deepEqual(readFileSync(path), png, 'the staged file is byte-identical');
  await pane.sendKeys('C-u');
  await pane.typeLine('exit 0');
  assert.equal(await waitForJackinExit(pane, 20_000), 0, "the program's exit status");
  await pollUntil('the remote capsule to end with its program', () => !existsSync(join(sshd.remoteJackinHome, 'sockets', 'paste', 'jackin.sock')));
  await pollUntil('the shared connection to end by itself', () => sockets().length === 0, { timeoutMs: 20_000 });
});

test('--ssh to a machine of another platform: E_REMOTE_PLATFORM names it and what jackin runs on, and nothing is copied', async (t) => {
  // A stand-in uname first on the remote sessions' PATH: the remote says it is a Mac.
  const bin = testDir(t, 'jackin-ssh-uname-');
  writeFileSync(join(bin, 'uname'), '#!/bin/sh\necho Darwin arm64\n', { mode: 0o755 });
  const sshd = await startSshd(t, { remotePath: `${bin}:/usr/local/bin:/usr/bin:/bin` });
  const home = testDir(t, 'jackin-ssh-home-');
  const { env, sockets } = sshClient(sshd, home);
  const r = await runJackin(['run', '--ssh', SSH_TEST_HOST, '-d', '--', 'true'], env);
  assert.equal(r.code, 1, r.stderr);
  assert.match(r.stderr, /E_REMOTE_PLATFORM/);
  assert.match(r.stderr, /testhost is Darwin arm64: jackin's capsule runs on Linux x86_64 and aarch64 only/);
  assert.ok(!existsSync(join(sshd.remoteCacheHome, 'jackin')), 'nothing was copied');
  await pollUntil('the shared connection to end by itself', () => sockets().length === 0, { timeoutMs: 20_000 });
});

test("--ssh with JACKIN_CAPSULE=runtime: the capsule runtime of the remote's architecture is copied and runs the program, as from a Mac", async (t) => {
  const sshd = await startSshd(t);
  const home = testDir(t, 'jackin-ssh-home-');
  const { env, sockets } = sshClient(sshd, home, { JACKIN_CAPSULE: 'runtime', JACKIN_CACHE_DIR: await sharedRuntimeCache() });
  const arch = process.arch === 'arm64' ? 'arm64' : 'x64';
  // What killed copies left in the remote's cache: one untouched for two hours, one as fresh as a copy under way.
  const cache = join(sshd.remoteCacheHome, 'jackin', 'capsule');
  mkdirSync(join(cache, '.incoming.killed', 'package'), { recursive: true });
  mkdirSync(join(cache, '.incoming.current'), { recursive: true });
  const twoHoursAgo = new Date(Date.now() - 2 * 3600_000);
  utimesSync(join(cache, '.incoming.killed'), twoHoursAgo, twoHoursAgo);
  const r = await runJackin(['run', '--ssh', SSH_TEST_HOST, '-d', '--name', 'rt', '--', 'sleep', '1000'], env, { timeoutMs: FIRST_RUN_TIMEOUT_MS });
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(
    readdirSync(cache).filter((e) => e.startsWith('.')),
    ['.incoming.current'],
    "the copy removed the killed copy's leftover, not the one that may be under way",
  );
  assert.match(r.stderr, new RegExp(`copying the capsule runtime, the linux-${arch} capsule runtime \\(\\d+ MiB\\), to testhost:`));
  // The copy's Node is the runtime's, byte for byte, and the remote capsule runs on it.
  const [dir] = readdirSync(join(sshd.remoteCacheHome, 'jackin', 'capsule')).filter((e) => !e.startsWith('.'));
  const copied = join(sshd.remoteCacheHome, 'jackin', 'capsule', dir!);
  assert.deepEqual(readFileSync(join(copied, 'node')), readFileSync(await runtimeNode()));
  const pid = await capsulePid(sshd.remoteJackinHome, 'rt');
  assert.equal(readlinkSync(`/proc/${pid}/exe`), join(copied, 'node'));
  const listed = await runJackin(['ls', '--ssh', SSH_TEST_HOST, '--json'], env);
  assert.equal(listed.code, 0, listed.stderr);
  assert.ok(
    (JSON.parse(listed.stdout) as Array<{ name: string }>).some((i) => i.name === 'rt'),
    listed.stdout,
  );
  const stopped = await runJackin(['stop', '--ssh', SSH_TEST_HOST, 'rt'], env);
  assert.equal(stopped.code, 0, stopped.stderr);
  await pollUntil('the remote capsule to end', () => !isAlive(pid));
  await pollUntil('the shared connection to end by itself', () => sockets().length === 0, { timeoutMs: 20_000 });
});

test('jackin log --ssh: the record of the jackin on that machine, re-checked record by record and shown inert', async (t) => {
  const sshd = await startSshd(t);
  const home = testDir(t, 'jackin-ssh-home-');
  const { env, sockets } = sshClient(sshd, home);
  // The remote's own record (the remote is this machine): a good record, one with a terminal escape in its
  // target, and one whose time is not a time.
  mkdirSync(join(sshd.remoteJackinHome, 'log'), { recursive: true, mode: 0o700 });
  const records = [
    { time: '2026-12-06T10:00:00.000Z', instance: 'agent', action: 'export', target: '/workspace/report.md', result: 'ok' },
    { time: '2026-12-06T10:01:00.000Z', instance: 'agent', action: 'open-url', target: 'https://example.com/\x1b]0;owned\x07', result: 'refused' },
    { time: '\x1b[2J', instance: 'agent', action: 'export', target: '/x', result: 'ok' },
  ];
  writeFileSync(join(sshd.remoteJackinHome, 'log', 'actions.jsonl'), records.map((r) => `${JSON.stringify(r)}\n`).join(''), { mode: 0o600 });
  const text = await runJackin(['log', '--ssh', SSH_TEST_HOST], env, { timeoutMs: FIRST_RUN_TIMEOUT_MS });
  assert.equal(text.code, 0, text.stderr);
  assert.match(text.stdout, /2026-12-06T10:00:00\.000Z\s+agent\s+export\s+ok\s+\/workspace\/report\.md/);
  assert.match(text.stdout, /open-url\s+refused\s+https:\/\/example\.com\/\\x1b\]0;owned\\x07/);
  assert.doesNotMatch(text.stdout, /\x1b/, 'nothing of the remote reaches the terminal as an escape');
  assert.equal(text.stdout.trim().split('\n').length, 3, 'a header and the two well-formed records');
  const json = await runJackin(['log', '--ssh', SSH_TEST_HOST, '--json', '--tail', '1'], env);
  assert.equal(json.code, 0, json.stderr);
  assert.deepEqual(
    json.stdout
      .trim()
      .split('\n')
      .map((l) => (JSON.parse(l) as { action: string }).action),
    ['open-url'],
  );
  await pollUntil('the shared connection to end by itself', () => sockets().length === 0, { timeoutMs: 20_000 });
});
