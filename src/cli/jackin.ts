/**
 * `jackin`: the host CLI. Each command lives in its own module (`<name>-command.ts`) and registers itself
 * here; this file only builds the program and turns errors into the output contract: results on stdout,
 * diagnostics on stderr, one line per error (or one JSON object when the command was given --json) and a
 * non-zero exit status.
 */
import { Command, CommanderError } from './commander.ts';
import { describeError, JackinError } from '../errors.ts';
import { registerAttachCommand } from './attach-command.ts';
import { registerCallbackRouterCommand } from './callback-router-command.ts';
import { applyConfigFile } from './config-file.ts';
import { packageVersion, writeAll, type SetStatus } from './command-kit.ts';
import { endOnOutputError, exitAfterOutput } from './output-errors.ts';
import { pathError } from './path-error.ts';
import { oneLineUsageErrors, USAGE_EXIT_STATUS } from './usage-errors.ts';
import { registerDoctorCommand } from './doctor-command.ts';
import { registerRuntimeCommand } from './runtime-command.ts';
import { registerCompletionCommand } from './completion-command.ts';
import { registerExportCommand } from './export-command.ts';
import { registerForwardCommand } from './forward-command.ts';
import { registerLogCommand } from './log-command.ts';
import { registerStageCommand } from './stage-command.ts';
import { registerLsCommand } from './ls-command.ts';
import { registerRunCommand } from './run-command.ts';
import { inertJson, inertText } from '../ui/inert-text.ts';
import { registerStopCommand } from './stop-command.ts';
import { registerPruneCommand, registerRmCommand } from './rm-command.ts';
import { registerLogsCommand } from './logs-command.ts';
import { discardPrelaunchedRelay, offerPrelaunchedRelay } from '../transport/exec-relay.ts';
import type { LaunchedRelay } from '../transport/relay-launch.ts';

/** The commands, in the order `jackin --help` lists them. */
const COMMANDS: ReadonlyArray<(program: Command, setStatus: SetStatus) => void> = [
  registerAttachCommand,
  registerRunCommand,
  registerLsCommand,
  registerDoctorCommand,
  registerExportCommand,
  registerStopCommand,
  registerRmCommand,
  registerPruneCommand,
  registerLogsCommand,
  registerStageCommand,
  registerLogCommand,
  registerForwardCommand,
  registerRuntimeCommand,
  registerCompletionCommand,
  // Hidden: started by jackin itself, never by the operator.
  registerCallbackRouterCommand,
];

/** The program with every command registered (exported for tests, which parse with it). */
export function buildProgram(setStatus: SetStatus): Command {
  const program = new Command('jackin')
    .description('Attach your terminal to a coding agent running in a jackin capsule (a container, a pod, or this machine).')
    .version(packageVersion(), '-V, --version')
    .enablePositionalOptions()
    // Set before the subcommands are added: they copy it when created.
    .exitOverride()
    .addHelpText(
      'after',
      `
Examples:
  jackin run -- bash                 start bash in a local capsule and attach to it
  jackin ls                          list local instances
  jackin attach bash                 reattach (detach again with Ctrl+\\ then d)
  jackin attach agent --via docker   attach to the capsule in container "agent"
  jackin doctor                      check clipboard, opener, downloads and instances

Exit status: attach and run give the program's exit status (0 after a detach). The other commands: 0 on
success, 2 for a usage error, 128 + n when signal n interrupts a transfer (130 for Ctrl+C), otherwise 1
(for some errors another status, see docs/errors.md) with one line on stderr saying why and what to do.

Environment: JACKIN_HOME (default ~/.jackin) holds sockets/<instance>/jackin.sock; the other JACKIN_*
variables and every error code are in docs/guide.md and docs/errors.md.`,
    );
  for (const register of COMMANDS) register(program, setStatus);
  oneLineUsageErrors(program);
  return program;
}

/** Runs the CLI and returns the exit status (errors are printed here). */
export async function run(argv: string[]): Promise<number> {
  let status = 0;
  // Set from the options commander parsed for the command that runs, never from the raw argv: in
  // `jackin run -- tool --json` the flag belongs to the tool.
  let json = false;
  const unwatchOutput = endOnOutputError('jackin');
  try {
    // First of all: every command (and what it starts) reads the file's JACKIN_* settings as environment
    // variables. bin/jackin.js's early relay ran before this, but reads none (src/cli/early-relay.ts).
    applyConfigFile();
    const program = buildProgram((n) => (status = n));
    program.hook('preAction', (_program, command) => {
      json = command.opts()['json'] === true;
      // An attached session owns the terminal and its errors (a hung-up terminal must not skip the restore).
      if (command.name() === 'attach' || (command.name() === 'run' && command.opts()['dryRun'] !== true && command.opts()['detach'] !== true)) unwatchOutput();
    });
    await program.parseAsync(argv);
    return status;
  } catch (e) {
    if (e instanceof CommanderError) {
      // --help and --version end here with status 0; usage errors were already printed by commander.
      return e.exitCode === 0 ? 0 : USAGE_EXIT_STATUS;
    }
    const err = e instanceof JackinError ? e : (pathError(e, 'E_HOST_IO', 'JACKIN_HOME') ?? e);
    const code = err instanceof JackinError ? err.code : 'E_INTERNAL';
    const exitCode = err instanceof JackinError ? err.exitCode : 70;
    // Messages can carry container text (a capsule's refusal, a relay's stderr): never raw to the terminal.
    // The code ends the line, as on export's and stage's lines per path (docs/errors.md gives its exit status
    // and the fix); a usage error stays the plain line commander's own usage errors are.
    const shown = code === 'E_USAGE' ? '' : ` (${code})`;
    const line = json ? inertJson({ error: { code, message: describeError(err) } }) : `jackin: ${inertText(describeError(err), 1000)}${shown}`;
    await writeAll(process.stderr, `${line}\n`);
    return exitCode;
  }
}

/**
 * Entry point of bin/jackin.js, with the relay it may have started before loading this module
 * (src/cli/early-relay.ts): `attach` adopts it, and it is stopped if nothing did. Exits explicitly: a
 * relay or a TTY handle must not keep jackin alive.
 */
export async function main(argv: string[], earlyRelay: LaunchedRelay | null = null): Promise<void> {
  offerPrelaunchedRelay(earlyRelay);
  let status: number;
  try {
    status = await run(argv);
  } finally {
    discardPrelaunchedRelay();
  }
  exitAfterOutput(status);
}

/** Run by the build before it writes this bundle's code cache (scripts/bundle.mjs). */
export { warmHost as warmUpForCodeCache } from './code-cache-warm-host.ts';
