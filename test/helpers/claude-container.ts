/**
 * The real Claude Code (pinned, installed by scripts/install-agents.sh) in a real Podman container through
 * `jackin run --image`, as docs/guide.md shows a user ("Agents in containers"): its key by `--env NAME`
 * (exported by a profile in the operator's shell, so in no command line), its configuration by `--volume`,
 * the agents folder read-only, `--network none` (it reaches its prompt offline). tmux is the operator's
 * terminal. A missing agent fails the test, naming the install command.
 */
import type { TestContext } from 'node:test';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { agentHome, agentProgram, agentProgramInContainer, agentsDir, AGENT_HOME, AGENTS_MOUNT, FAKE_KEYS } from './agents.ts';
import { JACKIN, paneFor } from './jackin-cli.ts';
import { glibcAgentTestImage, testContainer } from './podman-image.mjs';
import { pollUntil } from './poll.ts';
import { shellQuote, type TmuxPane } from './tmux.ts';
import { testDir } from './test-run.ts';

/** The container (~0.5 s), then Claude: 10 to 25 s to its prompt here, more on a loaded machine. */
const CLAUDE_START_MS = 120_000;
/** Claude's prompt line. */
const CLAUDE_PROMPT = /❯/;

export interface ClaudeSession {
  pane: TmuxPane;
  /** The container's (and jackin instance's) name. */
  name: string;
  /** Waits for a line of jackin's --verbose log matching `what` (a notice is on screen for about 3 s only). */
  logged: (what: RegExp, timeoutMs?: number) => Promise<string>;
}

/**
 * Starts Claude Code in a Podman container under `jackin run --verbose`, with `env` in the operator's
 * environment (jackin's) and `containerEnv` passed to Claude by `--env`; resolves once its prompt shows.
 */
export async function startClaude(
  t: TestContext,
  label: string,
  { env = {}, containerEnv = [] }: { env?: Record<string, string>; containerEnv?: string[] } = {},
): Promise<ClaudeSession> {
  agentProgram('claude'); // fails the test, naming the install command, when Claude is missing
  // After-hooks run in the order they were added: the container goes before the directories it writes to.
  const name = testContainer(t, `claude-${label}`, 'podman');
  const dir = testDir(t, `jackin-claude-${label}-`, { shared: true });
  const ws = join(dir, 'ws');
  mkdirSync(ws);
  chmodSync(ws, 0o777);
  const home = agentHome(t, 'claude', '/workspace');
  const profile = join(dir, 'profile.sh');
  writeFileSync(profile, `export ANTHROPIC_API_KEY=${FAKE_KEYS.ANTHROPIC_API_KEY}\n`);
  const log = join(dir, 'verbose.log');
  const image = await glibcAgentTestImage('podman', [agentProgram('claude')]);
  const pane = await paneFor(t, { rows: 40, cols: 120, env });
  await pane.typeLine(`. ${shellQuote(profile)}`);
  const vars = ['ANTHROPIC_API_KEY', `HOME=${AGENT_HOME}`, 'DISABLE_AUTOUPDATER=1', ...containerEnv].flatMap((e) => ['--env', e]);
  const args = [
    '--image',
    image.ref,
    '--engine',
    'podman',
    ...vars,
    '--volume',
    `${home}:${AGENT_HOME}`,
    '--volume',
    `${agentsDir()}:${AGENTS_MOUNT}:ro`,
    '--',
    agentProgramInContainer('claude'),
  ];
  await pane.typeLine(
    `clear; ${JACKIN} run --verbose --name ${name} --workspace ${shellQuote(ws)} --network none ${args.map(shellQuote).join(' ')} 2>>${shellQuote(log)}; echo "jackin-rc=$?"`,
  );
  await pane.waitForText(CLAUDE_PROMPT, { timeoutMs: CLAUDE_START_MS });
  const logged = (what: RegExp, timeoutMs = 30_000): Promise<string> =>
    pollUntil(
      `${String(what)} in jackin's log`,
      () => {
        const text = existsSync(log) ? readFileSync(log, 'utf8') : '';
        return what.exec(text)?.[0];
      },
      { timeoutMs, last: () => (existsSync(log) ? readFileSync(log, 'utf8').slice(-2000) : '') },
    );
  return { pane, name, logged };
}

/** Types /login and picks the subscription sign-in: Claude serves its callback and shows its sign-in URL. */
export async function startLogin(s: ClaudeSession): Promise<void> {
  await s.pane.type('/login');
  await s.pane.waitForText(/❯\s\/login/);
  await s.pane.sendKeys('Enter');
  await s.pane.waitForText('Select login method', { timeoutMs: 30_000 });
  await s.pane.sendKeys('Enter');
  await s.pane.waitForText('c to copy', { timeoutMs: 30_000 });
}
