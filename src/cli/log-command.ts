/**
 * `jackin log [instance] [-n N] [--json]`: the host's own record of host actions (action-log.ts), newest
 * last. Every field that came from a container is shown inert.
 */
import type { Command } from './commander.ts';
import { JackinError } from '../errors.ts';
import { DEFAULT_SHOWN_RECORDS, formatActions, readActions } from '../host/instances/action-log.ts';
import { jackinHome } from '../host/instances/instances.ts';
import { inertJson } from '../ui/inert-text.ts';
import { checkInstanceName } from '../transport/instance-paths.ts';

interface LogFlags {
  lines?: string;
  json?: boolean;
}

async function logCommand(instance: string | undefined, flags: LogFlags): Promise<number> {
  const n = flags.lines === undefined ? DEFAULT_SHOWN_RECORDS : Number(flags.lines);
  if (!Number.isSafeInteger(n) || n < 0)
    throw new JackinError('E_USAGE', `-n ${JSON.stringify(flags.lines)} is not a number of records: pass a whole number (0 shows them all)`);
  if (instance !== undefined) checkInstanceName(instance);
  const records = (await readActions(jackinHome(), instance)).slice(n === 0 ? 0 : -n);
  const text = flags.json === true ? records.map((r) => `${inertJson(r)}\n`).join('') : formatActions(records);
  await new Promise<void>((res) => process.stdout.write(text, () => res()));
  return 0;
}

/** Adds `jackin log` to the CLI. */
export function registerLogCommand(program: Command, setStatus: (n: number) => void): void {
  program
    .command('log')
    .description(
      "show the host's record of host actions (links opened, files exported, opened or revealed, images sent, requests refused); a capsule's own log is jackin logs NAME",
    )
    .argument('[instance]', 'only this instance')
    .option('-n, --lines <n>', `show the last n records (0: all; default ${DEFAULT_SHOWN_RECORDS})`)
    .option('--json', 'print one JSON object per record: {time, instance, action, target, result, detail?}')
    .addHelpText(
      'after',
      `
The log is $JACKIN_HOME/log/actions.jsonl (0600, appended only), outside every instance's run directory,
so nothing in a container can read or change it. Link targets are recorded without their query string.

Examples:
  jackin log
  jackin log agent -n 10
  jackin log --json`,
    )
    .action(async (instance: string | undefined, flags: LogFlags) => setStatus(await logCommand(instance, flags)));
}
