/**
 * `jackin run [--name N] [--workspace DIR] [-- command...]`: starts a local capsule for a command, detached so
 * the program survives a detach, waits for its socket and attaches to it.
 */
import { spawn } from 'node:child_process';
import { closeSync, constants, fstatSync, lstatSync, mkdirSync, openSync, readSync, unlinkSync } from 'node:fs';
import { basename, join } from 'node:path';
import type { Command } from './commander.ts';
import { errnoOf, JackinError } from '../errors.ts';
import { jackinHome, socketAnswers } from '../host/instances/instances.ts';
import { CAPSULE_NODE_FLAGS } from '../host/instances/container-run-argv.ts';
import { capsuleSizeArgs } from '../host/terminal/tty-size.ts';
import type { Selection } from '../transport/select.ts';
import { checkInstanceName, instanceRunDir, instanceSocketPath, runDirSocketPath } from '../transport/instance-paths.ts';
import { connectSocketTransport, socketTransport } from '../transport/socket.ts';
import { waitForSocket } from '../transport/socket-wait.ts';
import type { Connect, Transport } from '../transport/transport.ts';
import { attachTerminal, loadSessionModules, NO_MOUSE_HELP } from './attach-terminal.ts';
import { addRunImageOptions, refuseImageOnlyFlags, refuseLateDryRun, refuseOldVerbose, runImageCommand, type RunImageFlags } from './run-image-command.ts';
import { checkWorkspace, writeAll, type SetStatus } from './command-kit.ts';
import { PACKAGE_ROOT } from '../package-root.ts';
import { relayTransport, spawnRelay } from '../transport/exec-relay.ts';
import { inertText } from '../ui/inert-text.ts';
import { remoteMachine } from './transport-options.ts';

/** How long `jackin run` waits for a new capsule's socket. Starting Node and a PTY takes ~100 ms. */
const CAPSULE_START_TIMEOUT_MS = 10_000;
const CAPSULE_START_POLL_MS = 20;
/** Lines of capsule.log shown when a capsule fails to start. */
const LOG_TAIL_LINES = 5;

// The bin launcher, not the bundle it loads: that module only exports main() and does nothing when run.
const CAPSULE_ENTRY = join(PACKAGE_ROOT, 'bin', 'jackin-capsule.js');

/** A name usable as an instance directory, from a command path. */
function defaultInstanceName(command: string): string {
  const base = basename(command)
    .replace(/[^A-Za-z0-9._-]/g, '-')
    .replace(/^[-.]+/, '');
  return base.length > 0 ? base.slice(0, 64) : 'capsule';
}

/** The first of `base`, `base-2`, `base-3`… that no live instance uses. */
async function freeInstanceName(home: string, base: string): Promise<string> {
  for (let i = 1; ; i++) {
    const name = i === 1 ? base : `${base}-${i}`;
    if (!(await socketAnswers(instanceSocketPath(home, name)))) return name;
  }
}

/** Bytes read from the end of capsule.log for its last lines. */
const LOG_TAIL_BYTES = 8 * 1024;
/** O_NONBLOCK: a FIFO in capsule.log's place must not make jackin wait for a writer or a reader. */
const LOG_OPEN_FLAGS = constants.O_NOFOLLOW | constants.O_NONBLOCK;

function logTail(logPath: string): string {
  let fd: number | undefined;
  try {
    fd = openSync(logPath, constants.O_RDONLY | LOG_OPEN_FLAGS);
    const st = fstatSync(fd);
    if (!st.isFile()) return '';
    const buf = Buffer.alloc(Math.min(st.size, LOG_TAIL_BYTES));
    const n = readSync(fd, buf, 0, buf.length, Math.max(0, st.size - buf.length));
    const lines = buf
      .subarray(0, n)
      .toString('utf8')
      .split('\n')
      .map((l) => l.trimEnd())
      .filter((l) => l.length > 0);
    return lines.slice(-LOG_TAIL_LINES).join(' | ');
  } catch {
    return '';
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/**
 * capsule.log, opened for the capsule to append to. The run directory may have been a container's before
 * (the same instance name, `jackin run --image`), and a container can leave anything in it: a symlink to a
 * file of the operator's, a FIFO, a device. Such an entry is removed and a fresh 0600 file made; the log is
 * never opened through a symlink, and only a regular file is kept.
 */
function openCapsuleLog(logPath: string): number {
  try {
    const st = lstatSync(logPath);
    if (!st.isFile() || st.nlink !== 1) unlinkSync(logPath);
  } catch (e) {
    if (errnoOf(e) !== 'ENOENT')
      throw new JackinError('E_RUN_DIR', `cannot replace ${logPath}: ${e instanceof Error ? e.message : String(e)}; remove it`, { cause: e });
  }
  let fd: number;
  try {
    fd = openSync(logPath, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | LOG_OPEN_FLAGS, 0o600);
  } catch (e) {
    throw new JackinError('E_RUN_DIR', `cannot open ${logPath} (${errnoOf(e) ?? String(e)}): something replaced it while jackin made it; remove it`, {
      cause: e,
    });
  }
  if (!fstatSync(fd).isFile()) {
    closeSync(fd);
    throw new JackinError('E_RUN_DIR', `${logPath} is not a regular file; remove it`);
  }
  return fd;
}

interface RunFlags extends RunImageFlags {
  name?: string;
  workspace?: string;
  verbose?: boolean;
  /** false with --no-mouse. */
  mouse?: boolean;
  ssh?: string;
}

/** What `jackin run --ssh HOST` starts with no command: the remote user's shell. */
const REMOTE_SHELL = ['sh', '-c', 'exec "${SHELL:-/bin/sh}"'];

/**
 * `jackin run --ssh HOST`: the capsule runs on that machine (src/host/instances/remote-capsule.ts), detached
 * there so it outlives the connection, and this terminal attaches to it through an exec relay over ssh.
 */
async function runRemote(target: string, command: string[], flags: RunFlags, modules: ReturnType<typeof loadSessionModules>, plain: boolean): Promise<number> {
  const remote = remoteMachine(target);
  const argv = command.length > 0 ? command : REMOTE_SHELL;
  const base = flags.name !== undefined ? checkInstanceName(flags.name) : defaultInstanceName(command.length > 0 ? argv[0]! : 'shell');
  // Everything that may ask the operator (ssh's host key or password question) happens here, before a
  // session takes the terminal over.
  // The remote's browser and clipboard are no use to the operator (none there, or not theirs): the program's
  // become jackin's, so its login links are offers opened here and its copies are copy offers, as in a
  // container (serve --browser --clipboard).
  const serveArgs = [...capsuleSizeArgs(process.stdout), ...(plain ? ['--plain'] : []), '--browser', '--clipboard', '--', ...argv];
  const name = await remote.start(base, flags.name === undefined, flags.workspace ?? '', serveArgs);
  if (flags.detach === true) {
    await writeAll(process.stdout, `${inertText(name, 128)}\n`);
    return 0;
  }
  const relay = await remote.relayArgv(checkInstanceName(name));
  const connect = async (): Promise<Transport> => relayTransport(await spawnRelay(relay));
  const selection: Selection = { transport: await connect(), choice: 'ssh', reason: `jackin run --ssh started capsule ${name} on ${target}` };
  return await attachTerminal(modules, selection, name, flags.verbose === true, { noMouse: flags.mouse === false, connect, plain });
}

/**
 * The `jackin run --image` arguments for the copied jackin on the remote: every container option as given
 * (paths are the remote's), detached, and variables by name only: a value typed here would be on the
 * remote's command line (`ps` there), so `-e NAME=VALUE` and `--env-file` are refused; the remote jackin
 * takes each named variable from its own environment, as a local one does.
 */
export function remoteImageArgs(command: readonly string[], flags: RunImageFlags & { verbose?: boolean }): string[] {
  const args = ['run', '--image', flags.image!, '-d'];
  if (flags.envFile !== undefined && flags.envFile.length > 0) {
    throw new JackinError(
      'E_USAGE',
      "--env-file with --ssh: its values would be on the remote's command line; set them in the remote's environment and pass --env NAME",
    );
  }
  for (const e of flags.env ?? []) {
    if (e.includes('=')) {
      throw new JackinError(
        'E_USAGE',
        `--env with a value and --ssh: the value would be on the remote's command line; set ${inertText(e.slice(0, e.indexOf('=')), 64)} in the remote's environment and pass --env NAME`,
      );
    }
    args.push('--env', e);
  }
  if (flags.name !== undefined) args.push('--name', flags.name);
  if (flags.engine !== undefined) args.push('--engine', flags.engine);
  if (flags.user !== undefined) args.push('--user', flags.user);
  if (flags.capsule !== undefined) args.push('--capsule', flags.capsule);
  if (flags.workspace !== undefined) args.push('--workspace', flags.workspace);
  for (const v of flags.volume ?? []) args.push(`--volume=${v}`);
  if (flags.network !== undefined) args.push('--network', flags.network);
  for (const a of flags.engineArg ?? []) args.push(`--engine-arg=${a}`);
  if (flags.verbose === true) args.push('--verbose');
  args.push('--', ...command);
  return args;
}

/**
 * `jackin run --ssh HOST --image IMAGE`: the copied jackin on that machine starts the container on its
 * engine (`jackin run --image -d` there: the remote's Node lent, its run directory, its reaper), and this
 * terminal attaches to the capsule through an exec relay over ssh, as for a capsule without a container.
 */
async function runRemoteImage(
  target: string,
  command: string[],
  flags: RunFlags,
  modules: ReturnType<typeof loadSessionModules>,
  plain: boolean,
): Promise<number> {
  if (flags.dryRun === true || flags.format !== undefined) {
    throw new JackinError('E_USAGE', '--dry-run with --ssh: run `jackin run --image ... --dry-run` on that machine, where its paths are');
  }
  const args = remoteImageArgs(command, flags);
  const remote = remoteMachine(target);
  await remote.prepare();
  const r = await remote.jackin(args);
  // The remote jackin's words (its engine, progress, an error): that machine's, shown inert.
  for (const line of r.stderr.split('\n').filter((l) => l.trim() !== '')) process.stderr.write(`${inertText(line, 400)}\n`);
  const name = r.stdout.toString('utf8').trim();
  if (r.status !== 0 || !/^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/.test(name)) {
    throw new JackinError('E_CAPSULE_START', `jackin run --image on ${inertText(target, 200)} failed (exit status ${r.status ?? 'signal'})`);
  }
  if (flags.detach === true) {
    await writeAll(process.stdout, `${name}\n`);
    return 0;
  }
  const relay = await remote.relayArgv(checkInstanceName(name));
  const connect = async (): Promise<Transport> => relayTransport(await spawnRelay(relay));
  const selection: Selection = { transport: await connect(), choice: 'ssh', reason: `jackin run --ssh started container ${name} on ${target}` };
  return await attachTerminal(modules, selection, name, flags.verbose === true, { noMouse: flags.mouse === false, connect, plain });
}

async function runCommand(command: string[], flags: RunFlags, raw: readonly string[]): Promise<number> {
  const home = jackinHome();
  const modules = loadSessionModules();
  refuseOldVerbose(flags.volume, process.cwd());
  refuseLateDryRun(raw, flags.dryRun === true, command);
  // Like `docker run` without -t: with no terminal on both stdin and stdout there is nobody to draw a
  // screen for or read keys from, so the program's bytes are relayed as they are (docs/guide.md, "Without a
  // terminal"). Not with -d: nothing is relayed now, and a later attach from a terminal needs a terminal's PTY.
  const plain = flags.detach !== true && (process.stdin.isTTY !== true || process.stdout.isTTY !== true);
  if (flags.image !== undefined) {
    if (flags.ssh !== undefined) return runRemoteImage(flags.ssh, command, flags, modules, plain);
    return runImageCommand(
      command,
      flags,
      home,
      (selection, name, connect, explainLost) =>
        attachTerminal(modules, selection, name, flags.verbose === true, { noMouse: flags.mouse === false, connect, explainLost, plain }),
      plain,
    );
  }
  if (flags.ssh !== undefined) {
    refuseImageOnlyFlags(flags);
    return runRemote(flags.ssh, command, flags, modules, plain);
  }
  refuseImageOnlyFlags(flags);
  const argv = command.length > 0 ? command : [process.env['SHELL'] || '/bin/sh'];
  const workspace = checkWorkspace(flags.workspace ?? process.cwd());
  let name: string;
  if (flags.name !== undefined) {
    name = checkInstanceName(flags.name);
    if (await socketAnswers(instanceSocketPath(home, name))) {
      throw new JackinError('E_INSTANCE_EXISTS', `instance ${name} is already running: attach with \`jackin attach ${name}\` or pick another --name`);
    }
  } else {
    name = await freeInstanceName(home, defaultInstanceName(argv[0]!));
  }
  const runDir = instanceRunDir(home, name);
  mkdirSync(runDir, { recursive: true, mode: 0o700 });
  const socket = runDirSocketPath(runDir);
  const logPath = join(runDir, 'capsule.log');
  const logFd = openCapsuleLog(logPath);
  // Detached (its own session, no controlling terminal) so the program survives a detach and a closed pane.
  const child = spawn(
    process.execPath,
    [
      ...CAPSULE_NODE_FLAGS,
      CAPSULE_ENTRY,
      'serve',
      '--run-dir',
      runDir,
      '--workspace',
      workspace,
      '--name',
      name,
      ...capsuleSizeArgs(process.stdout),
      ...(plain ? ['--plain'] : []),
      '--',
      ...argv,
    ],
    { detached: true, stdio: ['ignore', logFd, logFd], cwd: workspace, env: process.env },
  );
  closeSync(logFd);
  let exited: string | null = null;
  child.once('exit', (code, signal) => (exited = signal !== null ? `was killed by ${signal}` : `exited with status ${code}`));
  child.once('error', (e) => (exited = `could not start (${e.message})`));
  child.unref();

  await modules;
  const sock = await waitForSocket(socket, {
    timeoutMs: CAPSULE_START_TIMEOUT_MS,
    pollMs: CAPSULE_START_POLL_MS,
    check: () => {
      if (exited === null) return;
      const tail = logTail(logPath);
      throw new JackinError('E_CAPSULE_START', `capsule for ${name} ${exited} before its socket was ready${tail ? `: ${tail}` : ''} (log: ${logPath})`);
    },
    timedOut: () => new JackinError('E_CAPSULE_START', `capsule for ${name} did not open ${socket} within ${CAPSULE_START_TIMEOUT_MS} ms (log: ${logPath})`),
  });
  if (flags.detach === true) {
    // The capsule answers: the name, one line, as `docker run -d` prints the id.
    sock.destroy();
    await writeAll(process.stdout, `${name}\n`);
    return 0;
  }
  const selection: Selection = { transport: socketTransport(sock, socket), choice: 'socket', reason: `jackin run started capsule ${name}` };
  const connect: Connect = (o) => connectSocketTransport(socket, o);
  // The capsule runs here, as this user, on the host's own network: its loopback is the host's.
  return await attachTerminal(modules, selection, name, flags.verbose === true, { noMouse: flags.mouse === false, connect, sharedLoopback: true, plain });
}

export function registerRunCommand(program: Command, setStatus: SetStatus): void {
  addRunImageOptions(program.command('run'))
    .description('start a command in a local capsule (it survives detaching), or with --image in a container, and attach to it')
    .argument('[command...]', 'the program and its arguments (default: $SHELL, else /bin/sh)')
    .option('--name <name>', 'instance name (default: the command name, then -2, -3… if taken)')
    .option('-w, --workspace <dir>', 'working directory of the program (default: the current directory)')
    .option(
      '--ssh <host>',
      'run it on that machine ([user@]host[:port]) over ssh; nothing of jackin needs to be installed there (docs/guide.md, "Remote machines")',
    )
    .option('-d, --detach', 'start it without attaching: print the instance name once its capsule answers (jackin attach NAME reaches it)')
    .option('--verbose', 'print diagnostics on stderr (no longer -v: that is --volume)')
    .option('--no-mouse', NO_MOUSE_HELP)
    .passThroughOptions()
    .addHelpText(
      'after',
      `
The capsule's run directory is $JACKIN_HOME/sockets/<name>/ (socket, capsule.json, capsule.log).

Keys: Ctrl+\\ then d detaches (the program keeps running; jackin attach <name> comes back); Ctrl+\\ opens
the palette of host actions. Exit status: the program's exit status; 0 after a detach; non-zero with a
one-line reason otherwise (the capsule could not start: see its capsule.log). With -d: 0 once the capsule
answers, the instance name on stdout; jackin logs <name> shows capsule.log.

Examples:
  jackin run                         your shell
  jackin run -- bash -l
  jackin run -d --name build -- make     then: jackin attach build, jackin logs build
  jackin run --name review -- claude
  jackin run --ssh dev@box -- claude    on that machine; jackin attach --ssh dev@box claude comes back
  jackin run --image node:24-bookworm --name agent -- bash
  jackin run --image my-agent --engine podman --dry-run -- claude
  jackin run --image my-agent -v ./notes:/notes:ro -e ANTHROPIC_API_KEY -w ~/src/app -- claude
                                     docker's short forms: -v --volume, -e --env, -w --workspace, -u --user
                                     (-v is no longer --verbose: write --verbose)`,
    )
    .action(async (command: string[], flags: RunFlags, cmd: Command) => {
      // What followed `run` on the command line (refuseLateDryRun): the program's args are `run` and those words.
      setStatus(await runCommand(command, flags, cmd.parent?.args.slice(1) ?? []));
    });
}
