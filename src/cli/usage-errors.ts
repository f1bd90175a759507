/** Usage errors of both CLIs: one line on stderr naming the help to read, and exit status 2. */
import { JackinError } from '../errors.ts';
import { Option, type Command } from './commander.ts';

/** Exit status of a command line that is not valid (an unknown command or option, a missing argument). */
export const USAGE_EXIT_STATUS = 2;

/**
 * One line for a usage error commander found: `error: unknown command 'exprot'\n(Did you mean export?)`
 * becomes `jackin: unknown command 'exprot' (did you mean export?); see \`jackin --help\``.
 */
function usageErrorLine(message: string, helpCommand: string, bin = helpCommand.split(' ')[0]!): string {
  const text = message
    .trim()
    .replace(/^error: /u, '')
    .replace(/\s*\n\s*\(Did you mean (.*)\)$/u, ' (did you mean $1)')
    .replace(/\s*\n\s*/gu, ' ')
    .replace(/\.$/u, '');
  return `${bin}: ${text}; see \`${helpCommand} --help\`\n`;
}

/**
 * Makes commander print each usage error as one line on stderr naming the help to read: the program's
 * own, or the subcommand's for an error in a subcommand. Call once every command is registered.
 */
export function oneLineUsageErrors(program: Command): void {
  const bin = program.name();
  const configure = (command: Command, helpCommand: string): void => {
    command.configureOutput({
      writeErr: (s) => process.stderr.write(s),
      outputError: (message, write) => write(usageErrorLine(message, helpCommand, bin)),
    });
  };
  configure(program, bin);
  for (const command of program.commands) configure(command, `${bin} ${command.name()}`);
}

/**
 * `-v` meant `--verbose` before it became `jackin run`'s `--volume` (as docker's). For one release a
 * command that had `-v, --verbose` refuses `-v` with what to write instead, rather than "unknown option".
 */
export function refuseShortVerbose(command: Command): Command {
  command.addOption(new Option('-v', 'was --verbose').hideHelp());
  command.on('option:v', () => {
    throw new JackinError('E_USAGE', `-v no longer means --verbose (in jackin run it is --volume, as docker's): use --verbose`);
  });
  return command;
}
