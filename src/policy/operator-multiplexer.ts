/**
 * The operator's terminal multiplexer is not the program's terminal: the program runs on jackin's PTY,
 * whose output jackin filters and writes to the operator's terminal itself. A program that sees `TMUX`
 * or `TERM_PROGRAM=tmux` wraps its sequences for tmux passthrough (Copilot, Qwen and OpenCode do), which
 * the filter then refuses or passes twice. So the variables tmux, GNU screen and zellij set in their panes
 * are not passed on, and a TERM_PROGRAM naming a multiplexer goes with its version. TERM stays: the
 * operator's terminal (tmux's, here) is what finally draws the program's output. Pure.
 */

/** Variables a multiplexer sets in its panes (zellij's all start with ZELLIJ). */
const MULTIPLEXER_ENV = ['TMUX', 'TMUX_PANE', 'STY'] as const;
/** TERM_PROGRAM values that name a multiplexer, not a terminal (compared in lower case). */
const MULTIPLEXER_TERM_PROGRAMS = ['tmux', 'screen', 'zellij'] as const;

/** Whether `name` is one of the multiplexer's own variables. */
export function isMultiplexerVariable(name: string): boolean {
  return (MULTIPLEXER_ENV as readonly string[]).includes(name) || name.startsWith('ZELLIJ');
}

/** Whether TERM_PROGRAM names a multiplexer. */
export function termProgramIsMultiplexer(value: string | undefined): boolean {
  return value !== undefined && (MULTIPLEXER_TERM_PROGRAMS as readonly string[]).includes(value.trim().toLowerCase());
}

/** `env` without the operator's multiplexer: its variables, and TERM_PROGRAM(_VERSION) when it names one. */
export function withoutMultiplexer<T extends Readonly<Record<string, string | undefined>>>(env: T): Record<string, string | undefined> {
  const dropTermProgram = termProgramIsMultiplexer(env['TERM_PROGRAM']);
  const out: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(env)) {
    if (isMultiplexerVariable(name)) continue;
    if (dropTermProgram && (name === 'TERM_PROGRAM' || name === 'TERM_PROGRAM_VERSION')) continue;
    out[name] = value;
  }
  return out;
}
