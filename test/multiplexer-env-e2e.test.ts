// End-to-end: a local `jackin run` inside the operator's multiplexer (issue 49), tmux as the operator's
// terminal. The program's terminal is jackin's: it never sees TMUX, TMUX_PANE, STY, ZELLIJ* or a
// TERM_PROGRAM naming tmux/screen/zellij. Before the fix it saw all of them (so Qwen, Copilot and OpenCode
// wrapped their sequences for tmux passthrough).
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { chmodSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { INNER_PROMPT, INNER_SHELL, JACKIN, paneFor, startSession, waitForJackinExit, JACKIN_BIN } from './helpers/jackin-cli.ts';
import { glibcTestImage, testContainer } from './helpers/podman-image.mjs';
import { shellQuote } from './helpers/tmux.ts';
import { testDir } from './helpers/test-run.ts';

const execFileP = promisify(execFile);

/** What tmux sets in a pane, and what screen and zellij set in theirs (TMUX and TMUX_PANE are the pane's own, set in its shell). */
const OPERATOR_MUX = {
  TERM_PROGRAM: 'tmux',
  TERM_PROGRAM_VERSION: '3.3a',
  STY: '4242.pts-0.host',
  ZELLIJ: '0',
  ZELLIJ_SESSION_NAME: 'operator',
  ZELLIJ_PANE_ID: '3',
  COLORTERM: 'truecolor',
};

function scratch(t: TestContext): string {
  return testDir(t, 'jackin-mux-', { shared: true });
}

test('multiplexer: a local jackin run inside tmux, screen or zellij does not show it to the program', async (t) => {
  // The pane helper starts the shell with a clean environment: what tmux sets is given back, with the pane's own values.
  const pane = await paneFor(t, { env: OPERATOR_MUX });
  const tmuxEnv = (await pane.display('#{socket_path},#{pid},#{session_id}')).trim().replace(/,\$(\d+)$/, ',$1');
  const paneId = (await pane.display('#{pane_id}')).trim();
  await pane.typeLine(`export TMUX=${shellQuote(tmuxEnv)} TMUX_PANE=${shellQuote(paneId)}; echo "outer-$TMUX_PANE-$TERM_PROGRAM"`);
  await pane.waitForText(new RegExp(`^outer-${paneId}-tmux$`, 'm'));
  await startSession(pane, 'mux-env');
  await pane.typeLine(`env | grep -E '^(TMUX|STY|ZELLIJ|TERM_PROGRAM|COLORTERM)' | sort | sed 's/^/seen:/'; echo env-$((1 + 1))`);
  const screen = await pane.waitForText(/^env-2$/m);
  const seen = screen
    .split('\n')
    .filter((l) => l.startsWith('seen:'))
    .map((l) => l.slice('seen:'.length).trim());
  // The terminal's colour support is the operator's and stays; the multiplexer is gone.
  assert.deepEqual(seen, ['COLORTERM=truecolor']);
});

test('multiplexer: a TERM_PROGRAM that is not a multiplexer reaches the program with its version', async (t) => {
  const pane = await paneFor(t, { env: { TERM_PROGRAM: 'WezTerm', TERM_PROGRAM_VERSION: '20240203' } });
  await startSession(pane, 'mux-wezterm');
  await pane.typeLine(`env | grep -E '^(TMUX|TERM_PROGRAM)' | sort | sed 's/^/seen:/'; echo env-$((2 + 2))`);
  const screen = await pane.waitForText(/^env-4$/m);
  const seen = screen
    .split('\n')
    .filter((l) => l.startsWith('seen:'))
    .map((l) => l.slice('seen:'.length).trim());
  assert.deepEqual(seen, ['TERM_PROGRAM=WezTerm', 'TERM_PROGRAM_VERSION=20240203']);
});

test('multiplexer: run --image inside tmux does not pass a TERM_PROGRAM naming it (--dry-run prints the names it passes)', async (t) => {
  const dir = scratch(t);
  const r = await execFileP(
    process.execPath,
    [JACKIN_BIN, 'run', '--image', 'img', '--engine', 'podman', '--name', 'mux-dry', '--workspace', dir, '--dry-run', '--', 'sh'],
    {
      env: {
        PATH: process.env['PATH'] ?? '/usr/bin:/bin',
        HOME: dir,
        JACKIN_HOME: join(dir, 'jh'),
        TERM: 'tmux-256color',
        TMUX: '/tmp/tmux-1000/default,1,0',
        TMUX_PANE: '%0',
        ...OPERATOR_MUX,
      },
    },
  );
  const run = r.stdout.trim().split('\n')[1]!;
  assert.match(run, / -e COLORTERM /);
  assert.doesNotMatch(run, /TERM_PROGRAM|TMUX|STY|ZELLIJ/);
});

test('multiplexer: podman: a program started by run --image inside tmux does not see it either', { timeout: 240_000 }, async (t) => {
  const dir = scratch(t);
  const ws = join(dir, 'ws');
  mkdirSync(ws);
  chmodSync(ws, 0o777);
  const name = testContainer(t, 'mux-env', 'podman');
  const image = await glibcTestImage('podman');
  const pane = await paneFor(t, { rows: 30, cols: 160, env: OPERATOR_MUX });
  const tmuxEnv = (await pane.display('#{socket_path},#{pid},#{session_id}')).trim().replace(/,\$(\d+)$/, ',$1');
  await pane.typeLine(`export TMUX=${shellQuote(tmuxEnv)} TMUX_PANE=${shellQuote((await pane.display('#{pane_id}')).trim())}`);
  await pane.typeLine(
    `clear; ${JACKIN} run --image ${image.ref} --engine podman --name ${name} --workspace ${shellQuote(ws)} -- ${INNER_SHELL}; echo "jackin-rc=$?"`,
  );
  await pane.waitForText(INNER_PROMPT, { timeoutMs: 60_000 });
  // The test image has bash and little else (no grep, sort or sed): bash lists its exported variables.
  await pane.typeLine(
    `for v in $(compgen -e); do case $v in TMUX*|STY|ZELLIJ*|TERM_PROGRAM*|COLORTERM) echo "seen:$v=\${!v}";; esac; done; echo env-$((3 + 3))`,
  );
  const screen = await pane.waitForText(/^env-6$/m);
  const seen = screen
    .split('\n')
    .filter((l) => l.startsWith('seen:'))
    .map((l) => l.slice('seen:'.length).trim())
    .sort();
  assert.deepEqual(seen, ['COLORTERM=truecolor']);
  await pane.typeLine('exit 0');
  assert.equal(await waitForJackinExit(pane, 30_000), 0);
});
