/**
 * Which container engine to use when the operator did not say: docker or podman, whichever is installed,
 * and the reason, which the CLI prints. Also the engine's own one-shot commands (inspect, logs, rm) that
 * `jackin run --image` and `jackin stop` need, each a bounded child process.
 */
import { execFile } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';
import { JackinError } from '../errors.ts';
import { inertText } from '../ui/inert-text.ts';
import { engineReason } from './engine-reason.ts';

export const CONTAINER_ENGINES = ['docker', 'podman'] as const;
export type ContainerEngine = (typeof CONTAINER_ENGINES)[number];

/** A docker client with no reachable engine answers `docker version` with an error within this. */
const ENGINE_PROBE_TIMEOUT_MS = 5_000;
/** inspect/logs/rm/stop are quick; `stop` waits for the container's own grace period (10 s) at most. */
const ENGINE_COMMAND_TIMEOUT_MS = 30_000;

/** True when `program` is an executable file in one of PATH's directories. */
export function onPath(program: string, env: NodeJS.ProcessEnv = process.env): boolean {
  for (const dir of (env['PATH'] ?? '').split(delimiter)) {
    if (dir === '') continue;
    try {
      accessSync(join(dir, program), constants.X_OK);
      return true;
    } catch {
      // not here
    }
  }
  return false;
}

export interface EngineChoice {
  engine: ContainerEngine;
  reason: string;
}

/**
 * Pure: the engine from what is installed. With both, docker wins unless its engine does not answer (a
 * docker client alone, as on machines where only Podman runs containers).
 */
export async function chooseEngine(installed: readonly ContainerEngine[], dockerAnswers: () => Promise<boolean>): Promise<EngineChoice> {
  const docker = installed.includes('docker');
  const podman = installed.includes('podman');
  if (docker && podman) {
    if (await dockerAnswers())
      return { engine: 'docker', reason: "docker and podman are both installed and docker's engine answers (pass --engine podman for podman)" };
    return { engine: 'podman', reason: 'docker is installed but its engine does not answer, podman is installed' };
  }
  if (docker) return { engine: 'docker', reason: 'docker is installed (podman is not)' };
  if (podman) return { engine: 'podman', reason: 'podman is installed (docker is not)' };
  throw new JackinError(
    'E_ENGINE_MISSING',
    'neither docker nor podman is installed (or on PATH): install one (apt-get install podman, or Docker Engine), or pass --engine',
  );
}

/**
 * Runs one engine command; resolves with stdout (and stderr after it with `both`: `logs` replays the
 * container's stderr on its own), rejects with the engine's reason from its stderr (engine-reason.ts).
 */
export function engineCommand(
  engine: ContainerEngine,
  args: readonly string[],
  timeoutMs = ENGINE_COMMAND_TIMEOUT_MS,
  { both = false, env }: { both?: boolean; env?: Readonly<Record<string, string>> } = {},
): Promise<string> {
  return new Promise((resolve, reject) => {
    // `env`: added to the operator's environment (tests put a stand-in engine first on PATH). Never a container's
    // variables: the engine runs as the operator, and a variable in its environment steers it (private-env-file.ts).
    const options = {
      timeout: timeoutMs,
      maxBuffer: 4 * 1024 * 1024,
      encoding: 'utf8' as const,
      ...(env !== undefined ? { env: { ...process.env, ...env } } : {}),
    };
    execFile(engine, [...args], options, (err, stdout, stderr) => {
      if (err === null) return resolve(both ? stdout + stderr : stdout);
      const why =
        (err as NodeJS.ErrnoException).code === 'ENOENT'
          ? `${engine} is not installed or not on PATH`
          : (engineReason(stderr) ?? (err.killed === true ? `no answer within ${timeoutMs} ms` : inertText(err.message, 400)));
      reject(new JackinError('E_ENGINE_COMMAND', `${engine} ${args[0] ?? ''} failed: ${why}`, { cause: err }));
    });
  });
}

/** The engines installed here, and the choice among them (asking docker's engine only when both are). */
export function detectEngine(env: NodeJS.ProcessEnv = process.env): Promise<EngineChoice> {
  const installed = CONTAINER_ENGINES.filter((e) => onPath(e, env));
  return chooseEngine(installed, () =>
    engineCommand('docker', ['version', '--format', '{{.Server.Version}}'], ENGINE_PROBE_TIMEOUT_MS).then(
      () => true,
      () => false,
    ),
  );
}

/** The container's state (`running`, `exited`, …), or null when there is no container of that name. */
export async function containerState(engine: ContainerEngine, name: string, env?: Readonly<Record<string, string>>): Promise<string | null> {
  try {
    return (
      await engineCommand(engine, ['inspect', '--type', 'container', '--format', '{{.State.Status}}', name], undefined, env !== undefined ? { env } : {})
    ).trim();
  } catch {
    return null;
  }
}

/** What an engine said of a container name: its state, that it has none of that name, or that it could not be asked. */
export type ContainerLookup = { kind: 'found'; state: string } | { kind: 'absent' } | { kind: 'unknown'; why: string };

/** Docker says "No such container" / "No such object", Podman "no such container" / "no such object". */
const NO_SUCH_CONTAINER = /no such (container|object)/iu;

/**
 * Like containerState, but tells "no container of that name" (the engine answered) from "the engine could
 * not be asked" (not installed, its daemon down): only the first may be reported as a missing instance.
 */
/**
 * Whether kubectl has the pod (`kubectl get pod NAME [-n NS] -o name`, the operator's context and
 * credentials): absent only when kubectl says NotFound; a cluster it cannot reach is unknown.
 */
export function lookupPod(name: string, namespace: string | undefined): Promise<ContainerLookup> {
  const args = ['get', 'pod', name, ...(namespace !== undefined ? ['-n', namespace] : []), '-o', 'name'];
  return new Promise((resolve) => {
    execFile('kubectl', args, { timeout: ENGINE_PROBE_TIMEOUT_MS, maxBuffer: 64 * 1024, encoding: 'utf8' }, (e, _out, stderr) => {
      if (e === null) resolve({ kind: 'found', state: 'running' });
      else if (/\(NotFound\)|pods? ".*" not found/i.test(stderr)) resolve({ kind: 'absent' });
      else resolve({ kind: 'unknown', why: engineReason(stderr) ?? e.message });
    });
  });
}

export async function lookupContainer(engine: ContainerEngine, name: string): Promise<ContainerLookup> {
  try {
    const args = ['inspect', '--type', 'container', '--format', '{{.State.Status}}', name];
    return { kind: 'found', state: (await engineCommand(engine, args, ENGINE_PROBE_TIMEOUT_MS)).trim() };
  } catch (e) {
    const why = e instanceof Error ? e.message : String(e);
    return NO_SUCH_CONTAINER.test(why) ? { kind: 'absent' } : { kind: 'unknown', why };
  }
}

const REMOVE_POLL_MS = 100;

/**
 * `rm -f NAME`, which also succeeds when another removal takes the container away meanwhile: Docker refuses
 * a second `rm` with "removal of container … is already in progress" (`jackin stop` and the `jackin run`
 * whose program it stopped both remove it), and this waits for that one to finish instead.
 */
export async function removeContainer(engine: ContainerEngine, name: string, env?: Readonly<Record<string, string>>): Promise<void> {
  const opts = env !== undefined ? { env } : {};
  try {
    await engineCommand(engine, ['rm', '-f', name], undefined, opts);
  } catch (e) {
    const inProgress = e instanceof Error && /already in progress/i.test(e.message);
    const deadline = Date.now() + ENGINE_COMMAND_TIMEOUT_MS;
    while ((await containerState(engine, name, env)) !== null) {
      if (!inProgress || Date.now() > deadline) throw e;
      await new Promise((r) => setTimeout(r, REMOVE_POLL_MS));
    }
  }
}

/** What `jackin doctor` found of one engine: not installed, installed but not answering, or answering. */
export interface EngineProbe {
  engine: ContainerEngine;
  installed: boolean;
  /** The engine's server version when it answered. */
  version: string | null;
  /** Why it did not answer (its reason from stderr, engine-reason.ts), when installed. */
  problem: string | null;
}

/** The argv that asks an engine for its server's version: it fails when no engine answers. */
function engineVersionArgs(engine: ContainerEngine): string[] {
  return engine === 'docker' ? ['version', '--format', '{{.Server.Version}}'] : ['info', '--format', '{{.Version.Version}}'];
}

/** Asks each installed engine whether it answers, bounded by ENGINE_PROBE_TIMEOUT_MS each (in parallel). */
export function probeEngines(env: NodeJS.ProcessEnv = process.env): Promise<EngineProbe[]> {
  return Promise.all(
    CONTAINER_ENGINES.map(
      (engine) =>
        new Promise<EngineProbe>((resolve) => {
          if (!onPath(engine, env)) return resolve({ engine, installed: false, version: null, problem: null });
          execFile(
            engine,
            engineVersionArgs(engine),
            { timeout: ENGINE_PROBE_TIMEOUT_MS, maxBuffer: 64 * 1024, encoding: 'utf8', env },
            (err, stdout, stderr) => {
              const version = stdout.trim();
              if (err === null && version !== '') return resolve({ engine, installed: true, version, problem: null });
              const said = engineReason(stderr);
              resolve({
                engine,
                installed: true,
                version: null,
                problem: said ?? (err?.killed === true ? `no answer within ${ENGINE_PROBE_TIMEOUT_MS} ms` : (err?.message ?? 'no version')),
              });
            },
          );
        }),
    ),
  );
}
