/**
 * `jackin log [instance | --name instance] [--tail N] [--json]`: the host's own record of host actions (action-log.ts), newest
 * last. Every field that came from a container is shown inert.
 */
import { Option, type Command } from './commander.ts';
import { JackinError } from '../errors.ts';
import { type ActionRecord, DEFAULT_SHOWN_RECORDS, formatActions, parseActions, readActions } from '../host/instances/action-log.ts';
import { inertText } from '../ui/inert-text.ts';
import { remoteMachine } from './transport-options.ts';
import { jackinHome } from '../host/instances/instances.ts';
import { inertJson } from '../ui/inert-text.ts';
import { existsSync } from 'node:fs';
import { actionLogPath } from '../host/instances/action-log.ts';
import { readContainerRecord } from '../transport/container-record.ts';
import { instanceRunDir } from '../transport/instance-paths.ts';
import { noLocalInstance } from '../host/instances/resolve-instance.ts';
import { NAME_OPTION_HELP, namedInstance } from './instance-option.ts';

interface LogFlags {
  tail?: string;
  /** The old spelling of --tail, kept as an alias. */
  lines?: string;
  /** The old `-n N`: refused with a pointer to --tail (-n is the Kubernetes namespace elsewhere). */
  n?: string;
  name?: string;
  json?: boolean;
  ssh?: string;
}

/**
 * `jackin log --ssh HOST`: the record of the jackin copied to that machine (what it did there: the containers
 * `run --ssh --image` had it start, actions of sessions run from there), read with its `log --json` and
 * re-checked record by record, as that machine's words.
 */
async function remoteActions(target: string, instance: string | undefined): Promise<ActionRecord[]> {
  const r = await remoteMachine(target).jackin(['log', '--tail', '0', '--json', ...(instance !== undefined ? ['--name', instance] : [])]);
  if (r.status !== 0) {
    const why = inertText(r.stderr.trim().split('\n').slice(-2).join(' | '), 400);
    throw new JackinError('E_SSH_FAILED', `jackin log on ${inertText(target, 200)} failed (exit status ${r.status ?? 'signal'})${why ? `: ${why}` : ''}`);
  }
  return parseActions(r.stdout.toString('utf8'), instance);
}

async function logCommand(positional: string | undefined, flags: LogFlags): Promise<number> {
  if (flags.n !== undefined)
    throw new JackinError('E_USAGE', `-n is no longer the number of records: use --tail ${flags.n} (-n is the Kubernetes namespace in the other commands)`);
  const count = flags.tail ?? flags.lines;
  const n = count === undefined ? DEFAULT_SHOWN_RECORDS : Number(count);
  if (!Number.isSafeInteger(n) || n < 0)
    throw new JackinError('E_USAGE', `--tail ${JSON.stringify(count)} is not a number of records: pass a whole number (0 shows them all)`);
  const instance = namedInstance([
    ['NAME', positional],
    ['--name', flags.name],
  ]);
  const home = jackinHome();
  const all = flags.ssh !== undefined ? await remoteActions(flags.ssh, instance) : await readActions(home, instance);
  // A name with no record that is no instance either is most likely mistyped: said, rather than an empty log.
  if (
    flags.ssh === undefined &&
    instance !== undefined &&
    all.length === 0 &&
    !existsSync(instanceRunDir(home, instance)) &&
    readContainerRecord(home, instance) === null
  ) {
    throw noLocalInstance(instance, home, `, and no record in ${actionLogPath(home)}`);
  }
  const records = all.slice(n === 0 ? 0 : -n);
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
    .option('--name <instance>', `only this instance (the same as the argument): ${NAME_OPTION_HELP}`)
    .option('--tail <n>', `show the last n records (0: all; default ${DEFAULT_SHOWN_RECORDS})`)
    .addOption(new Option('--lines <n>', 'the old spelling of --tail').hideHelp())
    .addOption(new Option('-n <n>', 'refused: use --tail').hideHelp())
    .option('--json', 'print one JSON object per record: {time, instance, action, target, result, detail?}')
    .option('--ssh <host>', 'the record of the jackin on that machine ([user@]host[:port]), where jackin run --ssh runs it')
    .addHelpText(
      'after',
      `
The log is $JACKIN_HOME/log/actions.jsonl (0600, appended only), outside every instance's run directory,
so nothing in a container can read or change it. Link targets are recorded without their query string.
--lines is the old spelling of --tail; the old -n is refused (-n is the Kubernetes namespace elsewhere).
A name with no record that is no instance either is an error (E_NO_INSTANCE), not an empty log.

Examples:
  jackin log
  jackin log agent --tail 10
  jackin log --json
  jackin log --ssh dev@box`,
    )
    .action(async (instance: string | undefined, flags: LogFlags) => setStatus(await logCommand(instance, flags)));
}
