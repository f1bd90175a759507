// needs-docker-engine
// The real agent CLIs our users run (Claude Code, Codex, Gemini CLI; pinned, installed by
// scripts/install-agents.sh), each in a real container through `jackin run --image`, with its key passed by
// `--env NAME` and its configuration by `--volume`, exactly as docs/guide.md shows ("Agents in
// containers"), tmux as the operator's terminal and Xvfb + xclip as the host clipboard. A missing agent
// fails its test. The containers run with `--network none`: the agents reach their prompt offline.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { agentHome, agentProgram, agentProgramInContainer, agentsDir, AGENT_HOME, AGENTS_MOUNT, FAKE_KEYS, type AgentName } from './helpers/agents.ts';
import { confirmOnScreen, JACKIN, paneFor, waitForJackinExit } from './helpers/jackin-cli.ts';
import { bigPng } from './helpers/png.mjs';
import { glibcAgentTestImage, type TestEngine, testContainer } from './helpers/podman-image.mjs';
import { pollUntil } from './helpers/poll.ts';
import { picture, settled } from './helpers/screen-picture.ts';
import { recordingOpener } from './helpers/recording-opener.ts';
import { shellQuote, type TmuxPane } from './helpers/tmux.ts';
import { ownClipboard, startXvfb, type Xvfb } from './helpers/xvfb.ts';
import { testDir } from './helpers/test-run.ts';

const execFileP = promisify(execFile);
/** The container (~0.5 s), then the agent: 8 to 25 s to its prompt here, more on a loaded machine. */
const AGENT_START_MS = 90_000;
const PALETTE_KEY = [0x1c];

/** Each agent's key variable, and the program with the arguments a user gives it. */
const AGENTS: Record<AgentName, { key: keyof typeof FAKE_KEYS; program: () => string[]; extraEnv: string[] }> = {
  claude: { key: 'ANTHROPIC_API_KEY', program: () => [agentProgramInContainer('claude')], extraEnv: ['DISABLE_AUTOUPDATER=1'] },
  // --no-daemon: no app-server daemon is left running (and a fresh container has none installed).
  codex: { key: 'OPENAI_API_KEY', program: () => [agentProgramInContainer('codex'), '--no-daemon'], extraEnv: [] },
  // Plain JavaScript: it runs on the Node jackin lends the container.
  gemini: { key: 'GEMINI_API_KEY', program: () => ['/opt/jackin/node', agentProgramInContainer('gemini')], extraEnv: [] },
};

/** The engine each agent runs on here, as in docs/guide.md (most users have Docker; Podman for Codex). */
const ENGINE: Record<AgentName, TestEngine> = { claude: 'docker', codex: 'podman', gemini: 'docker' };

/**
 * `jackin run`'s words for `agent` as docs/guide.md shows them ("Agents in containers"), for an image, the
 * agent's home and the agents folder; the tests put `--verbose --name --workspace --network none` first.
 */
function guideArgs(agent: AgentName, engine: TestEngine, where: { image: string; home: string; agents: string }, extraEnv: readonly string[] = []): string[] {
  const spec = AGENTS[agent];
  const env = [spec.key, `HOME=${AGENT_HOME}`, ...spec.extraEnv, ...extraEnv].flatMap((e) => ['--env', e]);
  return [
    '--image',
    where.image,
    '--engine',
    engine,
    ...env,
    '--volume',
    `${where.home}:${AGENT_HOME}`,
    '--volume',
    `${where.agents}:${AGENTS_MOUNT}:ro`,
    '--',
    ...spec.program(),
  ];
}

interface AgentSession {
  pane: TmuxPane;
  name: string;
  engine: TestEngine;
  /** Waits for a notice in jackin's --verbose log (a notice is on screen for about 3 s only). */
  noticed: (notice: RegExp) => Promise<string>;
  /** The paths of the images staged so far, from that log. */
  staged: () => string[];
}

function scratch(t: TestContext, label: string): string {
  return testDir(t, `jackin-agents-${label}-`, { shared: true });
}

/**
 * Starts `agent` in a container the way the guide shows: `--env KEY` (set in the operator's shell by a
 * profile, so in no command line), `--env HOME=/home/agent --volume HOME:/home/agent` for its config, the
 * agents folder read-only, `--network none`.
 */
async function startAgent(
  t: TestContext,
  agent: AgentName,
  {
    engine = ENGINE[agent],
    x,
    env = {},
    extraEnv = [],
    ready,
  }: { engine?: TestEngine; x: Xvfb; env?: Record<string, string>; extraEnv?: string[]; ready: RegExp },
): Promise<AgentSession> {
  agentProgram(agent); // fails the test, naming the install command, when the agent is missing
  const spec = AGENTS[agent];
  // node:test runs after-hooks in the order they were added: the container goes first, so the agent no
  // longer writes into the home and scratch directories when they are removed.
  const name = testContainer(t, `${engine}-${agent}`, engine);
  const dir = scratch(t, agent);
  const ws = join(dir, 'ws');
  mkdirSync(ws);
  chmodSync(ws, 0o777);
  const home = agentHome(t, agent, '/workspace');
  const profile = join(dir, 'profile.sh');
  writeFileSync(profile, `export ${spec.key}=${FAKE_KEYS[spec.key]}\n`);
  const log = join(dir, 'verbose.log');
  const image = await glibcAgentTestImage(engine, [agentProgram('claude')]);
  const pane = await paneFor(t, { rows: 40, cols: 120, env: { DISPLAY: x.display, JACKIN_PASTE_KEY: 'ctrl+v', ...env } });
  await pane.typeLine(`. ${shellQuote(profile)}`);
  const args = guideArgs(agent, engine, { image: image.ref, home, agents: agentsDir() }, extraEnv);
  await pane.typeLine(
    `clear; ${JACKIN} run --verbose --name ${name} --workspace ${shellQuote(ws)} --network none ${args.map(shellQuote).join(' ')} 2>>${shellQuote(log)}; echo "jackin-rc=$?"`,
  );
  await pane.waitForText(ready, { timeoutMs: AGENT_START_MS });
  const noticed = (notice: RegExp): Promise<string> =>
    pollUntil(
      `the notice ${String(notice)}`,
      () => {
        const text = existsSync(log) ? readFileSync(log, 'utf8') : '';
        return notice.exec(text)?.[0];
      },
      { timeoutMs: 30_000 },
    );
  const staged = (): string[] =>
    [...(existsSync(log) ? readFileSync(log, 'utf8') : '').matchAll(/host action send-image .*: ok \((\/jackin\/run\/clipboard\/\S+)\)/g)].map((m) => m[1]!);
  return { pane, name, engine, noticed, staged };
}

/**
 * Ctrl+V with a PNG on the host's X11 clipboard: the agent shows `marker`, once, on the first press. The
 * agent must be ready for it (each test's `ready` is the agent's own sign of that): a path pasted before
 * then is taken as typed text, and so is a paste the program did not get as one bracketed paste.
 */
async function pasteImage(s: AgentSession, x: Xvfb, marker: RegExp): Promise<void> {
  await settled(s.pane);
  const owner = await ownClipboard(x, 'image/png', bigPng(20_000));
  try {
    await s.pane.sendKeys('C-v');
    const path = await pollUntil('the image to be staged', () => s.staged()[0], { timeoutMs: 30_000 });
    // This paste's path as typed text on the prompt line (not jackin's "Image staged" notice, which names it too).
    const typed = new RegExp(`[>›❯]\\s+${path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`);
    const screen = await s.pane.waitForText(new RegExp(`${marker.source}|${typed.source}`), { timeoutMs: 30_000 });
    assert.match(screen, marker, `the agent took the pasted path as text:\n${screen}`);
    assert.equal(s.staged().length, 1, 'one Ctrl+V staged one image');
  } finally {
    await owner.stop();
  }
}

async function withX(t: TestContext): Promise<Xvfb> {
  const x = await startXvfb();
  t.after(() => x.stop());
  return x;
}

/** The claude.ai sign-in URL's query, as an object. */
function query(url: string): Record<string, string> {
  return Object.fromEntries(new URL(url).searchParams.entries());
}

test('Claude Code in a docker container: /login\'s browser becomes a link offer with its loopback redirect_uri; "c to copy" a copy offer the palette copies exactly; Ctrl+V gives [Image #1]', {
  timeout: 300_000,
}, async (t) => {
  const x = await withX(t);
  const opener = recordingOpener(t);
  const s = await startAgent(t, 'claude', { x, env: opener.env, ready: /^❯\s/m });
  const { pane } = s;

  // /login, the subscription sign-in: Claude runs $BROWSER in the container, which is jackin's.
  await pane.type('/login');
  await pane.waitForText(/❯\s\/login/);
  await pane.sendKeys('Enter');
  await pane.waitForText('Select login method');
  await pane.sendKeys('Enter');
  await pane.waitForText('c to copy', { timeoutMs: 30_000 });
  await s.noticed(/Link offered: https:\/\/claude\.[a-z]+\/[^\s"]*oauth\/authorize/);
  await pane.sendBytes(PALETTE_KEY);
  await pane.waitForText('Open offered link: https://claude.');
  await pane.sendKeys('u');
  await pane.waitForText('Open this link?');
  // The callback's port is forwarded from the host to the container when the link opens.
  await pane.waitForText(/forward localhost:\d+/);
  await confirmOnScreen(pane);
  const [opened] = await pollUntil('the offered link to reach the host opener', () => (opener.opened().length === 1 ? opener.opened() : undefined), {
    timeoutMs: 15_000,
    last: opener.opened,
  });
  const link = query(opened!);
  // The callback Claude serves inside the container: the host's browser would be sent to the host's own localhost.
  assert.match(link['redirect_uri'] ?? '', /^http:\/\/localhost:\d+\/callback$/, opened);
  assert.ok(link['code_challenge'] !== undefined, opened);

  // Its own copy of the sign-in URL (OSC 52) is a copy offer; the palette puts exactly that text on the clipboard.
  await pane.sendKeys('c');
  const offer = await s.noticed(/Copy offer: (\d+) B "https:\/\/[^"]*"/);
  const size = Number(/Copy offer: (\d+) B/.exec(offer)![1]);
  await pane.sendBytes([...PALETTE_KEY, 0x63]);
  const read = () => spawnSync('xclip', ['-selection', 'clipboard', '-o'], { env: x.env }).stdout.toString('utf8');
  const copied = await pollUntil('the X11 clipboard to hold the offered URL', () => (read().startsWith('https://') ? read() : undefined), {
    timeoutMs: 15_000,
  });
  assert.equal(Buffer.byteLength(copied), size, 'the whole offer, nothing more');
  // The same sign-in as the link offer (its PKCE challenge), in the short form Claude shows for pasting.
  assert.match(copied, /^https:\/\/claude\.ai\/oauth\/authorize\?\S+$/);
  assert.ok(copied.includes(link['code_challenge']!), `${copied} carries ${link['code_challenge']}`);
  await (await ownClipboard(x, 'text/plain', Buffer.from('other'))).stop();

  // Back to the prompt, then a screenshot.
  await pane.sendKeys('Escape');
  await pane.waitForText(/^❯\s/m, { timeoutMs: 15_000 });
  await pasteImage(s, x, /\[Image #1\]/);
  await pane.sendKeys('C-c');
  await pane.sendKeys('C-c');
  await waitForJackinExit(pane, 30_000);
});

/** Polls until the pane's picture equals `before`; fails with the rows that differ. */
async function sameAs(pane: TmuxPane, before: string, what: string): Promise<void> {
  let now = '';
  try {
    await pollUntil(`${what} to equal the one before`, async () => (now = (await picture(pane)).join('\n')) === before, { timeoutMs: 30_000, intervalMs: 200 });
  } catch {
    const a = before.split('\n');
    const b = now.split('\n');
    const rows = [...Array(Math.max(a.length, b.length)).keys()].filter((i) => a[i] !== b[i]);
    assert.fail(
      `${what}: rows ${JSON.stringify(rows)} differ\n${rows.map((r) => `row ${r}:\n  before ${JSON.stringify(a[r])}\n  now    ${JSON.stringify(b[r])}`).join('\n')}`,
    );
  }
}

test("Claude Code's full-screen renderer (CLAUDE_CODE_NO_FLICKER=1) in a podman container: after a redraw and after detach/reattach the screen equals tmux's capture of it before", {
  timeout: 300_000,
}, async (t) => {
  const x = await withX(t);
  const s = await startAgent(t, 'claude', { engine: 'podman', x, extraEnv: ['CLAUDE_CODE_NO_FLICKER=1'], ready: /❯/ });
  const { pane } = s;
  await pollUntil('the full-screen renderer to take the alternate screen', async () => (await pane.modes()).alternateOn, { timeoutMs: 15_000 });
  await pane.type('hello from jackin');
  await pane.waitForText('hello from jackin');
  const before = await settled(pane);

  await pane.sendBytes(PALETTE_KEY);
  await pane.waitForText('Redraw the screen');
  await pane.sendKeys('r');
  await sameAs(pane, before, 'the redrawn screen');

  await pane.sendBytes(PALETTE_KEY);
  await pane.waitForText('Detach');
  await pane.sendKeys('d');
  assert.equal(await waitForJackinExit(pane), 0);
  await pane.typeLine(`clear; ${JACKIN} attach ${s.name}`);
  await sameAs(pane, before, 'the reattached screen');
});

// Codex and Gemini CLI on both engines (the guide shows Codex on Podman, Gemini CLI on Docker).
for (const engine of ['podman', 'docker'] as const) {
  test(`Codex in a ${engine} container: Ctrl+V gives [Image #1]; no app-server daemon is left`, { timeout: 300_000 }, async (t) => {
    const x = await withX(t);
    // Codex draws its prompt while it is still loading, and takes a pasted image path as text until its session
    // is configured: its footer then names the model and the directory.
    const s = await startAgent(t, 'codex', { engine, x, ready: / · \/workspace\s*$/m });
    await pasteImage(s, x, /› \[Image #1\]/);
    const ps = (await execFileP(s.engine, ['exec', s.name, 'ps', '-eo', 'args='], { encoding: 'utf8' })).stdout;
    assert.doesNotMatch(ps, /app-server/, ps);
    await s.pane.sendKeys('C-c');
    await s.pane.sendKeys('C-c');
    await waitForJackinExit(s.pane, 30_000);
  });

  test(`Gemini CLI in a ${engine} container: Ctrl+V gives its image marker, and it submits the staged image without asking to read outside its workspace (context.includeDirectories)`, {
    timeout: 300_000,
  }, async (t) => {
    const x = await withX(t);
    const s = await startAgent(t, 'gemini', { engine, x, ready: /Type your message/ });
    await pasteImage(s, x, /> \[Image \.\.\.[0-9a-f]+\.png\]/);
    await s.pane.type(' describe it');
    await s.pane.waitForText(/\.png\]\s+describe it/);
    // Gemini takes an Enter that follows typing too closely as part of a paste: Enter again until it submits.
    let sent = 0;
    await pollUntil(
      'Gemini to take the submit',
      async () => {
        const now = await s.pane.capture();
        if (/ReadManyFiles|outside your workspace/.test(now)) return true;
        if (Date.now() - sent > 3_000) {
          sent = Date.now();
          await s.pane.sendKeys('Enter');
        }
        return false;
      },
      { timeoutMs: 30_000, intervalMs: 250 },
    );
    // It reads the staged file at once: the read is shown, and no consent question is asked.
    const screen = await s.pane.waitForText(/ReadManyFiles\s+Attempting to read files from \/jackin\/run\/clipboard\//, { timeoutMs: 30_000 });
    assert.doesNotMatch(screen, /outside your workspace/);
    assert.doesNotMatch(await s.pane.capture(), /outside your workspace/);
    await s.pane.sendKeys('C-c');
    await s.pane.sendKeys('C-c');
  });
}

test('docs/guide.md shows for each agent the command these tests run', async () => {
  const guide = readFileSync(new URL('../docs/guide.md', import.meta.url), 'utf8');
  const block = /### Agents in containers[\s\S]*?```sh\n([\s\S]*?)```/.exec(guide)?.[1];
  assert.ok(block !== undefined, 'the agents block is in the guide');
  const commands = block
    .replace(/ \\\n\s*/g, ' ')
    .split('\n')
    .filter((l) => l.startsWith('jackin run '))
    .map((l) => l.slice('jackin run '.length).trim().split(/\s+/));
  const agents: AgentName[] = ['claude', 'codex', 'gemini'];
  assert.deepEqual(
    commands,
    agents.map((a) => guideArgs(a, ENGINE[a], { image: 'my-agent', home: `~/agents/${a}-home`, agents: '~/.cache/jackin-bridge/agents' })),
  );
});
