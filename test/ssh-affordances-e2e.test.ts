// End-to-end: the host's affordances across `jackin run --ssh` (issue 47, point 2), with a real OpenSSH
// server on loopback as the remote (test/helpers/sshd.mjs): a link the remote program prints opens with the
// LOCAL opener, a notification it sends reaches the LOCAL notifier, and a login link it offers (through its
// browser, which --ssh makes jackin's) gets its callback forwarded from the local loopback to the remote's,
// with no `ssh -L`, as does a server it starts later, offered here and forwarded from the palette. The
// remote is this machine: so that its loopback is not the local one, the remote capsule (and the program
// under it) runs in a network namespace of its own, by a stand-in `setsid` first on the remote sessions'
// PATH. The login server there is then out of reach from here but through the capsule.
// Debian packages: openssh-server, openssh-client, tmux, util-linux (unshare), iproute2 (ip). Runs as root.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { copyFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { ownControlSockets, testSshCommand } from './helpers/ssh-client.ts';
import { commandNotifier } from './helpers/command-notifier.ts';
import { confirmOnScreen, INNER_PROMPT, INNER_SHELL, JACKIN, paneFor, REPO_ROOT, waitForJackinExit } from './helpers/jackin-cli.ts';
import { freePort, probePort } from './helpers/free-port.ts';
import { pollUntil } from './helpers/poll.ts';
import { recordingOpener } from './helpers/recording-opener.ts';
import { SSH_TEST_HOST, startSshd } from './helpers/sshd.mjs';
import { testDir } from './helpers/test-run.ts';
import { shellQuote, type TmuxPane } from './helpers/tmux.ts';
import { httpGetText } from './helpers/http-get.ts';

/** The first run copies the host's Node and package (about 110 MB) over ssh and checks them there. */
const FIRST_RUN_TIMEOUT_MS = 60_000;
const PALETTE_KEY = [0x1c];
const CTRL = 16;

/** A Ctrl+click (SGR mouse report, press and release) at a 0-based cell. */
async function ctrlClick(pane: TmuxPane, row: number, col: number): Promise<void> {
  const report = (press: boolean): number[] => [...Buffer.from(`\x1b[<${CTRL};${col + 1};${row + 1}${press ? 'M' : 'm'}`, 'latin1')];
  await pane.sendBytes([...report(true), ...report(false)]);
}

test("--ssh: a printed link opens with the local opener, a notification reaches the local notifier, a login link's callback and an offered port reach the remote's loopback", async (t) => {
  // The remote's capsule in a network namespace of its own, its loopback up: the remote's loopback is not ours.
  const bin = testDir(t, 'jackin-ssh-netns-');
  const unshare = execFileSync('sh', ['-c', 'command -v unshare'], { encoding: 'utf8' }).trim();
  const ip = execFileSync('sh', ['-c', 'PATH=/usr/sbin:/sbin:$PATH command -v ip'], { encoding: 'utf8' }).trim();
  const setsid = execFileSync('sh', ['-c', 'command -v setsid'], { encoding: 'utf8' }).trim();
  writeFileSync(join(bin, 'setsid'), `#!/bin/sh\nexec ${shellQuote(unshare)} --net sh -c '${ip} link set lo up && exec ${setsid} "$@"' sh "$@"\n`, {
    mode: 0o755,
  });
  const sshd = await startSshd(t, { remotePath: `${bin}:${dirname(process.execPath)}:/usr/local/bin:/usr/bin:/bin` });
  const workspace = join(sshd.dir, 'remote-workspace');
  execFileSync('mkdir', [workspace]);
  copyFileSync(join(REPO_ROOT, 'test', 'fixtures', 'forward', 'login-server.cjs'), join(workspace, 'login-server.cjs'));
  const opener = recordingOpener(t);
  const notifier = commandNotifier(t);
  const pane = await paneFor(t, {
    rows: 30,
    cols: 160,
    env: { JACKIN_SSH_COMMAND: `ssh -F ${shellQuote(sshd.clientConfig)}`, ...opener.env, ...notifier.env },
  });
  const sockets = ownControlSockets(pane.jackinHome, testSshCommand(sshd));
  await pane.typeLine(`clear; ${JACKIN} run --ssh ${SSH_TEST_HOST} --name aff -w ${shellQuote(workspace)} -- ${INNER_SHELL}; echo "jackin-rc=$?"`);
  await pane.waitForText(INNER_PROMPT, { timeoutMs: FIRST_RUN_TIMEOUT_MS });
  // The program's clipboard tools are jackin's there (serve --clipboard), first on its PATH.
  await pane.typeLine('clear; command -v xclip wl-copy pbcopy | sed "s#.*/container-bin/clipboard/#shim:#"');
  await pane.waitForText(/^shim:xclip\nshim:wl-copy\nshim:pbcopy$/m);
  await pollUntil('the host to capture the mouse', async () => (await pane.modes()).mouseAny, { timeoutMs: 10_000 });

  // (a) A link the remote program prints, Ctrl+clicked and confirmed here, reaches the local opener.
  const link = 'https://example.com/over-ssh';
  await pane.typeLine(`clear; printf 'see %s\\n' ${shellQuote(link)}`);
  await pane.waitForText(/^see https:\/\/example\.com\/over-ssh$/m);
  const lines = await pane.screenLines();
  const row = lines.indexOf(`see ${link}`);
  await ctrlClick(pane, row, 'see '.length + 10);
  await pane.waitForText('jackin: confirm');
  assert.deepEqual(opener.opened(), [], 'nothing opens before the operator confirms');
  await confirmOnScreen(pane);
  await pollUntil('the Ctrl+click to reach the local opener', () => opener.opened().length === 1, { last: opener.opened });
  assert.deepEqual(opener.opened(), [link]);

  // (c) Notifications the remote program sends (OSC 9, OSC 777) reach the local notifier.
  await pane.typeLine(`clear; printf '\\e]9;built over ssh\\a\\e]777;notify;Remote;all green\\a'; echo sent-$((1 + 1))`);
  await pane.waitForText(/^sent-2$/m);
  await pollUntil('both notifications at the local notifier', () => notifier.calls().length === 2, { last: notifier.calls });
  assert.deepEqual(notifier.calls(), ['--from-jackin|--|aff|built over ssh', '--from-jackin|--|Remote|all green']);

  // (b) The login stand-in on the remote's loopback, which this machine's loopback does not reach.
  const port = await freePort();
  await pane.typeLine(`clear; node login-server.cjs 127.0.0.1 ${port} &`);
  await pane.waitForText('LISTENING-ON-127.0.0.1', { timeoutMs: 30_000 });
  assert.equal(await probePort(port), 'ECONNREFUSED', "the remote's login server is not on this machine's loopback");
  // The program's browser is jackin's: xdg-open there makes the link an offer, opened here from the palette.
  const state = 'st-over-ssh';
  const login = `https://idp.example/oauth/authorize?client_id=agent&redirect_uri=${encodeURIComponent(`http://localhost:${port}/callback`)}&state=${state}`;
  await pane.typeLine(`xdg-open ${shellQuote(login)}; echo "offered-$?"`);
  await pane.waitForText(/^offered-0$/m);
  await pane.sendBytes(PALETTE_KEY);
  await pane.waitForText('Open offered link: https://idp.example/');
  await pane.sendKeys('u');
  const prompt = await pane.waitForText('jackin: confirm');
  assert.match(prompt, new RegExp(`forward localhost:${port} to aff`), prompt);
  await confirmOnScreen(pane);
  await pollUntil('the login link to reach the local opener', () => opener.opened().length === 2, { last: opener.opened });
  assert.equal(opener.opened()[1], login);
  await pane.waitForText(`Forwarding localhost:${port} to aff`);
  // The browser's redirect, here, with the link's state: it reaches the login server on the remote's loopback.
  const answer = await httpGetText(`http://localhost:${port}/callback?code=c0de-ssh&state=${state}`);
  assert.deepEqual(answer, { status: 200, body: 'signed in\n' });
  await pane.waitForText('GOT-CODE=c0de-ssh');
  await pane.waitForText(`Stopped forwarding localhost:${port}`, { timeoutMs: 30_000 });
  await pollUntil('the local router to free the port', async () => (await probePort(port)) === 'ECONNREFUSED', { timeoutMs: 30_000 });

  // (d) A server the remote program starts later is offered here (the remote's loopback is not ours), and
  // forwarded from a local port once the operator chose it in the palette.
  const offered = await freePort();
  await pane.typeLine(`clear; node login-server.cjs 127.0.0.1 ${offered} &`);
  await pane.waitForText(`Port ${offered} opened in the container`, { timeoutMs: 30_000 });
  assert.equal(await probePort(offered), 'ECONNREFUSED', 'offered, not forwarded: nothing listens for it here yet');
  await pane.sendBytes(PALETTE_KEY);
  await pane.waitForText(`Forward port ${offered}`);
  await pane.type(`/forward port ${offered}`);
  await pane.sendKeys('Enter');
  const forwarding = new RegExp(`Forwarding http://localhost:(\\d+)/ to port ${offered}`);
  const hostPort = Number(forwarding.exec(await pane.waitForText(forwarding))?.[1]);
  const offeredAnswer = await httpGetText(`http://localhost:${hostPort}/callback?code=c0de-offer`);
  assert.deepEqual(offeredAnswer, { status: 200, body: 'signed in\n' });
  await pane.waitForText('GOT-CODE=c0de-offer');

  await pane.typeLine('kill %1 %2; exit 0');
  assert.equal(await waitForJackinExit(pane, 20_000), 0, "the program's exit status");
  await pollUntil('the shared connection to end by itself', () => sockets().length === 0, { timeoutMs: 20_000 });
});
