// End-to-end: a local `jackin run` inside the operator's multiplexer (issue 49), tmux as the operator's
// terminal. The program's terminal is jackin's: it never sees TMUX, TMUX_PANE, STY, ZELLIJ* or a
// TERM_PROGRAM naming tmux/screen/zellij. Before the fix it saw all of them (so Qwen, Copilot and OpenCode
// wrapped their sequences for tmux passthrough).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { paneFor, startSession } from './helpers/jackin-cli.ts';
import { shellQuote } from './helpers/tmux.ts';

test('multiplexer: a local jackin run inside tmux, screen or zellij does not show it to the program', async (t) => {
  const operator = {
    // What tmux sets in a pane (the pane helper starts the shell with a clean environment, so they are
    // given here with the pane's own values), and what screen and zellij set in theirs.
    TERM_PROGRAM: 'tmux',
    TERM_PROGRAM_VERSION: '3.3a',
    STY: '4242.pts-0.host',
    ZELLIJ: '0',
    ZELLIJ_SESSION_NAME: 'operator',
    ZELLIJ_PANE_ID: '3',
    COLORTERM: 'truecolor',
  };
  const pane = await paneFor(t, { env: operator });
  const tmuxEnv = (await pane.display('#{socket_path},#{pid},#{session_id}')).trim().replace(/,\$(\d+)$/, ',$1');
  const paneId = (await pane.display('#{pane_id}')).trim();
  await pane.typeLine(`export TMUX=${shellQuote(tmuxEnv)} TMUX_PANE=${shellQuote(paneId)}; echo "outer-$TMUX_PANE-$TERM_PROGRAM"`);
  await pane.waitForText(new RegExp(`^outer-${paneId}-tmux$`, 'm'));
  await startSession(pane, 'mux-env');
  await pane.typeLine(`env | grep -E '^(TMUX|STY|ZELLIJ|TERM_PROGRAM|COLORTERM)' | sort | sed 's/^/seen:/'; echo env-$((1 + 1))`);
  const screen = await pane.waitForText(/^env-2$/m);
  const seen = screen.split('\n').filter((l) => l.startsWith('seen:')).map((l) => l.slice('seen:'.length).trim());
  // The terminal's colour support is the operator's and stays; the multiplexer is gone.
  assert.deepEqual(seen, ['COLORTERM=truecolor']);
});

test('multiplexer: a TERM_PROGRAM that is not a multiplexer reaches the program with its version', async (t) => {
  const pane = await paneFor(t, { env: { TERM_PROGRAM: 'WezTerm', TERM_PROGRAM_VERSION: '20240203' } });
  await startSession(pane, 'mux-wezterm');
  await pane.typeLine(`env | grep -E '^(TMUX|TERM_PROGRAM)' | sort | sed 's/^/seen:/'; echo env-$((2 + 2))`);
  const screen = await pane.waitForText(/^env-4$/m);
  const seen = screen.split('\n').filter((l) => l.startsWith('seen:')).map((l) => l.slice('seen:'.length).trim());
  assert.deepEqual(seen, ['TERM_PROGRAM=WezTerm', 'TERM_PROGRAM_VERSION=20240203']);
});
