// The real Claude Code with its full-screen renderer (CLAUDE_CODE_NO_FLICKER=1: the alternate screen, the
// mouse tracked by Claude) in a Podman container (test/helpers/claude-container.ts), tmux as the operator's
// terminal and JACKIN_OPENER pointed at a recorder (issue 37): the sign-in link Claude prints on its /login
// screen is opened by the label the palette's "Open link on screen" draws over it, after the host's prompt
// names the exact target.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { confirmOnScreen, typeLabel } from './helpers/jackin-cli.ts';
import { pollUntil } from './helpers/poll.ts';
import { recordingOpener } from './helpers/recording-opener.ts';
import { startClaude, startLogin } from './helpers/claude-container.ts';

const PALETTE_KEY = [0x1c];

test('Claude Code (CLAUDE_CODE_NO_FLICKER=1) in a podman container: the sign-in link it prints on /login opens by its label, only after the prompt', {
  timeout: 300_000,
}, async (t) => {
  const opener = recordingOpener(t);
  const s = await startClaude(t, 'hints', { env: opener.env, containerEnv: ['CLAUDE_CODE_NO_FLICKER=1'] });
  const { pane } = s;
  await pollUntil(
    'the full-screen renderer to take the alternate screen and the mouse',
    async () => {
      const m = await pane.modes();
      return m.alternateOn && m.mouseAny;
    },
    { timeoutMs: 30_000, last: () => null },
  );
  await startLogin(s);
  const before = await pane.screenLines();
  const row = before.findIndex((l) => l.includes('https://claude.ai/oauth/authorize?'));
  assert.ok(row >= 0, `the sign-in URL on the screen:\n${before.join('\n')}`);
  const col = before[row]!.indexOf('https://claude.ai/oauth/authorize?');
  const url = before[row]!.slice(col).split(/\s/)[0]!;

  await pane.sendBytes(PALETTE_KEY);
  await pane.waitForText('Open link on screen');
  await pane.sendKeys('o');
  await pane.waitForText('type a label to open');
  const hinted = (await pane.screenLines())[row]!;
  // One letter (a few links on this screen) over the URL's first cell, the rest of the URL as Claude drew it.
  assert.equal(hinted.slice(col + 1), before[row]!.slice(col + 1), hinted);
  const label = hinted[col]!;
  assert.match(label, /^[a-z]$/, hinted);
  await typeLabel(pane, label, 'type a label to open');
  const prompt = await pane.waitForText('jackin: confirm', { timeoutMs: 15_000 });
  assert.match(prompt, /│ https:\/\/claude\.ai\/oauth\/authorize\?/, prompt);
  assert.deepEqual(opener.opened(), [], 'nothing opens before the operator confirms');
  await confirmOnScreen(pane);
  const [opened] = await pollUntil('the link to reach the host opener', () => (opener.opened().length === 1 ? opener.opened() : undefined), {
    timeoutMs: 15_000,
    last: opener.opened,
  });
  // Exactly the sign-in URL Claude printed (its short form, carrying the PKCE challenge).
  assert.equal(opened, url);
  assert.ok(prompt.includes(`│ ${url.slice(0, 60)}`), `the prompt names ${url}:\n${prompt}`);
  // Labels gone: Claude's screen as it was.
  await pane.waitForScreen("Claude's screen, labels gone", (screen) => screen.split('\n')[row] === before[row] && !screen.includes('type a label'), {
    timeoutMs: 15_000,
  });
  await pane.sendKeys('Escape');
  await pane.waitForText(/^❯\s/m, { timeoutMs: 15_000 });
});
