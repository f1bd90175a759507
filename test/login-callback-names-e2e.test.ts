// End-to-end: every query parameter agents name their login callback in (issue 49) gets the login forward
// on the operator's open gesture, across a real Podman container's network namespace (tmux as the terminal,
// the recording opener as the browser launcher, the test playing the browser). OpenRouter's sign-in (which
// Qwen Code uses) says `callback_url`; Auth0-style logins `returnTo`; OAuth 1.0a `oauth_callback`.
// Before the fix only redirect_uri, redirect_url, callback and return_to were read: the open prompt named no
// forward for the others and the browser's redirect reached nothing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { confirmOnScreen, INNER_PROMPT, INNER_SHELL, JACKIN, paneFor, REPO_ROOT } from './helpers/jackin-cli.ts';
import { glibcTestImage, testContainer } from './helpers/podman-image.mjs';
import { freePort } from './helpers/free-port.ts';
import { pollUntil } from './helpers/poll.ts';
import { recordingOpener } from './helpers/recording-opener.ts';
import { shellQuote } from './helpers/tmux.ts';
import { httpGetText } from './helpers/http-get.ts';

const CONTAINER_START_MS = 60_000;
const PALETTE_KEY = [0x1c];
const NODE_IN_CONTAINER = '/opt/jackin/node';
/** The callback parameters of the agents' login links (docs/guide.md, "Logging in from a container"). */
const NAMES = ['redirect_uri', 'redirect_url', 'callback_url', 'callback', 'return_to', 'returnTo', 'oauth_callback'];

test("podman: login callback: a link naming its loopback callback in any of the agents' parameters is forwarded once opened", {
  timeout: 400_000,
}, async (t) => {
  const rec = recordingOpener(t);
  const pane = await paneFor(t, { rows: 30, cols: 140, env: rec.env });
  const ws = mkdtempSync(join(tmpdir(), 'jackin-cbn-ws-'));
  chmodSync(ws, 0o777);
  copyFileSync(join(REPO_ROOT, 'test', 'fixtures', 'forward', 'login-server.cjs'), join(ws, 'login-server.cjs'));
  t.after(() => rmSync(ws, { recursive: true, force: true }));
  const name = testContainer(t, 'podman-cbnames', 'podman');
  const image = await glibcTestImage('podman');
  await pane.typeLine(
    `clear; ${JACKIN} run --image ${image.ref} --engine podman --name ${name} --workspace ${shellQuote(ws)} -- ${INNER_SHELL}; echo "jackin-rc=$?"`,
  );
  await pane.waitForText(INNER_PROMPT, { timeoutMs: CONTAINER_START_MS });

  for (const [i, param] of NAMES.entries()) {
    const port = await freePort();
    // The last round's screen gone first, so its LISTENING line is not taken for this one's (the image has no `clear`).
    await pane.typeLine(`printf '\\033[H\\033[2J'`);
    await pane.waitForScreen('the screen cleared', (s) => !s.includes('offer-rc=') && !s.includes('LISTENING-ON'));
    await pane.typeLine(`${NODE_IN_CONTAINER} /workspace/login-server.cjs 127.0.0.1 ${port} &`);
    await pane.waitForText('LISTENING-ON-127.0.0.1', { timeoutMs: 30_000 });
    const callback = `http://localhost:${port}/callback`;
    const link = `https://idp.example/n${i}/authorize?client_id=agent&${param}=${encodeURIComponent(callback)}&state=s`;
    await pane.typeLine(`jackin-capsule open-url -- ${shellQuote(link)}; echo "offer-rc=$?"`);
    await pane.waitForText(/^offer-rc=0\b/m);
    await pane.sendBytes(PALETTE_KEY);
    await pane.waitForText(`Open offered link: https://idp.example/n${i}/`);
    await pane.sendKeys('u');
    const prompt = await pane.waitForText('jackin: confirm');
    assert.match(prompt, new RegExp(`…and forward localhost:${port} to `), `${param}: the open prompt names the forward`);
    await confirmOnScreen(pane);
    await pollUntil(`the ${param} link to reach the opener`, () => rec.opened().length === i + 1, { last: rec.opened });
    assert.equal(rec.opened()[i], link);
    // The IdP sends the link's state back: the router hands the callback to the session that opened it.
    const r = await httpGetText(`http://localhost:${port}/callback?code=${param}-${port}&state=s`);
    assert.deepEqual(r, { status: 200, body: 'signed in\n' }, param);
    await pane.waitForText(`GOT-CODE=${param}-${port}`);
    await pane.waitForText(`Stopped forwarding localhost:${port}`, { timeoutMs: 30_000 });
  }
});
