/**
 * `jackin-capsule`: the container side. `serve` runs the agent on a PTY behind the attach socket;
 * `attach-proxy` relays stdio to that socket for hosts that reach it through an exec relay.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Command, CommanderError, InvalidArgumentError } from 'commander';
import { describeError, JackinError } from '../errors.ts';
import { runAttachProxy } from '../capsule/attach-proxy.ts';
import { SOCKET_NAME } from '../capsule/run-dir.ts';
import { defaultRunDir, serve } from '../capsule/serve.ts';
import { DEFAULT_COLS, DEFAULT_ROWS } from '../capsule/session.ts';
import { offerFileCommand, openUrlCommand } from './offer-commands.ts';

function packageVersion(): string {
  try {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version?: unknown };
    return typeof pkg.version === 'string' ? pkg.version : '0.0.0';
  } catch {
    return '0.0.0';
  }
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

function buildProgram(result: { status: number }): Command {
  const program = new Command('jackin-capsule')
    .description(
      'Container side of jackin bridge: runs a coding agent on a PTY behind an attach socket, so the host ' +
        '`jackin` client can attach, detach and reattach, paste clipboard images, export files and open links.',
    )
    .version(packageVersion(), '-V, --version', 'print the version')
    .showSuggestionAfterError()
    .enablePositionalOptions()
    .exitOverride();

  program
    .command('serve')
    .description(
      'Run <cmd> on a PTY and serve it on <run-dir>/jackin.sock (dir 0700, socket 0600). ' +
        'Exits with the program\'s exit status (128+signal when killed by a signal).',
    )
    .option('--run-dir <dir>', 'run directory (default: $JACKIN_RUN_DIR or /jackin/run)')
    .option('--workspace <dir>', 'working directory of the program (default: the current directory)')
    .option('--name <name>', 'instance name reported by status (default: the command\'s basename)')
    .option('--handshake-timeout-ms <ms>', 'time a new connection has to send its first frame', positiveInt)
    .option('--policy <file>', 'export policy JSON (default: the shipped policies/default.json; see docs/policy.md)')
    .option('--rows <n>', `PTY rows until a client attaches with its size (default: ${DEFAULT_ROWS})`, terminalSize)
    .option('--cols <n>', `PTY columns until a client attaches with its size (default: ${DEFAULT_COLS})`, terminalSize)
    .argument('<cmd>', 'program to run')
    .argument('[args...]', 'its arguments (put -- before <cmd> when they start with -)')
    .passThroughOptions()
    .addHelpText('after', '\nExample:\n  jackin-capsule serve --run-dir /jackin/run -- claude --continue')
    .action(async (cmd: string, args: string[], opts: { runDir?: string; workspace?: string; name?: string; handshakeTimeoutMs?: number; policy?: string; rows?: number; cols?: number }) => {
      result.status = await serve({
        runDir: opts.runDir ?? defaultRunDir(),
        workspace: opts.workspace ?? process.cwd(),
        program: [cmd, ...args],
        ...(opts.name !== undefined ? { name: opts.name } : {}),
        ...(opts.handshakeTimeoutMs !== undefined ? { handshakeTimeoutMs: opts.handshakeTimeoutMs } : {}),
        ...(opts.policy !== undefined ? { policyPath: opts.policy } : {}),
        ...(opts.rows !== undefined ? { rows: opts.rows } : {}),
        ...(opts.cols !== undefined ? { cols: opts.cols } : {}),
      });
    });

  program
    .command('attach-proxy')
    .description(
      'Relay stdin/stdout to the capsule socket, byte for byte (used by `jackin attach --via docker|podman|kubectl`).',
    )
    .option('--socket <path>', `socket to connect to (default: <run-dir>/${SOCKET_NAME})`)
    .action(async (opts: { socket?: string }) => {
      result.status = await runAttachProxy({ socketPath: opts.socket ?? join(defaultRunDir(), SOCKET_NAME) });
    });

  program
    .command('open-url')
    .description('Offer a link to the operator (install as BROWSER and as xdg-open): nothing opens until they choose "Open offered link".')
    .option('--run-dir <dir>', 'run directory of the capsule (default: $JACKIN_RUN_DIR or /jackin/run)')
    .argument('<url>', 'http, https or mailto link (put -- before it when it starts with -)')
    .addHelpText('after', '\nExample:\n  BROWSER=jackin-capsule-browser gh auth login\n  jackin-capsule open-url -- https://example.com/login')
    .action(async (url: string, opts: { runDir?: string }) => {
      await openUrlCommand(url, opts.runDir ?? defaultRunDir());
    });

  program
    .command('offer')
    .description('Offer a file to the operator: nothing is copied until they pull it ("Pull offered file" or `jackin export --offered`).')
    .option('--run-dir <dir>', 'run directory of the capsule (default: $JACKIN_RUN_DIR or /jackin/run)')
    .argument('<path>', 'the file (relative to the current directory)')
    .action(async (path: string, opts: { runDir?: string }) => {
      await offerFileCommand(path, opts.runDir ?? defaultRunDir());
    });

  return program;
}

/** Entry point of bin/jackin-capsule.js. Exits the process with the outcome. */
export async function main(argv: readonly string[]): Promise<void> {
  const result = { status: 0 };
  try {
    await buildProgram(result).parseAsync([...argv]);
  } catch (e) {
    if (e instanceof CommanderError) {
      // Commander already printed help, the version or its one-line usage error.
      process.exit(e.exitCode);
    }
    const code = e instanceof JackinError ? e.code : 'E_INTERNAL';
    process.stderr.write(`jackin-capsule: ${code}: ${describeError(e)}\n`);
    process.exit(e instanceof JackinError ? e.exitCode : 1);
  }
  process.exit(result.status);
}
