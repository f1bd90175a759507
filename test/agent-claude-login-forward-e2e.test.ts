// The real Claude Code in a Podman container (test/helpers/claude-container.ts), tmux as the operator's
// terminal, the recording opener as the host's browser launcher and the test playing the browser (issue
// 36): once the operator opens Claude's /login offer, the host's localhost:<its callback port> leads to the
// callback server Claude runs on the container's loopback. Its answer to a made-up code is fine: the
// request got there.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { get as httpGet } from 'node:http';
import { confirmOnScreen } from './helpers/jackin-cli.ts';
import { probePort } from './helpers/free-port.ts';
import { pollUntil } from './helpers/poll.ts';
import { recordingOpener } from './helpers/recording-opener.ts';
import { startClaude, startLogin } from './helpers/claude-container.ts';

const PALETTE_KEY = [0x1c];

function get(url: string): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  return new Promise((resolve, reject) => {
    httpGet(url, { agent: false, timeout: 30_000 }, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (b: Buffer) => parts.push(b));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(parts).toString('utf8') }));
      res.on('error', reject);
    })
      .on('error', reject)
      .on('timeout', function (this: { destroy: (e: Error) => void }) {
        this.destroy(new Error('no answer in 30 s'));
      });
  });
}

test("Claude Code in a podman container: after its /login offer is opened, a request to the host's localhost:<its port>/callback reaches Claude", {
  timeout: 300_000,
}, async (t) => {
  const opener = recordingOpener(t);
  const s = await startClaude(t, 'login-fwd', { env: opener.env });
  const { pane } = s;
  await startLogin(s);
  await s.logged(/Link offered: https:\/\/claude\.[a-z]+\/\S*oauth\/authorize/);
  await pane.sendBytes(PALETTE_KEY);
  await pane.waitForText('Open offered link: https://claude.');
  await pane.sendKeys('u');
  const prompt = await pane.waitForText('jackin: confirm');
  const port = Number(/forward localhost:(\d+) to /.exec(prompt)?.[1]);
  assert.ok(port > 0, `the prompt names the forward:\n${prompt}`);
  // Offered, not yet opened: nothing is bound on the host.
  assert.equal(await probePort(port), 'ECONNREFUSED');
  await confirmOnScreen(pane);
  const [opened] = await pollUntil('the offered link to reach the host opener', () => (opener.opened().length === 1 ? opener.opened() : undefined), {
    timeoutMs: 15_000,
    last: opener.opened,
  });
  const redirect = new URL(opened!).searchParams.get('redirect_uri') ?? '';
  assert.equal(redirect, `http://localhost:${port}/callback`, opened);
  await s.logged(new RegExp(`Forwarding localhost:${port} to ${s.name}`));

  // The browser's redirect with a made-up code: answered by Claude's callback server in the container.
  const state = new URL(opened!).searchParams.get('state') ?? '';
  const r = await get(`http://localhost:${port}/callback?code=jackin-wrong-code&state=${encodeURIComponent(state)}`);
  // Claude's callback server took the code: it answers the browser, then tries to trade the code for a
  // token (and, offline, cannot reach the sign-in service).
  assert.equal(r.status, 200, r.body);
  assert.match(r.body, /Sign-in was canceled or failed/);
  await pane.waitForText(/OAuth error/, { timeoutMs: 30_000 });
  await pane.sendKeys('Escape');
  await pane.waitForText(/^❯\s/m, { timeoutMs: 15_000 });
});
