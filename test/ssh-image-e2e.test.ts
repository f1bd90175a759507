// needs-docker-engine
// `jackin run --ssh HOST --image IMAGE`: the container runs on that machine's engine, started by the jackin
// copied there (`jackin run --image -d`), and this terminal attaches to its capsule over ssh. The remote is
// this machine through a real OpenSSH server on loopback (test/helpers/sshd.mjs), so its engines are this
// machine's Podman and Docker; the container is removed by its exact name.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { sshClient, testSshCommand } from './helpers/ssh-client.ts';
import { INNER_PROMPT, INNER_SHELL, JACKIN, paneFor, runJackin, waitForInnerShell, waitForJackinExit } from './helpers/jackin-cli.ts';
import { glibcTestImage, testContainer } from './helpers/podman-image.mjs';
import { pollUntil } from './helpers/poll.ts';
import { SSH_TEST_HOST, startSshd } from './helpers/sshd.mjs';
import { shellQuote } from './helpers/tmux.ts';
import { testDir } from './helpers/test-run.ts';

const CTRL_BACKSLASH = 0x1c;
const FIRST_RUN_TIMEOUT_MS = 120_000;

function containerState(engine: 'podman' | 'docker', name: string): string {
  try {
    return execFileSync(engine, ['inspect', '--type', 'container', '--format', '{{.State.Status}}', name], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
  } catch {
    return 'gone';
  }
}

for (const engine of ['podman', 'docker'] as const) {
  test(`${engine}: jackin run --ssh HOST --image: the container runs on that machine's engine; attach, ls, export and stop --ssh reach it`, {
    timeout: 300_000,
  }, async (t) => {
    const image = (await glibcTestImage(engine)).ref;
    const sshd = await startSshd(t);
    const name = testContainer(t, `ssh-image-${engine}`, engine);
    const downloads = testDir(t, 'jackin-ssh-downloads-');
    const workspace = join(sshd.dir, 'remote-workspace');
    mkdirSync(workspace);
    writeFileSync(join(workspace, 'note.txt'), 'from the container on the remote\n');
    const pane = await paneFor(t, { env: { JACKIN_SSH_COMMAND: testSshCommand(sshd), JACKIN_DOWNLOAD_DIR: downloads } });
    const { env, sockets } = sshClient(sshd, pane.home, { JACKIN_DOWNLOAD_DIR: downloads });
    const remote = ['--ssh', SSH_TEST_HOST];

    // A value typed here would be on the remote's command line: refused before anything starts.
    const refused = await runJackin(['run', ...remote, '--image', image, '-e', 'TOKEN=secret-value', '-d', '--', 'true'], env);
    assert.equal(refused.code, 2, refused.stderr);
    assert.match(refused.stderr, /set TOKEN in the remote's environment/);
    assert.doesNotMatch(refused.stderr, /secret-value/);

    await pane.typeLine(
      `clear; ${JACKIN} run ${remote.join(' ')} --image ${image} --engine ${engine} --name ${name} -w ${shellQuote(workspace)} -- ${INNER_SHELL}; echo "jackin-rc=$?"`,
    );
    await pane.waitForText(INNER_PROMPT, { timeoutMs: FIRST_RUN_TIMEOUT_MS });
    assert.equal(containerState(engine, name), 'running', "the container runs on the remote's engine");
    await pane.typeLine('clear; echo "in-$((6*7))"; pwd; cat note.txt');
    await pane.waitForText(/^in-42\n\/workspace\nfrom the container on the remote$/m);
    await pane.sendBytes([CTRL_BACKSLASH]);
    await pane.type('d');
    assert.equal(await waitForJackinExit(pane), 0, 'a detach is a clean exit');

    const ls = await runJackin(['ls', ...remote, '--json'], env);
    assert.equal(ls.code, 0, ls.stderr);
    assert.ok(
      (JSON.parse(ls.stdout) as { name: string; state: string }[]).some((i) => i.name === name && i.state === 'live'),
      ls.stdout,
    );

    const exported = await runJackin(['export', ...remote, '--name', name, 'note.txt', '--json'], env, { timeoutMs: 60_000 });
    assert.equal(exported.code, 0, exported.stderr);
    const destination = (JSON.parse(exported.stdout) as { destination: string }).destination;
    assert.ok(destination.startsWith(downloads), destination);
    assert.equal(readFileSync(destination, 'utf8'), 'from the container on the remote\n');

    // Back to the same screen, then stopped from here: the remote jackin removes its container.
    await pane.typeLine(`clear; ${JACKIN} attach ${remote.join(' ')} ${name}; echo "jackin-rc=$?"`);
    // The detached session's screen is up until `clear` runs, and a Ctrl+\ that reaches the terminal before
    // jackin takes it is the terminal's quit key: wait for the inner shell's answer, then for the repaint.
    await waitForInnerShell(pane, 30_000);
    await pane.waitForText(/^from the container on the remote$/m);
    await pane.sendBytes([CTRL_BACKSLASH]);
    await pane.type('d');
    assert.equal(await waitForJackinExit(pane), 0);
    const stopped = await runJackin(['stop', ...remote, name], env, { timeoutMs: 60_000 });
    assert.equal(stopped.code, 0, stopped.stderr);
    await pollUntil('the container to be removed on the remote', () => containerState(engine, name) === 'gone', { timeoutMs: 30_000 });
    await pollUntil('the shared connection to end by itself', () => sockets().length === 0, { timeoutMs: 20_000 });
  });
}
