/**
 * `jackin run --image IMAGE`: the agent in a container, with no jackin in the image. Starts the container
 * (argv from host/instances/container-run-argv.ts), waits for its capsule's socket, attaches, and removes the
 * container once the program has exited. `--dry-run` prints the engine command instead. The engine runs with
 * the operator's environment as it is: the container's variables reach it by name or in a private env file
 * (host/instances/private-env-file.ts), never in its environment.
 */
import { chownSync, existsSync, lstatSync, mkdirSync, realpathSync, rmSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { PACKAGE_ROOT } from '../package-root.ts';
import { Option, type Command } from './commander.ts';
import { JackinError } from '../errors.ts';
import {
  CONTAINER_LABEL,
  containerRunArgv,
  explainStartFailure,
  DEFAULT_IMAGE_PATH,
  terminalIdentityEnv,
  type CapsuleSource,
  type ContainerRunSpec,
} from '../host/instances/container-run-argv.ts';
import { envFileText, privateParent, writePrivateEnvFile, type PrivateEnvFile } from '../host/instances/private-env-file.ts';
import { collectEnv, parseVolume } from '../host/instances/run-image-options.ts';
import { composeRecipe, devcontainerRecipe, RECIPE_FORMATS, type RecipeFormat } from '../host/instances/recipes.ts';
import { socketAnswers } from '../host/instances/instances.ts';
import { CONTAINER_ENGINES, containerState, detectEngine, engineCommand, type ContainerEngine } from '../transport/container-engine.ts';
import { removeContainerRecord, writeContainerRecord } from '../transport/container-record.ts';
import { formatArgv } from '../transport/exec-args.ts';
import { SOCKET_HANDOVER_GRACE_MS, startRelay, type Selection } from '../transport/select.ts';
import { acrossVmBoundary, boundaryReason, rememberBoundary } from '../transport/socket-boundary.ts';
import { checkInstanceName, instanceRunDir, runDirSocketPath } from '../transport/instance-paths.ts';
import { connectSocketTransport, isPermissionDenied, socketTransport } from '../transport/socket.ts';
import { waitForSocket } from '../transport/socket-wait.ts';
import { inertText } from '../ui/inert-text.ts';
import { startContainerReaper } from '../host/instances/container-reaper.ts';
import { hostLibraries, ptyBinary } from '../host/instances/host-libraries.ts';
import { imageFacts } from '../host/instances/image-facts.ts';
import { CAPSULE_SOURCES, capsuleFromEnv, chooseCapsule, type CapsuleChoice, type CapsuleKind } from '../host/instances/capsule-choice.ts';
import { ensureRuntime, type RuntimeArch } from '../host/runtime/runtime.ts';
import { writeAll } from './command-kit.ts';
import type { Connect, Transport } from '../transport/transport.ts';

/** A container start: the engine creates it (~0.3 s), then Node and the PTY start inside (~0.3 s), or an image pull. */
const CONTAINER_START_TIMEOUT_MS = 60_000;
const SOCKET_POLL_MS = 50;
/** How often the engine is asked whether the container is still running while the socket is awaited. */
const STATE_POLL_MS = 500;
/** How long a container whose program exited may take to stop before jackin leaves it (see stateAfterSession). */
const CONTAINER_STOP_WAIT_MS = 10_000;
/**
 * How long a lost connection waits for the engine to notice that the container stopped. Docker marks a
 * container killed from outside as exited some time after its capsule's socket closed: asked at once (in a
 * CI run under load), it still said running.
 */
const LOST_STOP_WAIT_MS = 3_000;
const STOP_POLL_MS = 100;
/** Lines of the container's log quoted when its capsule fails to start. */
const LOG_TAIL_LINES = 5;

export interface RunImageFlags {
  image?: string;
  engine?: ContainerEngine;
  name?: string;
  workspace?: string;
  user?: string;
  capsule?: CapsuleKind;
  dryRun?: boolean;
  format?: RecipeFormat;
  /** -d: start, wait for the capsule, print the name, do not attach. */
  detach?: boolean;
  verbose?: boolean;
  env?: string[];
  envFile?: string[];
  volume?: string[];
  network?: string;
  engineArg?: string[];
}

const collect = (value: string, previous: string[] | undefined): string[] => [...(previous ?? []), value];

/** What `-v` stands for with no mount after it (at the end, or before another option or `--`): see refuseOldVerbose. */
const V_WITHOUT_MOUNT = '\0-v';

/**
 * `-v, --volume`, as docker's. Parsed as taking an optional value (the help still shows it required) so that
 * a `-v` written in its old meaning, `--verbose`, and followed by nothing, another option or `--`, reaches
 * refuseOldVerbose instead of taking the next word (`--`, `--dry-run`) as a mount.
 */
function volumeOption(): Option {
  const option = new Option(
    '-v, --volume <host:container[:ro|rw]>',
    'with --image: mount an existing host path (repeatable; a relative path is taken from here). Was --verbose before: use --verbose',
  )
    .argParser(collect)
    .preset(V_WITHOUT_MOUNT);
  option.required = false;
  option.optional = true;
  return option;
}

/**
 * For one release `-v` that is clearly the old `-v, --verbose` is refused with what to write instead: a
 * `-v` with no mount after it, or with a word that is neither HOST:CONTAINER nor an existing path
 * (`jackin run -v bash`). Nothing has started.
 */
export function refuseOldVerbose(volumes: readonly string[] | undefined, cwd: string): void {
  for (const v of volumes ?? []) {
    const old = v === V_WITHOUT_MOUNT || v.startsWith('-') || (!v.includes(':') && !existsSync(resolve(cwd, v)));
    if (!old) continue;
    const after = v === V_WITHOUT_MOUNT ? 'with no mount after it' : `with ${JSON.stringify(v)}, which is not HOST:CONTAINER`;
    throw new JackinError(
      'E_USAGE',
      `-v is now --volume HOST:CONTAINER (as docker's), and was given ${after}: for diagnostics use --verbose; nothing was started`,
    );
  }
}

/**
 * `--dry-run` after the program but before a `--` (`jackin run --image X prog --dry-run -- bash`) was meant
 * for jackin, which takes its options before the program: refused, so nothing starts. `raw` is what followed
 * `run` on the command line: in the program's words commander keeps no trace of a `--` written before them
 * (`jackin run -- prog --dry-run -- x`, where `--dry-run` is the program's).
 */
export function refuseLateDryRun(raw: readonly string[], dryRun: boolean, command: readonly string[]): void {
  const end = raw.indexOf('--');
  if (dryRun || end === -1 || !raw.slice(0, end).includes('--dry-run')) return;
  throw new JackinError(
    'E_USAGE',
    `--dry-run comes after the program (${JSON.stringify(command[0] ?? '')}) and before --: put jackin's options before the program, and the program after --; nothing was started`,
  );
}

/** Adds the container options to `jackin run`. */
export function addRunImageOptions(cmd: Command): Command {
  return cmd
    .option('--image <image>', 'run the program in a new container of this image (no jackin needed in it)')
    .addOption(
      new Option('--engine <engine>', 'with --image: container engine (default: whichever of docker and podman is installed)').choices(CONTAINER_ENGINES),
    )
    .option('-u, --user <user>', "with --image: user in the container (default: yours, uid:gid; as root, the image's)")
    .addOption(
      new Option(
        '--capsule <source>',
        "with --image: lend this host's Node and jackin (host: the default on Linux for an image of this host's architecture), " +
          "a Linux runtime of the image's architecture from the npm registry, kept in jackin's cache (runtime: the default elsewhere), " +
          "or use the image's own jackin-capsule (image)",
      ).choices(CAPSULE_SOURCES),
    )
    .option(
      '-e, --env <NAME[=VALUE]>',
      "with --image: a variable for the program (repeatable); NAME alone takes this environment's value. The value goes to the engine by name or in a private env file, never on a command line or in the engine's environment",
      collect,
    )
    .option('--env-file <file>', 'with --image: variables from a file of NAME=VALUE or NAME lines (repeatable; # comments)', collect)
    .addOption(volumeOption())
    .option('--network <net>', "with --image: the container's network (none, host, a network name; default: the engine's)")
    .option(
      '--engine-arg <arg>',
      'with --image: one more argument for `ENGINE run`, placed before the image (repeatable; --engine-arg=--cap-add=SYS_PTRACE)',
      collect,
    )
    .option('--dry-run', 'with --image: print the engine command and exit')
    .addOption(
      new Option(
        '--format <format>',
        "with --dry-run: print the engine command (sh, the default), a compose file (compose) or a devcontainer.json (devcontainer), with this host's paths",
      ).choices(RECIPE_FORMATS),
    );
}

/** The container options mean nothing to a local `jackin run`: refuse them rather than ignore them. */
export function refuseImageOnlyFlags(flags: RunImageFlags): void {
  const given = (['engine', 'user', 'capsule', 'env', 'envFile', 'volume', 'network', 'engineArg', 'dryRun', 'format'] as const).filter(
    (k) => flags[k] !== undefined,
  );
  if (given.length > 0) {
    const names = given.map((k) => `--${k.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`).join(', ');
    throw new JackinError(
      'E_USAGE',
      `${names} ${given.length === 1 ? 'applies' : 'apply'} only with --image: add --image IMAGE, or leave ${given.length === 1 ? 'it' : 'them'} out`,
    );
  }
}

/** Is this Node a glibc build (what a Linux container can run, with glibc's loader and libraries)? */
function hostGlibc(): boolean {
  const header = (process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined)?.header;
  return typeof header?.glibcVersionRuntime === 'string';
}

/** The host's Node and package, and the loader and libraries they need so that any image runs them. */
async function hostCapsule(imagePath: string): Promise<CapsuleSource> {
  const node = realpathSync(process.execPath);
  const packageRoot = realpathSync(PACKAGE_ROOT);
  const pty = ptyBinary(packageRoot);
  const libraries = await hostLibraries(pty === null ? [node] : [node, pty]);
  return { kind: 'host', node, packageRoot, imagePath, ...(libraries !== null ? { libraries } : {}) };
}

/**
 * The runtime for `arch` from jackin's cache, assembled from the npm registry when not there yet (one line
 * per step), and, when this is a Linux glibc host of that architecture, the host's loader and libraries for
 * its Node and PTY binary, so that any image runs it; otherwise it runs on the image's glibc.
 */
async function runtimeCapsule(arch: RuntimeArch, lendLibraries: boolean, imagePath: string, say: (line: string) => void): Promise<CapsuleSource> {
  const runtime = await ensureRuntime(arch, { say });
  const libraries = lendLibraries ? await hostLibraries([runtime.node, runtime.ptyBinary]) : null;
  return {
    kind: 'runtime',
    node: runtime.node,
    packageRoot: runtime.packageRoot,
    imagePath,
    arch: runtime.arch,
    root: runtime.root,
    ...(libraries !== null ? { libraries } : {}),
  };
}

/** What --verbose says of the capsule lent. */
function capsuleLine(capsule: CapsuleSource): string {
  if (capsule.kind === 'image') return "the image's own jackin-capsule";
  const libs = capsule.libraries !== undefined ? "with this host's loader and libraries" : "on the image's glibc";
  return capsule.kind === 'host' ? `this host's Node and jackin, ${libs}` : `the linux-${capsule.arch} runtime in ${capsule.root}, ${libs}`;
}

async function capsuleFor(choice: CapsuleChoice, imagePath: string, say: (line: string) => void): Promise<CapsuleSource> {
  switch (choice.kind) {
    case 'host':
      return hostCapsule(imagePath);
    case 'runtime':
      return runtimeCapsule(choice.arch, choice.lendLibraries, imagePath, say);
    case 'image':
      return { kind: 'image' };
    default: {
      const never: never = choice;
      throw new TypeError(`unexpected capsule ${JSON.stringify(never)}`);
    }
  }
}

/** The default instance name: the image's repository name (`ghcr.io/acme/agent:1` → `agent`). */
function imageInstanceName(image: string): string {
  const last = image.split('@')[0]!.split('/').at(-1) ?? '';
  const base = last
    .split(':')[0]!
    .replace(/[^A-Za-z0-9._-]/g, '-')
    .replace(/^[-.]+/, '');
  return base.length > 0 ? base.slice(0, 64) : 'agent';
}

/** The container's last log lines, one line, for an error message. */
async function logTail(engine: ContainerEngine, name: string): Promise<string> {
  try {
    const out = await engineCommand(engine, ['logs', name], undefined, { both: true });
    // The container's words: made inert before they reach the operator's terminal.
    return inertText(
      out
        .split('\n')
        .map((l) => l.trim())
        .filter((l) => l.length > 0)
        .slice(-LOG_TAIL_LINES)
        .join(' | '),
      400,
    );
  } catch (e) {
    return e instanceof Error ? e.message : String(e);
  }
}

/** A stopped container of that name that we started is removed; anything else of that name is refused. */
async function clearOldContainer(engine: ContainerEngine, name: string): Promise<void> {
  const state = await containerState(engine, name);
  if (state === null) return;
  const label = (
    await engineCommand(engine, ['inspect', '--type', 'container', '--format', `{{index .Config.Labels "${CONTAINER_LABEL}"}}`, name]).catch(() => '')
  ).trim();
  if (label !== name) {
    throw new JackinError(
      'E_CONTAINER_EXISTS',
      `a container named ${name} already exists and was not started by jackin: pick another --name or remove it (${engine} rm ${name})`,
    );
  }
  if (state === 'running') {
    throw new JackinError(
      'E_INSTANCE_EXISTS',
      `instance ${name} is already running in a container: attach with \`jackin attach ${name}\`, or \`jackin stop ${name}\` first`,
    );
  }
  await engineCommand(engine, ['rm', '-f', name]);
}

export type AttachFn = (selection: Selection, name: string, connect: () => Promise<Transport>, explainLost: () => Promise<string | null>) => Promise<number>;

/** `plain`: jackin has no terminal (run-command.ts): the capsule relays the program's bytes as they are (`serve --plain`). */
export async function runImageCommand(command: string[], flags: RunImageFlags, home: string, attach: AttachFn, plain = false): Promise<number> {
  const image = flags.image!;
  if (flags.format !== undefined && flags.dryRun !== true)
    throw new JackinError('E_USAGE', '--format applies only with --dry-run: add --dry-run, or leave it out');
  const say = (line: string) => process.stderr.write(`jackin: ${line}\n`);
  const engineChoice = flags.engine !== undefined ? { engine: flags.engine, reason: '--engine was given' } : await detectEngine();
  const engine = engineChoice.engine;
  if (flags.engine === undefined && flags.dryRun !== true) say(`using ${engine}: ${engineChoice.reason}`);
  const name = checkInstanceName(flags.name ?? imageInstanceName(image));
  const workspace = resolve(flags.workspace ?? process.cwd());
  const runDir = instanceRunDir(home, name);
  const asked = flags.capsule ?? capsuleFromEnv(process.env);
  // The image's own jackin-capsule needs nothing of it; a lent Node needs its architecture and PATH.
  // An image not here yet is pulled first (not for --dry-run, which starts nothing): a guess could lend a
  // Node of the wrong architecture.
  const inspected = asked === 'image' ? { arch: null, path: DEFAULT_IMAGE_PATH } : await imageFacts(engine, image, { pullMissing: flags.dryRun !== true, say });
  if (asked !== 'image' && inspected.arch === null && flags.verbose === true)
    say(
      `image ${image} is not here (${flags.dryRun === true ? 'not pulled for --dry-run' : 'its pull failed'}): taking this host's architecture (${process.arch}) for it`,
    );
  const choice = chooseCapsule({
    asked,
    platform: process.platform,
    glibc: hostGlibc(),
    hostArch: process.arch,
    imageArch: inspected.arch,
    image,
  });
  if (flags.verbose === true && choice.kind === 'runtime')
    say(
      `capsule: the linux-${choice.arch} runtime (image ${image}: ${inspected.arch !== null ? `linux/${inspected.arch}` : 'not here yet'}; this host: ${process.platform}/${process.arch})`,
    );
  const capsule = await capsuleFor(choice, inspected.path, say);
  if (flags.verbose === true) say(`capsule: ${capsuleLine(capsule)}`);
  // Bad forms are refused before anything starts, naming the variable or the line, never a value; a path
  // written in the workspace that leads out of it through a symlink is refused.
  const cwd = process.cwd();
  const env = collectEnv(flags.envFile ?? [], flags.env ?? [], cwd, process.env, workspace);
  const volumes = (flags.volume ?? []).map((v) => parseVolume(v, cwd, workspace));
  // The operator's terminal identity, by name, when set here and not given: the program chooses colours,
  // hyperlinks and notifications from it (TERM is passed with its value, below).
  const given = new Set(env.map((e) => e.name));
  const identity = terminalIdentityEnv(process.env).filter((e) => !given.has(e.name));
  const passed = [...identity.map((e) => ({ ...e, from: 'your terminal' })), ...env];
  // The engine's environment is the operator's: a value it already holds goes by name, any other in the file.
  const byName = passed.filter((e) => process.env[e.name] === e.value);
  const inFile = passed.filter((e) => process.env[e.name] !== e.value);
  const uid = typeof process.getuid === 'function' ? process.getuid() : null;
  const gid = typeof process.getgid === 'function' ? process.getgid() : null;
  const user = flags.user ?? (uid !== null && uid !== 0 && gid !== null ? `${uid}:${gid}` : null);
  const spec: ContainerRunSpec = {
    engine,
    name,
    image,
    runDir,
    workspace,
    program: command.length > 0 ? command : ['/bin/sh'],
    user,
    term: process.env['TERM'] || 'xterm-256color',
    capsule,
    envNames: passed.map((e) => e.name),
    volumes,
    ...(flags.network !== undefined ? { network: flags.network } : {}),
    engineArgs: flags.engineArg ?? [],
    // The operator's size now; a printed command (--dry-run) is run later, in another terminal, so it has none.
    ...(process.stdout.isTTY === true && flags.dryRun !== true ? { rows: process.stdout.rows, cols: process.stdout.columns } : {}),
  };
  const argv = containerRunArgv(spec);
  if (flags.dryRun === true) {
    // The values stay here: the printed command reads each variable from the environment it runs in. A
    // compose file or devcontainer.json holds the values typed on jackin's own command line (--env NAME=VALUE).
    const format = flags.format ?? 'sh';
    const typed = new Map(
      format === 'sh' ? [] : env.filter((e) => e.from === '--env' && process.env[e.name] !== e.value).map((e) => [e.name, e.value] as const),
    );
    const fromHere = env.filter((e) => process.env[e.name] !== e.value && !typed.has(e.name)).map((e) => e.name);
    if (fromHere.length > 0)
      say(
        `the ${format === 'sh' ? 'command' : 'file'} passes ${fromHere.join(', ')} by name: set ${fromHere.length === 1 ? 'it' : 'them'} in the environment that runs it`,
      );
    const places = { home: homedir(), workspace, values: typed };
    if (format === 'compose') process.stdout.write(composeRecipe(argv, places));
    else if (format === 'devcontainer') process.stdout.write(devcontainerRecipe(argv, places));
    else process.stdout.write(`mkdir -p -m 700 ${formatArgv([runDir])}\n${formatArgv(argv)}\n`);
    return 0;
  }

  // A value no env file can carry is refused before anything starts.
  const envText = inFile.length > 0 ? envFileText(inFile, process.env) : null;
  try {
    if (!lstatSync(workspace).isDirectory()) throw new Error('not a directory');
  } catch (cause) {
    throw new JackinError('E_USAGE', `workspace ${workspace} is not a directory: pass an existing --workspace`, { cause });
  }
  if (await socketAnswers(runDirSocketPath(runDir))) {
    throw new JackinError('E_INSTANCE_EXISTS', `instance ${name} is already running: attach with \`jackin attach ${name}\` or pick another --name`);
  }
  await clearOldContainer(engine, name);
  mkdirSync(runDir, { recursive: true, mode: 0o700 });
  // No container runs in it now: a socket or capsule.json left there (a container killed with -9) is stale.
  // Gone before the new one starts, so the ones seen next are its capsule's (socket-boundary.ts reads them).
  for (const stale of [runDirSocketPath(runDir), join(runDir, 'capsule.json')]) rmSync(stale, { force: true });
  // Owner fix: as root, a container user given by number gets the run directory, or its capsule could not
  // create the socket in it (a root capsule hands its files to the directory's owner instead).
  const numeric = /^(\d+)(?::(\d+))?$/.exec(user ?? '');
  if (uid === 0 && numeric !== null && numeric[1] !== '0') chownSync(runDir, Number(numeric[1]), Number(numeric[2] ?? numeric[1]));
  writeContainerRecord(home, name, { engine, container: name, image });
  // The private env file exists only while the engine starts the container (see private-env-file.ts).
  let envFile: PrivateEnvFile | null = null;
  try {
    if (envText !== null) envFile = writePrivateEnvFile(envText, privateParent([tmpdir(), home], [workspace, runDir, ...volumes.map((v) => v.host)]));
    const startArgv = containerRunArgv({
      ...spec,
      ...(plain ? { plain: true } : {}),
      envNames: byName.map((e) => e.name),
      ...(envFile !== null ? { envFile: { path: envFile.path, names: inFile.map((e) => e.name) } } : {}),
    });
    if (flags.verbose === true) say(formatArgv(startArgv));
    await engineCommand(engine, startArgv.slice(1), CONTAINER_START_TIMEOUT_MS);
  } catch (e) {
    removeContainerRecord(home, name);
    throw new JackinError('E_CONTAINER_START', `could not start the container: ${e instanceof Error ? e.message : String(e)}`, { cause: e });
  } finally {
    envFile?.remove();
  }

  const socket = runDirSocketPath(runDir);
  const sock = await waitForCapsule(engine, name, socket, { capsule, image, home }).catch(async (e: unknown) => {
    await engineCommand(engine, ['rm', '-f', name]).catch(() => undefined);
    removeContainerRecord(home, name);
    throw e;
  });
  // From now on the container is removed when its program ends, whoever is attached then (or nobody).
  startContainerReaper(engine, name, home, name);
  if (flags.detach === true) {
    // The capsule answers (or is up beyond a VM boundary): the name, one line, as `docker run -d` prints the id.
    if (sock !== 'boundary') sock.destroy();
    await writeAll(process.stdout, `${name}\n`);
    return 0;
  }
  // Across a VM boundary the socket never connects from here: every connection goes through the engine's exec.
  const relay = { kind: engine, target: name } as const;
  const connect: Connect = async (o) => {
    if (sock === 'boundary') return (await startRelay(relay, boundaryReason(socket))).transport;
    return connectSocketTransport(socket, o);
  };
  const selection: Selection =
    sock === 'boundary'
      ? await startRelay(relay, `${boundaryReason(socket)}; going through ${engine} exec`)
      : { transport: socketTransport(sock, socket), choice: 'socket', reason: `jackin run --image started container ${name} (${engine})` };
  // Killed from outside (kill -9, an OOM kill, a host shutdown), the container's status is not the
  // program's: the one line says that the container stopped, in place of the lost connection.
  let stoppedLine: string | null = null;
  const explainLost = async (): Promise<string | null> => {
    const now = await stateAfterSession(engine, name, socket, LOST_STOP_WAIT_MS);
    if (now === null || now === 'running') return null;
    const code = (await engineCommand(engine, ['inspect', '--type', 'container', '--format', '{{.State.ExitCode}}', name]).catch(() => '')).trim();
    stoppedLine = `container ${name} stopped (${engine}: ${now}${code !== '' ? `, exit code ${code}` : ''})`;
    return stoppedLine;
  };
  const status = await attach(selection, name, connect, explainLost);
  // The program has exited (not a detach): its container has nothing left to run.
  const state = await stateAfterSession(engine, name, socket, CONTAINER_STOP_WAIT_MS);
  if (state !== null && state !== 'running') {
    const code = (await engineCommand(engine, ['inspect', '--type', 'container', '--format', '{{.State.ExitCode}}', name]).catch(() => '')).trim();
    if (stoppedLine === null && code !== '' && Number(code) !== status) say(`container ${name} stopped (${engine}: ${state}, exit code ${code})`);
    await engineCommand(engine, ['rm', '-f', name]).catch(() => undefined);
    removeContainerRecord(home, name);
  }
  return status;
}

/**
 * The container's state once the session ended. A capsule whose program exited is still finishing when the
 * host has its status (it waits for the host to close, then exits, and the engine notices): the container
 * is awaited until it stops, up to waitMs, so it is removed, not left behind stopped. A capsule that still
 * answers on its socket (a detach) is running on, and is not waited for.
 */
async function stateAfterSession(engine: ContainerEngine, name: string, socket: string, waitMs: number): Promise<string | null> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    const state = await containerState(engine, name);
    if (state !== 'running' || Date.now() > deadline || (await socketAnswers(socket))) return state;
    await sleep(STOP_POLL_MS);
  }
}

/**
 * Polls the socket until the capsule answers; fails at once, with the reason, when the container stops.
 * 'boundary' when the capsule is up but its socket does not connect from this host (socket-boundary.ts):
 * the session then goes through the engine's exec, and the instance remembers it.
 */
async function waitForCapsule(
  engine: ContainerEngine,
  name: string,
  socket: string,
  { capsule, image, home }: { capsule: CapsuleSource; image: string; home: string },
): Promise<Socket | 'boundary'> {
  let nextState = Date.now() + STATE_POLL_MS;
  let handover = Infinity;
  let last: JackinError | undefined;
  const boundary = new JackinError('E_SOCKET_UNAVAILABLE', boundaryReason(socket));
  try {
    return await waitForSocket(socket, {
      timeoutMs: CONTAINER_START_TIMEOUT_MS,
      pollMs: SOCKET_POLL_MS,
      refused: (e) => {
        if (isPermissionDenied(e)) handover = Math.min(handover, Date.now() + SOCKET_HANDOVER_GRACE_MS);
        if (isPermissionDenied(e) && Date.now() > handover) throw new JackinError('E_SOCKET_PERMISSION', e.message, { cause: e });
        last = e;
      },
      check: async () => {
        if (last !== undefined && (await acrossVmBoundary(socket, last))) throw boundary;
        if (Date.now() < nextState) return;
        nextState = Date.now() + STATE_POLL_MS;
        const state = await containerState(engine, name);
        if (state !== 'running' && state !== 'created') {
          const tail = await logTail(engine, name);
          throw (
            explainStartFailure(tail, capsule, image) ??
            new JackinError('E_CAPSULE_START', `container ${name} stopped (${state ?? 'gone'}) before its capsule opened ${socket}${tail ? `: ${tail}` : ''}`)
          );
        }
      },
      timedOut: () =>
        new JackinError(
          'E_CAPSULE_START',
          `the capsule in container ${name} did not open ${socket} within ${CONTAINER_START_TIMEOUT_MS} ms (see ${engine} logs ${name})`,
        ),
    });
  } catch (e) {
    if (e !== boundary) throw e;
    await rememberBoundary(home, name, socket);
    return 'boundary';
  }
}
