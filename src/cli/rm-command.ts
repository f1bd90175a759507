/**
 * `jackin rm NAME...` and `jackin prune`: remove what is left of instances that ended. A stopped container
 * jackin started (its label names it), its record, and a dead local run directory (a socket nothing answers
 * on, or a capsule.json whose capsule is gone; one holding only capsule.log is a capsule that ended cleanly,
 * kept by prune for `jackin logs`, removed by rm). Nothing live is touched: `rm` of a running instance is
 * refused (`jackin stop` stops it), and a socket that refuses us (another user's) may be live and is kept.
 * Nothing is killed, and only containers whose label is jackin's and names them are removed.
 */
import { existsSync, rmSync } from 'node:fs';
import type { Command } from './commander.ts';
import { describeError, JackinError } from '../errors.ts';
import { jackinHome, listInstances, probeInstance } from '../host/instances/instances.ts';
import { CONTAINER_LABEL } from '../host/instances/container-run-argv.ts';
import { localState } from '../host/instances/resolve-instance.ts';
import { CONTAINER_ENGINES, containerState, engineCommand, onPath, type ContainerEngine } from '../transport/container-engine.ts';
import { containerRecordNames, readContainerRecord, removeContainerRecord } from '../transport/container-record.ts';
import { checkInstanceName, instanceRunDir } from '../transport/instance-paths.ts';
import { forgetBoundary } from '../transport/socket-boundary.ts';
import { inertJson, inertText } from '../ui/inert-text.ts';
import { writeAll, type SetStatus } from './command-kit.ts';

/** One thing removed, as printed. */
interface Removed {
  name: string;
  what: 'container' | 'record' | 'run-dir';
  engine?: ContainerEngine;
  path?: string;
}

interface RmFlags {
  json?: boolean;
}

/** The states of a container that holds no running program: removing it ends nothing. */
const STOPPED_STATES = new Set(['exited', 'dead', 'created', 'stopped', 'configured']);

function removedLine(r: Removed, json: boolean): string {
  if (json) return `${inertJson(r)}\n`;
  const name = inertText(r.name, 128);
  switch (r.what) {
    case 'container':
      return `removed ${name} (${r.engine} container)\n`;
    case 'record':
      return `removed ${name} (record of a ${r.engine} container that is gone)\n`;
    case 'run-dir':
      return `removed ${name} (run directory ${inertText(r.path ?? '', 1000)})\n`;
  }
}

/** The value of jackin's label on a container, or null when it has none or is not there. */
async function labelOf(engine: ContainerEngine, container: string): Promise<string | null> {
  try {
    const v = (await engineCommand(engine, ['inspect', '--type', 'container', '--format', `{{index .Config.Labels "${CONTAINER_LABEL}"}}`, container])).trim();
    return v.length > 0 && v !== '<no value>' ? v : null;
  } catch {
    return null;
  }
}

function engineAnswers(engine: ContainerEngine): Promise<boolean> {
  return engineCommand(engine, ['version']).then(
    () => true,
    () => false,
  );
}

function removeRunDir(name: string, runDir: string): Removed {
  try {
    // Recursive removal unlinks a symlink a container planted; it never follows one.
    rmSync(runDir, { recursive: true, force: true });
  } catch (e) {
    throw new JackinError(
      'E_HOST_IO',
      `cannot remove ${runDir}: ${(e as NodeJS.ErrnoException).code ?? String(e)} (files of another user? remove it yourself)`,
      {
        cause: e,
      },
    );
  }
  return { name, what: 'run-dir', path: runDir };
}

/** Removes a stopped container of jackin's; refuses a running one. */
async function removeStoppedContainer(engine: ContainerEngine, name: string, container: string): Promise<Removed | null> {
  const state = await containerState(engine, container);
  if (state === null) {
    // Gone, or an engine that does not answer (a stopped daemon), which says nothing: the record stays then.
    if (!(await engineAnswers(engine)))
      throw new JackinError('E_ENGINE_COMMAND', `${engine} does not answer: cannot tell whether ${container} runs; start it and retry`);
    return null;
  }
  if (!STOPPED_STATES.has(state)) {
    throw new JackinError(
      'E_INSTANCE_RUNNING',
      `instance ${name} is running (${engine} container ${container}: ${state}): stop it first with \`jackin stop ${name}\``,
    );
  }
  if ((await labelOf(engine, container)) !== name) {
    throw new JackinError('E_CONTAINER_EXISTS', `container ${container} was not started by jackin for ${name}: not removing it (${engine} rm ${container})`);
  }
  // No -f: a container that started again meanwhile is refused by the engine, not killed.
  await engineCommand(engine, ['rm', container]);
  return { name, what: 'container', engine };
}

/** What `jackin rm NAME` removes, in order; throws when NAME is live or unknown. */
async function removeInstance(home: string, name: string): Promise<Removed[]> {
  checkInstanceName(name);
  const out: Removed[] = [];
  const record = readContainerRecord(home, name);
  const runDir = instanceRunDir(home, name);
  const info = existsSync(runDir) ? await probeInstance(home, name) : null;
  if (info?.state === 'live') throw new JackinError('E_INSTANCE_RUNNING', `instance ${name} is running: stop it first with \`jackin stop ${name}\``);
  if (info?.state === 'inaccessible') {
    throw new JackinError(
      'E_INSTANCE_RUNNING',
      `instance ${name} may be running: its socket is owned by uid ${info.owner ?? '?'} and refuses you; not removing it`,
    );
  }
  if (record !== null) {
    const removed = await removeStoppedContainer(record.engine, name, record.container);
    removeContainerRecord(home, name);
    out.push(removed ?? { name, what: 'record', engine: record.engine });
  }
  if (info !== null) out.push(removeRunDir(name, runDir));
  await forgetBoundary(home, name);
  if (out.length === 0) throw new JackinError('E_NO_INSTANCE', `no instance ${name}: no run directory and no container record (jackin ls lists them)`);
  return out;
}

/** Stopped containers carrying jackin's label, as [container, label value]. */
async function stoppedJackinContainers(engine: ContainerEngine): Promise<Array<[string, string]>> {
  const statuses = engine === 'docker' ? ['exited', 'dead', 'created'] : ['exited', 'stopped', 'created'];
  const args = ['ps', '-a', '--filter', `label=${CONTAINER_LABEL}`, ...statuses.flatMap((s) => ['--filter', `status=${s}`]), '--format', '{{.Names}}'];
  let names: string[];
  try {
    names = (await engineCommand(engine, args))
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l.length > 0);
  } catch {
    return []; // the engine is not running: it has nothing for us to remove
  }
  const out: Array<[string, string]> = [];
  for (const n of names) {
    const label = await labelOf(engine, n);
    if (label !== null) out.push([n, label]);
  }
  return out;
}

async function pruneAll(home: string, emit: (r: Removed) => Promise<void>, fail: (e: unknown) => Promise<void>): Promise<void> {
  for (const engine of CONTAINER_ENGINES.filter((e) => onPath(e))) {
    for (const [container, name] of await stoppedJackinContainers(engine)) {
      // Only a container whose label names it: the name jackin gave it is the instance name.
      if (container !== name) continue;
      try {
        const removed = await removeStoppedContainer(engine, name, container);
        if (removed === null) continue;
        const record = readContainerRecord(home, name);
        if (record !== null && record.engine === engine && record.container === container) removeContainerRecord(home, name);
        await emit(removed);
      } catch (e) {
        await fail(e);
      }
    }
  }
  // Records whose container is gone (removed by hand, or by the engine).
  for (const name of containerRecordNames(home)) {
    const record = readContainerRecord(home, name);
    if (record === null || (await containerState(record.engine, record.container)) !== null) continue;
    // An engine that does not answer says nothing about the container: keep the record then.
    if (!(await engineAnswers(record.engine))) continue;
    removeContainerRecord(home, name);
    await emit({ name, what: 'record', engine: record.engine });
  }
  for (const info of await listInstances(home)) {
    if (info.state !== 'stale') continue;
    // A container instance still starting or running has its record: its run directory is not ours to judge.
    if (readContainerRecord(home, info.name) !== null) continue;
    // Only a local capsule's leftovers (its log, or capsule.json naming a pid of this host): a directory a
    // container mounts (compose, a devcontainer, a `docker run` of --dry-run's command) stays, or the next
    // start of that container would find it gone and the engine make it again, owned by root.
    if ((await localState(info.runDir)) !== 'dead') continue;
    try {
      await emit(removeRunDir(info.name, info.runDir));
    } catch (e) {
      await fail(e);
    }
  }
}

/** Prints an error that does not end the command, in the form jackin.ts prints the last one. */
function errorLine(e: unknown, json: boolean): string {
  const code = e instanceof JackinError ? e.code : 'E_INTERNAL';
  const message = describeError(e);
  return json ? `${inertJson({ error: { code, message } })}\n` : `jackin: ${inertText(message, 1000)} (${code})\n`;
}

async function rmCommand(names: string[], flags: RmFlags): Promise<number> {
  const home = jackinHome();
  const json = flags.json === true;
  let last: unknown = null;
  for (const name of names) {
    try {
      for (const r of await removeInstance(home, name)) await writeAll(process.stdout, removedLine(r, json));
    } catch (e) {
      if (last !== null) await writeAll(process.stderr, errorLine(last, json));
      last = e;
    }
  }
  // The last error is printed by jackin.ts, and gives the exit status.
  if (last !== null) throw last;
  return 0;
}

async function pruneCommand(flags: RmFlags): Promise<number> {
  const json = flags.json === true;
  let failed = false;
  await pruneAll(
    jackinHome(),
    (r) => writeAll(process.stdout, removedLine(r, json)),
    async (e) => {
      failed = true;
      await writeAll(process.stderr, errorLine(e, json));
    },
  );
  return failed ? 1 : 0;
}

export function registerRmCommand(program: Command, setStatus: SetStatus): void {
  program
    .command('rm')
    .description('remove instances that ended: their stopped container (from jackin run --image), its record, and their run directory')
    .argument('<instance...>', 'instance names')
    .option('--json', 'print one JSON object per thing removed: {name, what: container|record|run-dir, engine?, path?}')
    .addHelpText(
      'after',
      `
A running instance is refused (E_INSTANCE_RUNNING: stop it with jackin stop NAME); an unknown name is
E_NO_INSTANCE. One line per thing removed. The run directory holds capsule.log: jackin logs NAME reads it first.

Examples:
  jackin rm build
  jackin rm build agent --json`,
    )
    .action(async (names: string[], flags: RmFlags) => setStatus(await rmCommand(names, flags)));
}

export function registerPruneCommand(program: Command, setStatus: SetStatus): void {
  program
    .command('prune')
    .description('remove everything dead: stopped containers jackin started, records of containers that are gone, stale run directories')
    .option('--json', 'print one JSON object per thing removed: {name, what: container|record|run-dir, engine?, path?}')
    .addHelpText(
      'after',
      `
Only what is dead: a live capsule, a running container and a socket of another user's are never touched,
nothing is killed, and a container is removed only when jackin's label on it names it. A run directory of
a capsule that ended cleanly (capsule.log alone) is kept for jackin logs; jackin rm NAME removes it.

Examples:
  jackin prune
  jackin prune --json`,
    )
    .action(async (flags: RmFlags) => setStatus(await pruneCommand(flags)));
}
