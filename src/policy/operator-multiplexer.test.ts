import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isMultiplexerVariable, termProgramIsMultiplexer, withoutMultiplexer } from './operator-multiplexer.ts';

test('operator multiplexer: tmux, screen and zellij variables go; a TERM_PROGRAM naming one goes with its version', () => {
  const inTmux = {
    PATH: '/usr/bin:/bin',
    TERM: 'tmux-256color',
    COLORTERM: 'truecolor',
    TMUX: '/tmp/tmux-1000/default,1234,0',
    TMUX_PANE: '%3',
    TERM_PROGRAM: 'tmux',
    TERM_PROGRAM_VERSION: '3.4',
    STY: '4242.pts-0.host',
    ZELLIJ: '0',
    ZELLIJ_SESSION_NAME: 'work',
    ZELLIJ_PANE_ID: '2',
    LANG: 'C.UTF-8',
  };
  assert.deepEqual(withoutMultiplexer(inTmux), { PATH: '/usr/bin:/bin', TERM: 'tmux-256color', COLORTERM: 'truecolor', LANG: 'C.UTF-8' });
  for (const tp of ['tmux', 'screen', 'zellij', 'TMUX', ' screen ']) {
    assert.deepEqual(withoutMultiplexer({ TERM_PROGRAM: tp, TERM_PROGRAM_VERSION: '1', HOME: '/h' }), { HOME: '/h' }, tp);
  }
  // A terminal's own identity stays, with its version; so do names that only look alike.
  for (const tp of ['WezTerm', 'iTerm.app', 'vscode', 'ghostty', 'Apple_Terminal', 'tmuxinator', '']) {
    assert.deepEqual(withoutMultiplexer({ TERM_PROGRAM: tp, TERM_PROGRAM_VERSION: '2' }), { TERM_PROGRAM: tp, TERM_PROGRAM_VERSION: '2' }, tp);
  }
  assert.deepEqual(withoutMultiplexer({ TMUXP_CONFIGDIR: '/c', MY_TMUX: '1', STYLE: 's' }), { TMUXP_CONFIGDIR: '/c', MY_TMUX: '1', STYLE: 's' });
  assert.ok(isMultiplexerVariable('ZELLIJ_TAB_NAME'));
  assert.ok(!isMultiplexerVariable('TERM_PROGRAM'));
  assert.ok(!termProgramIsMultiplexer(undefined));
});
