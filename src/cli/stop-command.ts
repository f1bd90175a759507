/**
 * `jackin stop NAME`: stops an instance. A container `jackin run --image` started is stopped and removed
 * through its engine (its init forwards SIGTERM to the capsule, which ends the program); a local capsule
 * gets SIGTERM, once its socket has named the pid and that process shows it serves the instance's run
 * directory (capsule-process.ts: the pid alone is the container's word).
 */
import type { Command } from './commander.ts';
import { JackinError } from '../errors.ts';
import { unconfirmedCapsulePid } from '../host/instances/capsule-process.ts';
import { jackinHome, probeInstance } from '../host/instances/instances.ts';
import { engineCommand, removeContainer } from '../transport/container-engine.ts';
import { readContainerRecord, removeContainerRecord } from '../transport/container-record.ts';
import { checkInstanceName, instanceRunDir, instanceSocketPath } from '../transport/instance-paths.ts';
import { remoteMachine } from './transport-options.ts';
import { instanceDead, localState, noLocalInstance } from '../host/instances/resolve-instance.ts';
import { socketAnswers } from '../host/instances/instances.ts';
import { inertText } from '../ui/inert-text.ts';
import { NAME_OPTION_HELP, requiredInstance } from './instance-option.ts';
import { setTimeout as sleep } from 'node:timers/promises';

/** A local capsule ends its program (SIGHUP, then SIGKILL after its grace) well within this. */
const LOCAL_STOP_TIMEOUT_MS = 15_000;
const LOCAL_STOP_POLL_MS = 50;

/**
 * `jackin stop --ssh HOST NAME`: the copied jackin on that machine stops it there, with the same checks; its
 * lines are that machine's, shown inert, and its exit status is kept (1 or 2, anything else 1).
 */
async function stopRemote(target: string, name: string): Promise<number> {
  const r = await remoteMachine(target).jackin(['stop', checkInstanceName(name)]);
  const lines = (text: string): string =>
    text
      .split('\n')
      .filter((l) => l.length > 0)
      .map((l) => `${inertText(l, 1000)}\n`)
      .join('');
  process.stdout.write(lines(r.stdout.toString('utf8')));
  process.stderr.write(lines(r.stderr));
  return r.status === 0 ? 0 : r.status === 2 ? 2 : 1;
}

async function stopCommand(positional: string | undefined, flags: { name?: string; ssh?: string }): Promise<number> {
  const home = jackinHome();
  const name = requiredInstance('stop', [
    ['NAME', positional],
    ['--name', flags.name],
  ]);
  if (flags.ssh !== undefined) return stopRemote(flags.ssh, name);
  const record = readContainerRecord(home, name);
  if (record !== null) {
    // `stop` gives the init's SIGTERM 10 s; `rm -f` then removes it (and succeeds if it is already gone).
    await engineCommand(record.engine, ['stop', '-t', '10', record.container]).catch(() => undefined);
    await removeContainer(record.engine, record.container);
    removeContainerRecord(home, name);
    process.stdout.write(`stopped ${inertText(name, 128)} (${record.engine} container ${inertText(record.container, 128)})\n`);
    return 0;
  }
  const runDir = instanceRunDir(home, name);
  const local = await localState(runDir);
  if (local === 'none')
    throw noLocalInstance(name, home, ` and no container started by \`jackin run --image\` (for a container you started yourself: docker/podman stop ${name})`);
  if (local === 'dead') throw instanceDead(name, runDir);
  const info = await probeInstance(home, name);
  if (info.state === 'live' && info.pid === null && info.containerPid !== null) {
    throw new JackinError(
      'E_NO_INSTANCE',
      `the capsule of ${name} runs in a container jackin did not start: stop that container (docker/podman stop <container>)`,
    );
  }
  if (info.state !== 'live' || info.pid === null) {
    throw new JackinError(
      'E_NO_INSTANCE',
      `no running instance ${name}: ${info.state === 'inaccessible' ? `its socket is owned by uid ${info.owner ?? '?'}` : 'nothing answers on its socket'} (for a container you started yourself: docker/podman stop ${name})`,
    );
  }
  // The pid is the capsule's word (its status reply, capsule.json): signal it only once the process itself
  // shows it serves this instance's run directory.
  const unconfirmed = await unconfirmedCapsulePid(info.pid, info.runDir);
  if (unconfirmed !== null) {
    throw new JackinError(
      'E_NO_INSTANCE',
      `not stopping ${name}: ${unconfirmed}; nothing was signalled (for a container you started yourself: docker/podman stop ${name})`,
    );
  }
  try {
    process.kill(info.pid, 'SIGTERM');
  } catch (e) {
    throw new JackinError(
      'E_NO_INSTANCE',
      `cannot signal the capsule of ${name} (pid ${info.pid}): ${(e as NodeJS.ErrnoException).code ?? String(e)}; it may run in a container: stop that container`,
      { cause: e },
    );
  }
  const socket = instanceSocketPath(home, name);
  const deadline = Date.now() + LOCAL_STOP_TIMEOUT_MS;
  while (await socketAnswers(socket)) {
    if (Date.now() > deadline) throw new JackinError('E_STOP_TIMEOUT', `${name} (pid ${info.pid}) still answers ${LOCAL_STOP_TIMEOUT_MS} ms after SIGTERM`);
    await sleep(LOCAL_STOP_POLL_MS);
  }
  process.stdout.write(`stopped ${inertText(name, 128)}\n`);
  return 0;
}

export function registerStopCommand(program: Command, setStatus: (n: number) => void): void {
  program
    .command('stop')
    .description('stop an instance: its container (from jackin run --image), or its local capsule; the program ends')
    .argument('[instance]', 'instance name')
    .option('--name <instance>', `${NAME_OPTION_HELP}; the same as giving it as the first argument`)
    .option('--ssh <host>', 'stop it on that machine ([user@]host[:port]), where jackin run --ssh started it')
    .addHelpText(
      'after',
      `
Exit status: 0 once the instance has stopped; 1 when no instance of that name exists (E_NO_INSTANCE), its
local capsule already died (E_INSTANCE_DEAD: remove it with jackin rm), it runs in a container jackin did
not start (stop that container), or it still answers ${LOCAL_STOP_TIMEOUT_MS / 1000} s after SIGTERM.

Examples:
  jackin stop agent
  jackin stop --ssh dev@box agent`,
    )
    .action(async (name: string | undefined, flags: { name?: string; ssh?: string }) => setStatus(await stopCommand(name, flags)));
}
