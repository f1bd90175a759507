/**
 * `jackin-capsule`: the container side. `serve` runs the agent on a PTY behind the attach socket;
 * `attach-proxy` relays stdio to that socket for hosts that reach it through an exec relay; `open-url` and
 * `offer` offer a link or a file to the operator; `ports` lists the host ports forwarded to this container; `copy` offers text for the operator's clipboard; `clipboard` is what the xclip/xsel/wl-copy/wl-paste/pbcopy/pbpaste shims run. Each command lives in its own module and registers here.
 */
import { Command, CommanderError } from './commander.ts';
import { describeError, JackinError } from '../errors.ts';
import { registerAttachProxyCommand } from './attach-proxy-command.ts';
import { packageVersion, type SetStatus } from './command-kit.ts';
import { endOnOutputError, exitAfterOutput } from './output-errors.ts';
import { pathError } from './path-error.ts';
import { oneLineUsageErrors, USAGE_EXIT_STATUS } from './usage-errors.ts';
import { registerCopyCommand } from './copy-command.ts';
import { registerClipboardCommand } from './clipboard-command.ts';
import { registerOfferCommand, registerOpenUrlCommand } from './offer-commands.ts';
import { registerPortsCommand } from './ports-command.ts';
import { registerServeCommand } from './serve-command.ts';

/** The commands, in the order `jackin-capsule --help` lists them. */
const COMMANDS: ReadonlyArray<(program: Command, setStatus: SetStatus) => void> = [
  registerServeCommand,
  registerAttachProxyCommand,
  registerOpenUrlCommand,
  registerOfferCommand,
  registerPortsCommand,
  registerCopyCommand,
  registerClipboardCommand,
];

function buildProgram(setStatus: SetStatus): Command {
  const program = new Command('jackin-capsule')
    .description(
      'Container side of jackin bridge: runs a coding agent on a PTY behind an attach socket, so the host ' +
        '`jackin` client can attach, detach and reattach, paste clipboard images, export files and open links.',
    )
    .version(packageVersion(), '-V, --version', 'print the version')
    .showSuggestionAfterError()
    .enablePositionalOptions()
    .exitOverride();
  for (const register of COMMANDS) register(program, setStatus);
  oneLineUsageErrors(program);
  return program;
}

/** Entry point of bin/jackin-capsule.js. Exits the process with the outcome. */
export async function main(argv: readonly string[]): Promise<void> {
  let status = 0;
  const program = buildProgram((n) => (status = n));
  const unwatchOutput = endOnOutputError('jackin-capsule');
  let session = false;
  program.hook('preAction', (_program, command) => {
    // serve and attach-proxy own their output (the program's log, the relay's bytes) and its errors.
    session = command.name() === 'serve' || command.name() === 'attach-proxy';
    if (session) unwatchOutput();
  });
  try {
    await program.parseAsync([...argv]);
  } catch (e) {
    if (e instanceof CommanderError) {
      // Commander already printed help, the version or its one-line usage error.
      status = e.exitCode === 0 ? 0 : USAGE_EXIT_STATUS;
    } else {
      // What a command did not handle itself is about the run directory, which serve makes and fills.
      const err = e instanceof JackinError ? e : (pathError(e, 'E_RUN_DIR', '--run-dir (or JACKIN_RUN_DIR)') ?? e);
      const code = err instanceof JackinError ? err.code : 'E_INTERNAL';
      process.stderr.write(`jackin-capsule: ${code}: ${describeError(err)}\n`);
      status = err instanceof JackinError ? err.exitCode : 1;
    }
  }
  if (session) process.exit(status);
  exitAfterOutput(status);
}

/** Run by the build before it writes this bundle's code cache (scripts/bundle.mjs). */
export { warmCapsule as warmUpForCodeCache } from './code-cache-warm-capsule.ts';
