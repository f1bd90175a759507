/**
 * commander, for the commands. scripts/bundle.mjs bundles it into both CLIs' bundles, so it loads with their
 * code cache (src/cli/code-cache.ts) instead of from node_modules: `require('commander')` alone took 10 to
 * 18 ms here.
 *
 * Its Command is extended so that every command's help fits the terminal it is read on: commander wraps the
 * descriptions at the help width, and the text added after (or before) a command's help is laid out at the
 * same width by wrapHelpText (src/cli/help-layout.ts), so no command's text is wrapped by hand.
 */
import { Command as CommanderCommand, type AddHelpTextContext, type AddHelpTextPosition } from 'commander';
import { helpWidthFor, wrapHelpText } from './help-layout.ts';

export { Argument, CommanderError, InvalidArgumentError, Option } from 'commander';

/** A description column narrower than this is not wrapped by commander: lower than its 40, so 60 columns still wrap. */
const MIN_WIDTH_TO_WRAP = 10;

export class Command extends CommanderCommand {
  constructor(name?: string) {
    super(name);
    this.configureOutput({ getOutHelpWidth: () => helpWidthFor(process.stdout), getErrHelpWidth: () => helpWidthFor(process.stderr) });
    this.configureHelp({ minWidthToWrap: MIN_WIDTH_TO_WRAP });
  }

  /** Subcommands (`.command(name)`) are this class too. */
  override createCommand(name?: string): Command {
    return new Command(name);
  }

  override addHelpText(position: AddHelpTextPosition, text: string | ((context: AddHelpTextContext) => string)): this {
    return super.addHelpText(position, (context: AddHelpTextContext) => {
      const output = context.command.configureOutput();
      const width = (context.error ? output.getErrHelpWidth?.() : output.getOutHelpWidth?.()) ?? helpWidthFor({});
      return wrapHelpText(typeof text === 'string' ? text : text(context), width);
    });
  }
}
