/** `jackin-capsule serve [options] -- <cmd> [args...]`: runs the program on a PTY behind the attach socket. */
import { accessSync, constants } from 'node:fs';
import { resolve } from 'node:path';
import { InvalidArgumentError, type Command } from './commander.ts';
import { defaultRunDir } from '../capsule/session/run-dir.ts';
import { JackinError } from '../errors.ts';
import { DEFAULT_COLS, DEFAULT_ROWS } from '../capsule/session/pty-size.ts';
import { HANDSHAKE_TIMEOUT_MS } from '../protocol/limits.ts';
import { describeRefusedName, instanceNameProblem } from '../policy/instance-name.ts';
import { checkWorkspace, type SetStatus } from './command-kit.ts';

// Only `serve` loads the PTY (node-pty's native module) and the screen model: every other subcommand works
// in an image whose native module cannot load, and `attach-proxy`, started for each `--via` relay, starts
// as fast as Node itself. serve.ts imports node-pty, so it is loaded in the action, on demand.

/** `--name`: the one instance-name rule (src/policy/instance-name.ts); the host prints the name this capsule reports. */
function instanceName(value: string): string {
  const problem = instanceNameProblem(value);
  if (problem !== null) throw new JackinError('E_BAD_INSTANCE_NAME', `invalid instance name ${describeRefusedName(value)}: ${problem}`);
  return value;
}

function positiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0) throw new InvalidArgumentError(`expected a positive integer, got ${JSON.stringify(value)}`);
  return n;
}

/** A terminal dimension: 1..65535, the range a PTY's winsize holds. */
function terminalSize(value: string): number {
  const n = positiveInt(value);
  if (n > 0xffff) throw new InvalidArgumentError(`expected at most 65535, got ${n}`);
  return n;
}

/**
 * Refuses a program that cannot be run before anything starts: on the PTY, a missing program only shows as
 * "execvp(3) failed" on a screen nobody may be looking at, then an exit status 1.
 */
async function checkProgram(cmd: string, workspace: string): Promise<void> {
  if (cmd.includes('/')) {
    // The program starts in the workspace, so a relative path is taken from there.
    const path = resolve(workspace, cmd);
    try {
      accessSync(path, constants.X_OK);
    } catch (cause) {
      throw new JackinError(
        'E_SPAWN_FAILED',
        `cannot run ${path}: ${(cause as NodeJS.ErrnoException).code ?? String(cause)}; check the path and that it is executable`,
        { cause },
      );
    }
    return;
  }
  const { onPath } = await import('../transport/container-engine.ts');
  // execvp searches /bin:/usr/bin when PATH is unset.
  const path = process.env['PATH'] ?? '/bin:/usr/bin';
  if (!onPath(cmd, { PATH: path }))
    throw new JackinError('E_SPAWN_FAILED', `cannot run ${JSON.stringify(cmd)}: not found on PATH (${path}); check the name, or give its path`);
}

interface ServeFlags {
  runDir?: string;
  workspace?: string;
  name?: string;
  handshakeTimeoutMs?: number;
  policy?: string;
  rows?: number;
  cols?: number;
  browser?: boolean;
  clipboard?: boolean;
  plain?: boolean;
}

export function registerServeCommand(program: Command, setStatus: SetStatus): void {
  program
    .command('serve')
    .description(
      'Run <cmd> on a PTY and serve it on <run-dir>/jackin.sock (dir 0700, socket 0600). ' +
        "Exits with the program's exit status (128+signal when killed by a signal).",
    )
    .option('--run-dir <dir>', 'run directory (default: $JACKIN_RUN_DIR or /jackin/run)')
    .option('--workspace <dir>', 'working directory of the program (default: the current directory)')
    .option(
      '--name <name>',
      "instance name reported by status (default: in a container its host name, which Docker and Podman set to the container id and Kubernetes to the pod name; elsewhere the command's basename)",
      instanceName,
    )
    .option('--handshake-timeout-ms <ms>', `time a new connection has to send its first frame (default: ${HANDSHAKE_TIMEOUT_MS})`, positiveInt)
    .option('--policy <file>', 'export policy JSON (default: the shipped policies/default.json; see docs/policy.md)')
    .option('--rows <n>', `PTY rows until a client attaches with its size (default: ${DEFAULT_ROWS})`, terminalSize)
    .option('--cols <n>', `PTY columns until a client attaches with its size (default: ${DEFAULT_COLS})`, terminalSize)
    .option(
      '--browser',
      "make the program's browser jackin's: BROWSER, xdg-open, sensible-browser and www-browser make link offers (jackin run --image sets this up itself)",
    )
    .option(
      '--clipboard',
      "make the program's clipboard tools jackin's: xclip, xsel, wl-copy, wl-paste, pbcopy and pbpaste make copy offers and read the image last pasted (jackin run --image sets this up itself)",
    )
    .option(
      '--plain',
      "for a first host without a terminal (jackin run with its output redirected): the PTY passes the program's bytes unchanged (no echo, no CRLF) and they are kept for that host from the start, not repainted",
    )
    .argument('<cmd>', 'program to run')
    .argument('[args...]', 'its arguments (put -- before <cmd> when they start with -)')
    .passThroughOptions()
    .addHelpText(
      'after',
      '\nExamples:\n  jackin-capsule serve --run-dir /jackin/run -- claude --continue\n  jackin-capsule serve --browser -- claude     its /login link becomes a link offer',
    )
    .action(async (cmd: string, args: string[], opts: ServeFlags) => {
      const workspace = checkWorkspace(opts.workspace ?? process.cwd());
      await checkProgram(cmd, workspace);
      const { serve } = await import('../capsule/serve.ts');
      setStatus(
        await serve({
          runDir: opts.runDir ?? defaultRunDir(),
          workspace,
          program: [cmd, ...args],
          ...(opts.name !== undefined ? { name: opts.name } : {}),
          ...(opts.rows !== undefined ? { rows: opts.rows } : {}),
          ...(opts.cols !== undefined ? { cols: opts.cols } : {}),
          ...(opts.handshakeTimeoutMs !== undefined ? { handshakeTimeoutMs: opts.handshakeTimeoutMs } : {}),
          ...(opts.policy !== undefined ? { policyPath: opts.policy } : {}),
          ...(opts.browser === true ? { browser: true } : {}),
          ...(opts.clipboard === true ? { clipboard: true } : {}),
          ...(opts.plain === true ? { plain: true } : {}),
        }),
      );
    });
}
