// The real OpenCode and GitHub Copilot CLI (pinned, installed by scripts/install-agents.sh) through `jackin
// run`, as their users run them: locally (the program on the host) and in a real Podman container through
// `jackin run --image` (`--network none`, its home by `--volume`, the agents folder read-only), tmux as the
// operator's terminal and Xvfb + xclip as the host clipboard. A missing agent fails its test.
//
// Locally the agent's environment is explicit (`env -u TMUX ...`): no tmux variables reach it, as from a
// user's terminal, so what it writes does not depend on the tmux that plays the operator's terminal.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { agentHome, agentProgram, agentProgramInContainer, agentsDir, AGENT_HOME, AGENTS_MOUNT, FAKE_KEYS, type MoreAgentName } from './helpers/agents.ts';
import { confirmOnScreen, JACKIN, paneFor, REPO_ROOT, typeLabel } from './helpers/jackin-cli.ts';
import { bigPng } from './helpers/png.mjs';
import { containerName, glibcAgentTestImage, removeContainer } from './helpers/podman-image.mjs';
import { pollUntil } from './helpers/poll.ts';
import { settled } from './helpers/screen-picture.ts';
import { recordingOpener } from './helpers/recording-opener.ts';
import { startStandInModel } from './helpers/stand-in-model.mjs';
import { shellQuote, type TmuxPane } from './helpers/tmux.ts';
import { ownClipboard, startXvfb, type Xvfb } from './helpers/xvfb.ts';
import { testDir } from './helpers/test-run.ts';

/** The container (~0.5 s), then the agent: 5 to 15 s to its prompt here, more on a loaded machine. */
const AGENT_START_MS = 90_000;
const PALETTE_KEY = [0x1c];

type Where = 'local' | 'podman';

/** What the stand-in model answers: the text each agent's own copy action must offer, exactly. */
const REPLY = 'jackin-stand-in-reply-42';
/** The stand-in model's port inside a container (its own loopback: the container has no network). */
const MODEL_PORT_IN_CONTAINER = 38911;
const STAND_IN_IN_CONTAINER = '/opt/stand-in/stand-in-model.mjs';

/** The environment that points `agent` at the stand-in model on 127.0.0.1:`port` (an OpenAI-compatible API). */
function modelEnv(agent: MoreAgentName, port: number): Record<string, string> {
  const baseURL = `http://127.0.0.1:${port}/v1`;
  if (agent === 'opencode') {
    return {
      OPENCODE_CONFIG_CONTENT: JSON.stringify({
        model: 'standin/gpt-4o',
        provider: {
          standin: { npm: '@ai-sdk/openai-compatible', name: 'Stand-in', options: { baseURL, apiKey: 'x' }, models: { 'gpt-4o': { name: 'gpt-4o' } } },
        },
      }),
    };
  }
  return { COPILOT_OFFLINE: 'true', COPILOT_PROVIDER_BASE_URL: baseURL, COPILOT_MODEL: 'gpt-4o', COPILOT_PROVIDER_API_KEY: 'x' };
}

/** What each agent needs to reach its prompt offline (docs/guide.md, "Agents in containers"). */
const AGENTS: Record<MoreAgentName, { env: Record<string, string>; ready: RegExp }> = {
  opencode: {
    env: { ANTHROPIC_API_KEY: FAKE_KEYS.ANTHROPIC_API_KEY, OPENCODE_DISABLE_AUTOUPDATE: '1', OPENCODE_DISABLE_MODELS_FETCH: '1' },
    ready: /Ask anything/,
  },
  copilot: { env: { COPILOT_AUTO_UPDATE: 'false' }, ready: /Please use \/login/ },
};

interface AgentSession {
  pane: TmuxPane;
  name: string;
  /** Waits for a line of jackin's --verbose log. */
  logged: (what: RegExp, timeoutMs?: number) => Promise<string>;
  /** The paths of the images staged so far, from that log. */
  staged: () => string[];
  /** jackin's --verbose log so far. */
  text: () => string;
  /** Whether jackin has exited. */
  exited: () => Promise<boolean>;
}

function scratch(t: TestContext, label: string): string {
  return testDir(t, `jackin-agents-more-${label}-`, { shared: true });
}

/** Starts `agent` under `jackin run --verbose`, locally or in a Podman container, and waits for its prompt. */
async function startAgent(
  t: TestContext,
  agent: MoreAgentName,
  where: Where,
  { x, env = {}, model = false, ready = AGENTS[agent].ready }: { x: Xvfb; env?: Record<string, string>; model?: boolean; ready?: RegExp },
): Promise<AgentSession> {
  agentProgram(agent); // fails the test, naming the install command, when the agent is missing
  let spec = AGENTS[agent];
  let local = 0;
  if (model && where === 'local') {
    const server = await startStandInModel(REPLY);
    t.after(() => server.stop());
    local = server.port;
  }
  if (model) spec = { ...spec, env: { ...spec.env, ...modelEnv(agent, where === 'local' ? local : MODEL_PORT_IN_CONTAINER) } };
  // After-hooks run in the order they were added: the container goes before the directories it writes to.
  const name = containerName(`${where}-${agent}`);
  if (where === 'podman') t.after(() => removeContainer(name, 'podman'));
  // The pane (and with it a local agent) goes before the directories it writes to, too.
  const pane = await paneFor(t, { rows: 40, cols: 120, env: { DISPLAY: x.display, JACKIN_PASTE_KEY: 'ctrl+v', ...env } });
  const dir = scratch(t, agent);
  const ws = join(dir, 'ws');
  mkdirSync(ws);
  chmodSync(ws, 0o777);
  const home = agentHome(t, agent, where === 'local' ? ws : '/workspace');
  const log = join(dir, 'verbose.log');
  let command: string;
  if (where === 'local') {
    // Its own temporary directory: OpenCode's runtime unpacks libraries into TMPDIR.
    const tmp = join(dir, 'tmp');
    mkdirSync(tmp);
    const vars = Object.entries({ HOME: home, TMPDIR: tmp, ...spec.env }).map(([k, v]) => `${k}=${v}`);
    const program = ['env', '-u', 'TMUX', '-u', 'TMUX_PANE', '-u', 'TERM_PROGRAM', '-u', 'TERM_PROGRAM_VERSION', ...vars, agentProgram(agent)];
    command = `cd ${shellQuote(ws)} && ${JACKIN} run --verbose --name ${name} -- ${program.map(shellQuote).join(' ')}`;
  } else {
    const profile = join(dir, 'profile.sh');
    writeFileSync(
      profile,
      Object.entries(spec.env)
        .map(([k, v]) => `export ${k}=${shellQuote(v)}\n`)
        .join(''),
    );
    await pane.typeLine(`. ${shellQuote(profile)}`);
    const image = await glibcAgentTestImage('podman', [agentProgram('claude')]);
    const args = [
      '--image',
      image.ref,
      '--engine',
      'podman',
      ...[...Object.keys(spec.env), `HOME=${AGENT_HOME}`].flatMap((e) => ['--env', e]),
      '--volume',
      `${home}:${AGENT_HOME}`,
      '--volume',
      `${agentsDir()}:${AGENTS_MOUNT}:ro`,
      // Copilot CLI reads the system's CA certificates at start, even offline; the test image has none.
      '--volume',
      '/etc/ssl/certs/ca-certificates.crt:/etc/ssl/certs/ca-certificates.crt:ro',
      // The stand-in model runs in the container, on the Node jackin lends it, before the agent.
      ...(model
        ? [
            '--volume',
            `${join(REPO_ROOT, 'test', 'helpers', 'stand-in-model.mjs')}:${STAND_IN_IN_CONTAINER}:ro`,
            '--',
            '/bin/sh',
            '-c',
            `/opt/jackin/node ${STAND_IN_IN_CONTAINER} ${MODEL_PORT_IN_CONTAINER} ${REPLY.split('-').join(' ')} >/dev/null & exec "$0"`,
          ]
        : ['--']),
      agentProgramInContainer(agent),
    ];
    command = `${JACKIN} run --verbose --name ${name} --workspace ${shellQuote(ws)} --network none ${args.map(shellQuote).join(' ')}`;
  }
  await pane.typeLine(`clear; ${command} 2>>${shellQuote(log)}; echo "jackin-rc=$?"`);
  await pane.waitForText(ready, { timeoutMs: AGENT_START_MS });
  const text = (): string => (existsSync(log) ? readFileSync(log, 'utf8') : '');
  const logged = (what: RegExp, timeoutMs = 30_000): Promise<string> =>
    pollUntil(`${String(what)} in jackin's log`, () => what.exec(text())?.[0], { timeoutMs, last: () => text().slice(-2000) });
  const staged = (): string[] => [...text().matchAll(/host action send-image .*: ok \((\/\S+)\)/g)].map((m) => m[1]!);
  // jackin (node) is the pane's foreground process until it exits. Not its `jackin-rc=` line: a Ctrl+C that
  // reaches the shell as jackin exits ends the command list before it is printed.
  const exited = async (): Promise<boolean> => (await pane.display('#{pane_current_command}')) !== 'node';
  return { pane, name, logged, staged, text, exited };
}

/** Ctrl+V with a PNG on the host's X11 clipboard: one image staged, and the agent shows `marker`, not the path as text. */
async function pasteImage(s: AgentSession, x: Xvfb, marker: RegExp): Promise<void> {
  await settled(s.pane);
  const owner = await ownClipboard(x, 'image/png', bigPng(20_000));
  try {
    await s.pane.sendKeys('C-v');
    const path = await pollUntil('the image to be staged', () => s.staged()[0], { timeoutMs: 30_000 });
    const name = path
      .split('/')
      .pop()!
      .replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    // The marker, or the staged file's name as typed text (not jackin's notice, which names the whole path).
    const screen = await s.pane.waitForText(new RegExp(`${marker.source}|[^/]${name}`), { timeoutMs: 30_000 });
    assert.match(screen, marker, `the agent took the pasted path as text:\n${screen}`);
    assert.equal(s.staged().length, 1, 'one Ctrl+V staged one image');
  } finally {
    await owner.stop();
  }
}

/**
 * Ctrl+C until the agent quits and jackin with it: the first clears its prompt or cancels, the next quits
 * (Copilot CLI asks for a second one within a moment: "ctrl+c again to exit", which is answered at once).
 */
async function quit(s: AgentSession): Promise<void> {
  const { pane } = s;
  let sent = 0;
  let screen = '';
  await pollUntil(
    'the agent and jackin to exit on Ctrl+C',
    async () => {
      if (await s.exited()) return true;
      screen = await pane.capture();
      const again = /again to exit/i.test(screen);
      if (Date.now() - sent > (again ? 500 : 3_000)) {
        sent = Date.now();
        await pane.sendKeys('C-c');
      }
      return false;
    },
    { timeoutMs: 30_000, intervalMs: 100, last: () => screen },
  );
}

/**
 * Presses `key` until `next` shows: a menu drawn a moment ago may not take a key yet (the key is lost, not
 * queued), so it is pressed again every 2 s.
 */
async function pressUntil(pane: TmuxPane, key: string, next: string | RegExp): Promise<void> {
  let sent = 0;
  let screen = '';
  await pollUntil(
    `${String(next)} after ${key}`,
    async () => {
      screen = await pane.capture();
      if (typeof next === 'string' ? screen.includes(next) : next.test(screen)) return true;
      if (Date.now() - sent > 2_000) {
        sent = Date.now();
        await pane.sendKeys(key);
      }
      return false;
    },
    { timeoutMs: 30_000, intervalMs: 250, last: () => screen },
  );
}

/**
 * The agent's answer (the stand-in's REPLY) to a prompt, then its own copy action (`copy`): exactly one copy
 * offer, of exactly that text, which the palette's Copy offered text puts on the host clipboard.
 */
async function copyReply(s: AgentSession, x: Xvfb, copy: () => Promise<void>): Promise<void> {
  await settled(s.pane);
  await s.pane.type('say hi');
  await s.pane.waitForText('say hi');
  await pressUntil(s.pane, 'Enter', REPLY);
  assert.doesNotMatch(s.text(), /Copy offer/, 'no offer before the copy');
  await copy();
  const offer = await s.logged(/Copy offer: (\d+) B "([^"]*)"/);
  assert.match(offer, new RegExp(`Copy offer: ${REPLY.length} B "${REPLY}"`));
  await settled(s.pane);
  assert.equal(s.text().match(/Copy offer:/g)?.length, 1, 'one copy, one offer');
  await s.pane.sendBytes([...PALETTE_KEY, 0x63]);
  const read = () => spawnSync('xclip', ['-selection', 'clipboard', '-o'], { env: x.env }).stdout.toString('utf8');
  assert.equal(
    await pollUntil('the X11 clipboard to hold the offered text', () => (read() === REPLY ? read() : undefined), { timeoutMs: 15_000, last: read }),
    REPLY,
  );
}

async function withX(t: TestContext): Promise<Xvfb> {
  const x = await startXvfb();
  t.after(() => x.stop());
  return x;
}

for (const where of ['local', 'podman'] as const) {
  const how = where === 'local' ? 'locally' : 'in a podman container';

  test(`OpenCode ${how}: its Copy last assistant message (Ctrl+X y) is one copy offer of exactly that message; Ctrl+V gives [Image 1]`, {
    timeout: 240_000,
  }, async (t) => {
    const x = await withX(t);
    const s = await startAgent(t, 'opencode', where, { x, model: true, ready: /gpt-4o Stand-in/ });
    await copyReply(s, x, async () => {
      await s.pane.sendKeys('C-x');
      await s.pane.sendKeys('y');
    });
    // The prompt is empty again after the turn: a screenshot.
    await pasteImage(s, x, /\[Image 1\]/);
    await quit(s);
  });

  test(`Copilot CLI ${how}: its /copy is one copy offer of exactly the last response`, { timeout: 240_000 }, async (t) => {
    const x = await withX(t);
    const s = await startAgent(t, 'copilot', where, { x, model: true, ready: /\? help .*gpt-4o\s*$/m });
    await copyReply(s, x, async () => {
      await s.pane.type('/copy');
      await s.pane.waitForText(/❯ \/copy/);
      await s.pane.sendKeys('Enter');
    });
    await quit(s);
  });

  test(`Copilot CLI ${how}: Ctrl+V gives its image marker; its /login sign-in link opens whole by its label`, { timeout: 240_000 }, async (t) => {
    const x = await withX(t);
    const opener = recordingOpener(t);
    const s = await startAgent(t, 'copilot', where, { x, env: opener.env });
    const { pane } = s;
    await pasteImage(s, x, /\[📷 clip-[^\]]*\.png\]/);
    // Clear the prompt line (Ctrl+C clears it, a second one would quit).
    await pane.sendKeys('C-c');
    await pane.waitForScreen('the prompt cleared', (screen) => !/\[📷/.test(screen), { timeoutMs: 15_000 });

    // /login, GitHub.com, the browser sign-in: Copilot prints its sign-in link as an OSC 8 link.
    await pane.type('/login');
    await pane.waitForText(/❯ \/login/);
    await pressUntil(pane, 'Enter', 'What account do you want to log into?');
    await pressUntil(pane, 'Enter', 'How do you want to sign in?');
    await pressUntil(pane, 'Enter', /Waiting for authorization/);
    const lines = await pane.screenLines();
    const row = lines.findIndex((l) => l.startsWith(' https://github.com/login/oauth/authorize?'));
    assert.ok(row >= 0, `the sign-in link on the screen:\n${lines.join('\n')}`);
    // The link as Copilot drew it, over the rows it wraps on.
    let drawn = '';
    for (let r = row; r < lines.length && /^ ?\S+$/.test(lines[r]!) && !lines[r]!.includes('Waiting'); r++) drawn += lines[r]!.trim();
    // Copilot tracks the mouse (a click is its own): the link is opened by its label.
    await pane.sendBytes(PALETTE_KEY);
    await pane.waitForText('Open link on screen');
    await pane.sendKeys('o');
    await pane.waitForText('type a label to open');
    const label = (await pane.screenLines())[row]![1]!;
    assert.match(label, /^[a-z]$/, `a label over the link's first cell: ${(await pane.screenLines())[row]}`);
    await typeLabel(pane, label, 'type a label to open');
    await pane.waitForText('jackin: confirm', { timeoutMs: 15_000 });
    assert.deepEqual(opener.opened(), [], 'nothing opens before the operator confirms');
    await confirmOnScreen(pane);
    const [opened] = await pollUntil('the link to reach the host opener', () => (opener.opened().length === 1 ? opener.opened() : undefined), {
      timeoutMs: 15_000,
      last: opener.opened,
    });
    // Whole: the URL Copilot drew over its rows, to its last parameter.
    assert.equal(opened, drawn);
    const q = new URL(opened!).searchParams;
    assert.ok((q.get('state') ?? '') !== '', opened);
    assert.equal(q.get('code_challenge_method'), 'S256', opened);
    assert.match(q.get('redirect_uri') ?? '', /^http:\/\/127\.0\.0\.1:\d+\/callback$/, opened);
    await quit(s);
  });
}
