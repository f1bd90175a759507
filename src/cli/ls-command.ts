/** `jackin ls [--json]`: lists local instances. */
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { Option, type Command } from './commander.ts';
import { describeState, jackinHome, listInstances, type InstanceInfo } from '../host/instances/instances.ts';
import { inertJson, inertText, padColumns, textWidth } from '../ui/inert-text.ts';
import { writeAll, type SetStatus } from './command-kit.ts';
import { JackinError } from '../errors.ts';
import { remoteInstanceList } from '../host/instances/remote-capsule.ts';
import { remoteMachine } from './transport-options.ts';
import { liveForwards, type ForwardRecord } from '../host/forward/forward-registry.ts';

const FORWARD_KIND_LABELS: Readonly<Record<ForwardRecord['kind'], string>> = {
  forward: 'jackin forward',
  login: 'login callback',
  offer: 'offered port',
};

/** Live forwards (`jackin forward`, login callbacks, offered ports), one line each, under the table. */
function formatForwards(forwards: readonly ForwardRecord[]): string {
  return forwards
    .map((f) => `forward  localhost:${f.hostPort} -> ${inertText(f.instance, 200)}:${f.containerPort}  (${FORWARD_KIND_LABELS[f.kind]}, pid ${f.pid})\n`)
    .join('');
}

function formatInstances(list: InstanceInfo[]): string {
  if (list.length === 0) return 'no instances (start one with `jackin run -- <command>`)\n';
  const rows = [['NAME', 'STATE', 'ATTACHED', 'PROGRAM', 'SOCKET']];
  for (const i of list) {
    // The program comes from the capsule (or capsule.json, which a container can write): shown inert.
    const cells = [i.name, describeState(i), i.attached === null ? '-' : i.attached ? 'yes' : 'no', i.program?.join(' ') ?? '-', i.socket];
    rows.push(cells.map((cell, c) => inertText(cell, c === 3 ? 60 : 1000)));
  }
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => textWidth(r[c]!))));
  return `${rows.map((r) => r.map((cell, c) => (c === r.length - 1 ? cell : padColumns(cell, widths[c]!))).join('  ')).join('\n')}\n`;
}

/** Names a completion may offer: plain ones only (a directory name is the container's to choose, and a shell reads these). */
const COMPLETABLE_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/u;

/** `jackin ls --names`, for shell completion (src/cli/completion-command.ts): the instance directories, no capsule probed. */
async function instanceNames(): Promise<string> {
  const names = await readdir(join(jackinHome(), 'sockets')).catch(() => []);
  return names
    .filter((n) => COMPLETABLE_NAME.test(n))
    .sort()
    .map((n) => `${n}\n`)
    .join('');
}

/** `jackin ls --ssh HOST`: the remote's instances, from the copied jackin there, re-checked and shown inert. */
async function lsRemote(target: string, json: boolean): Promise<number> {
  const remote = remoteMachine(target);
  const r = await remote.jackin(['ls', '--json']);
  const list = r.status === 0 ? remoteInstanceList(r.stdout.toString('utf8')) : null;
  if (list === null) {
    const said = inertText(r.stderr.trim().split('\n').slice(-2).join(' | '), 400);
    throw new JackinError(
      'E_SSH_FAILED',
      `jackin ls on ${inertText(target, 200)} ${r.status === 0 ? 'answered something that is not an instance list' : `failed (exit status ${r.status ?? 'signal'})`}${said ? `: ${said}` : ''}`,
    );
  }
  await writeAll(process.stdout, json ? `${inertJson(list)}\n` : formatInstances(list));
  return 0;
}

async function lsCommand(flags: { json?: boolean; names?: boolean; ssh?: string }): Promise<number> {
  if (flags.ssh !== undefined && flags.names !== true) return lsRemote(flags.ssh, flags.json === true);
  if (flags.names === true) {
    await writeAll(process.stdout, await instanceNames());
    return 0;
  }
  const list = await listInstances(jackinHome());
  const forwards = await liveForwards(jackinHome());
  const json = list.map((i) => ({ ...i, forwards: forwards.filter((f) => f.instance === i.name) }));
  await writeAll(process.stdout, flags.json === true ? `${inertJson(json)}\n` : formatInstances(list) + formatForwards(forwards));
  return 0;
}

export function registerLsCommand(program: Command, setStatus: SetStatus): void {
  program
    .command('ls')
    .description('list local instances: name, state (live, stale, or not accessible to your user), attached, program, socket; and live forwards')
    .option('--json', 'print a JSON array')
    .option('--ssh <host>', "list that machine's instances over ssh ([user@]host[:port])")
    .addOption(new Option('--names', 'print the instance names alone, one a line (for shell completion)').hideHelp())
    .addHelpText('after', '\nExamples:\n  jackin ls\n  jackin ls --json\n  jackin ls --ssh dev@box')
    .action(async (flags: { json?: boolean; names?: boolean; ssh?: string }) => setStatus(await lsCommand(flags)));
}
