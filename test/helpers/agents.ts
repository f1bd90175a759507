/**
 * The real agent CLIs (Claude Code, Codex, Gemini CLI) for the agent end-to-end tests: where
 * scripts/install-agents.sh put them, and the offline configuration that takes each straight to its prompt
 * (measured in docs/guide.md, "Agents in containers"). A missing agent fails the test that needs it, with
 * the command that installs it: never a skip.
 *
 * Each agent gets a home directory of its own on the host, bind-mounted in the container with
 * `--volume HOME:/home/agent` and named by `--env HOME=/home/agent`; its key goes by `--env NAME` (the
 * value in jackin's environment only), as docs/guide.md shows a user.
 */
import { chmodSync, existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { testDir } from './test-run.ts';

/** The container home every agent test mounts its host home at. */
export const AGENT_HOME = '/home/agent';
/** Where the agents' package folder is mounted in the container (read-only). */
export const AGENTS_MOUNT = '/opt/agents';

/** scripts/install-agents.sh's cache directory (the same default). */
export function agentsDir(env: NodeJS.ProcessEnv = process.env): string {
  return env['JACKIN_AGENTS_DIR'] ?? join(env['XDG_CACHE_HOME'] ?? join(homedir(), '.cache'), 'jackin-bridge', 'agents');
}

export type AgentName = 'claude' | 'codex' | 'gemini';
/** The agents test/agents-more-e2e.test.ts drives, locally and in a container. */
export type MoreAgentName = 'opencode' | 'copilot';

/** Each agent's program inside the agents folder (relative to node_modules). */
const PROGRAMS: Record<AgentName | MoreAgentName, string> = {
  claude: '@anthropic-ai/claude-code/bin/claude.exe',
  codex: '@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex',
  gemini: '@google/gemini-cli/bundle/gemini.js',
  // Glibc binaries: OpenCode's (185 MB) and Copilot CLI's single executable (its first run unpacks its
  // JavaScript into ~/.cache/copilot/pkg).
  opencode: 'opencode-linux-x64/bin/opencode',
  copilot: '@github/copilot-linux-x64/copilot',
};

/** The agent's program on the host; throws (failing the test) when it is not installed. */
export function agentProgram(agent: AgentName | MoreAgentName): string {
  const p = join(agentsDir(), 'node_modules', PROGRAMS[agent]);
  if (!existsSync(p)) throw new Error(`${agent} is not installed at ${p}: run scripts/install-agents.sh (as .ci/run does)`);
  return p;
}

/** The same program as the container sees it under AGENTS_MOUNT. */
export function agentProgramInContainer(agent: AgentName | MoreAgentName): string {
  agentProgram(agent);
  return `${AGENTS_MOUNT}/node_modules/${PROGRAMS[agent]}`;
}

/** Key-shaped values: the agents check the form, and reach no server (the tests run with --network none). */
export const FAKE_KEYS = {
  ANTHROPIC_API_KEY: 'sk-ant-api03-jackin-test-0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJ-0123456789AA',
  OPENAI_API_KEY: 'sk-proj-jackin-test-0123456789abcdefghijklmnopqrstuvwxyz',
  GEMINI_API_KEY: 'AIzaSyJackinTest0123456789abcdefghijklm',
} as const;

/** A host directory the container's user can write (tests run as root; the container user may not be). */
function scratch(t: TestContext, label: string): string {
  return testDir(t, `jackin-agent-${label}-`, { shared: true });
}

function write(path: string, content: string): void {
  mkdirSync(join(path, '..'), { recursive: true });
  writeFileSync(path, content, { mode: 0o666 });
}

/**
 * The agent's home for `--volume HOME:/home/agent`, holding the files that skip its onboarding for
 * `workdir` (the container's working directory: /workspace) and `runDir` (jackin's run directory, for
 * Gemini's include-directories).
 */
export function agentHome(t: TestContext, agent: AgentName | MoreAgentName, workdir: string): string {
  const home = scratch(t, `${agent}-home`);
  switch (agent) {
    case 'claude': {
      const key = FAKE_KEYS.ANTHROPIC_API_KEY;
      write(
        join(home, '.claude.json'),
        JSON.stringify({
          hasCompletedOnboarding: true,
          theme: 'dark',
          customApiKeyResponses: { approved: [key.slice(-20)], rejected: [] },
          projects: { [workdir]: { hasTrustDialogAccepted: true, hasCompletedProjectOnboarding: true, allowedTools: [] } },
        }),
      );
      break;
    }
    case 'codex':
      write(join(home, '.codex', 'auth.json'), JSON.stringify({ auth_mode: 'apikey', OPENAI_API_KEY: FAKE_KEYS.OPENAI_API_KEY }));
      write(join(home, '.codex', 'config.toml'), `[projects."${workdir}"]\ntrust_level = "trusted"\n`);
      break;
    case 'gemini':
      write(
        join(home, '.gemini', 'settings.json'),
        JSON.stringify({
          security: { auth: { selectedType: 'gemini-api-key' } },
          // Staged images and files live in jackin's run directory, outside the workspace: read without asking.
          context: { includeDirectories: ['/jackin/run'] },
        }),
      );
      // The run directory trusted too, or Gemini asks at start whether to add it to the workspace.
      write(join(home, '.gemini', 'trustedFolders.json'), JSON.stringify({ [workdir]: 'TRUST_FOLDER', '/jackin/run': 'TRUST_FOLDER' }));
      break;
    case 'opencode':
      // Nothing: its key and OPENCODE_DISABLE_AUTOUPDATE / OPENCODE_DISABLE_MODELS_FETCH take it to its home screen.
      break;
    case 'copilot':
      // The folder-trust question's "remember this folder" answer.
      write(join(home, '.copilot', 'config.json'), JSON.stringify({ trustedFolders: [workdir] }));
      break;
  }
  // Everything in it writable by whichever user the container runs as.
  chmodTree(home);
  return home;
}

function chmodTree(dir: string): void {
  chmodSync(dir, 0o777);
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, entry.name);
    if (entry.isDirectory()) chmodTree(p);
    else chmodSync(p, 0o666);
  }
}
