/**
 * `jackin`: the host CLI. `attach` connects the operator's terminal to a capsule, `run` starts a local
 * capsule for a command and attaches to it, `ls` lists local instances.
 * Output contract: results on stdout, diagnostics on stderr, one line per error (or one JSON object with
 * --json) and a non-zero exit status.
 */
import { spawn } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readFileSync, statSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Command, CommanderError, Option } from 'commander';
import { describeError, JackinError } from '../errors.ts';
import { capsuleSizeArgs } from '../host/terminal.ts';
import { jackinHome, listInstances, probeInstance, socketAnswers, type InstanceInfo } from '../host/instances.ts';
import { registerExportCommand } from './export-command.ts';
import type { Transport } from '../transport/transport.ts';
import { ENGINES, checkInstanceName, instanceRunDir, selectOptionsFromFlags, selectTransport, type Engine, type Selection, type SelectOptions } from '../transport/select.ts';
import { connectSocket, socketTransport } from '../transport/socket.ts';

/** How long `jackin run` waits for a new capsule's socket. Starting Node and a PTY takes ~100 ms. */
export const CAPSULE_START_TIMEOUT_MS = 10_000;
const CAPSULE_START_POLL_MS = 20;
/** Lines of capsule.log shown when a capsule fails to start. */
const LOG_TAIL_LINES = 5;

// Works from src/cli (tsx) and dist/cli (built): both are two levels below the package root.
const PACKAGE_ROOT = fileURLToPath(new URL('../../', import.meta.url));
// The bin launcher, not dist/cli/jackin-capsule.js: that module only exports main() and does nothing when run.
const CAPSULE_ENTRY = join(PACKAGE_ROOT, 'bin', 'jackin-capsule.js');
/**
 * Node flags for a capsule this command starts. A 2 MiB young generation (V8's default grows to 16 MiB per
 * semi-space) keeps the long-running capsule small: measured, its peak RSS over repeated directory exports
 * went from 122 to 102 MiB, with no change in export or relay speed. docs/guide.md shows the same flag for
 * a capsule started by a container's entrypoint.
 */
export const CAPSULE_NODE_FLAGS = ['--max-semi-space-size=2'];

function packageVersion(): string {
  try {
    const pkg = JSON.parse(readFileSync(join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { version?: unknown };
    return typeof pkg.version === 'string' ? pkg.version : '0.0.0';
  } catch {
    return '0.0.0';
  }
}

function writeAll(stream: NodeJS.WriteStream, text: string): Promise<void> {
  return new Promise((res) => {
    if (text.length === 0 || stream.destroyed) return res();
    stream.write(text, () => res());
  });
}

interface AttachFlags {
  socket?: string;
  via?: Engine;
  namespace?: string;
  container?: string;
  exec?: string;
  verbose?: boolean;
  /** false with --no-mouse. */
  mouse?: boolean;
}

/**
 * The attached session's modules, loaded by `run` and `attach` only: `jackin export`, `ls` and `--help`
 * start without them (about a third of the CLI's start-up time). Both commands start loading them before
 * they connect, so the connection never waits on them: a program that exits at once would otherwise be
 * shut down while the capsule still waits for our Hello, and its status lost.
 */
function loadSessionModules() {
  return Promise.all([
    import('../host/attach.ts'),
    import('../host/terminal.ts'),
    import('../host/paste-feature.ts'),
    import('../host/link-feature.ts'),
    import('../host/export-feature.ts'),
  ]);
}

/** Attaches the process's terminal through `selection`; returns jackin's exit status. */
async function attachTerminal(
  modules: ReturnType<typeof loadSessionModules>,
  selection: Selection,
  name: string,
  verbose: boolean,
  features: { noMouse?: boolean; connect?: () => Promise<Transport> } = {},
): Promise<number> {
  const [{ AttachSession, outcomeExit }, { HostTerminal, signalExitStatus }, { installPasteFeature }, { installLinkFeature }, { installExportFeature }] = await modules;
  const terminal = new HostTerminal();
  // While raw, "\n" no longer returns the carriage: diagnostics end lines with CRLF.
  const log = verbose ? (line: string) => void process.stderr.write(`jackin: ${line}\r\n`) : undefined;
  log?.(`transport: ${selection.choice}, because ${selection.reason} (${selection.transport.description})`);
  const session = new AttachSession({ transport: selection.transport, terminal, name, ...(log ? { log } : {}) });
  installPasteFeature(session);
  const exportFeature = features.connect !== undefined ? installExportFeature(session, { instance: name, connect: features.connect }) : undefined;
  installLinkFeature(session, {
    noMouse: features.noMouse === true,
    // A modifier-click on a file path (not a link) exports that file.
    ...(exportFeature !== undefined ? { exportFeature } : {}),
  });

  const fail = (message: string, status: number) => {
    session.abort(message);
    terminal.restore();
    process.stderr.write(`\r\njackin: ${message}\n`, () => process.exit(status));
    // If stderr is gone (hangup), do not wait on it.
    setTimeout(() => process.exit(status), 500).unref();
  };
  terminal.onFatalSignal((sig) => fail(`terminated by ${sig}`, signalExitStatus(sig)));
  const onCrash = (e: unknown) => fail(`internal error: ${describeError(e)}`, 70);
  process.on('uncaughtException', onCrash);
  process.on('unhandledRejection', onCrash);

  terminal.enterRawMode();
  if (process.stdin.isTTY === true && process.stdout.isTTY === true && !terminal.outputRaw) log?.('could not turn output processing off (stty -opost); the program\'s output passes through the terminal\'s own');
  let outcome;
  try {
    outcome = await session.start();
  } finally {
    terminal.restore();
    process.off('uncaughtException', onCrash);
    process.off('unhandledRejection', onCrash);
  }
  const { status, message } = outcomeExit(outcome, name);
  if (message !== null) await writeAll(process.stderr, `\r\njackin: ${message}\n`);
  return status;
}

async function attachCommand(instance: string, flags: AttachFlags): Promise<number> {
  const selectOptions: SelectOptions = selectOptionsFromFlags(instance, jackinHome(), flags);
  const modules = loadSessionModules();
  await modules;
  const selection = await selectTransport(selectOptions);
  // Exports open their own control connection the same way (socket, or another exec relay).
  const connect = async (): Promise<Transport> => (await selectTransport(selectOptions)).transport;
  return attachTerminal(modules, selection, instance, flags.verbose === true, { noMouse: flags.mouse === false, connect });
}

/** A name usable as an instance directory, from a command path. */
export function defaultInstanceName(command: string): string {
  const base = basename(command).replace(/[^A-Za-z0-9._-]/g, '-').replace(/^[-.]+/, '');
  return base.length > 0 ? base.slice(0, 64) : 'capsule';
}

/** The first of `base`, `base-2`, `base-3`… that no live instance uses. */
async function freeInstanceName(home: string, base: string): Promise<string> {
  for (let i = 1; ; i++) {
    const name = i === 1 ? base : `${base}-${i}`;
    if (!(await socketAnswers(join(instanceRunDir(home, name), 'jackin.sock')))) return name;
  }
}

function logTail(logPath: string): string {
  try {
    const lines = readFileSync(logPath, 'utf8').split('\n').map((l) => l.trimEnd()).filter((l) => l.length > 0);
    return lines.slice(-LOG_TAIL_LINES).join(' | ');
  } catch {
    return '';
  }
}

interface RunFlags {
  name?: string;
  workspace?: string;
  verbose?: boolean;
  /** false with --no-mouse. */
  mouse?: boolean;
}

async function runCommand(command: string[], flags: RunFlags): Promise<number> {
  const home = jackinHome();
  const modules = loadSessionModules();
  const argv = command.length > 0 ? command : [process.env['SHELL'] || '/bin/sh'];
  const workspace = resolve(flags.workspace ?? process.cwd());
  try {
    if (!statSync(workspace).isDirectory()) throw new Error('not a directory');
  } catch (cause) {
    throw new JackinError('E_USAGE', `workspace ${workspace} is not a directory: pass an existing --workspace`, { cause, exitCode: 2 });
  }
  let name: string;
  if (flags.name !== undefined) {
    name = checkInstanceName(flags.name);
    if (await socketAnswers(join(instanceRunDir(home, name), 'jackin.sock'))) {
      throw new JackinError('E_INSTANCE_EXISTS', `instance ${name} is already running: attach with \`jackin attach ${name}\` or pick another --name`);
    }
  } else {
    name = await freeInstanceName(home, defaultInstanceName(argv[0]!));
  }
  const runDir = instanceRunDir(home, name);
  mkdirSync(runDir, { recursive: true, mode: 0o700 });
  const socket = join(runDir, 'jackin.sock');
  const logPath = join(runDir, 'capsule.log');
  const logFd = openSync(logPath, 'a', 0o600);
  // Detached (its own session, no controlling terminal) so the program survives a detach and a closed pane.
  const child = spawn(
    process.execPath,
    [...CAPSULE_NODE_FLAGS, CAPSULE_ENTRY, 'serve', '--run-dir', runDir, '--workspace', workspace, '--name', name, ...capsuleSizeArgs(process.stdout), '--', ...argv],
    { detached: true, stdio: ['ignore', logFd, logFd], cwd: workspace, env: process.env },
  );
  closeSync(logFd);
  let exited: string | null = null;
  child.once('exit', (code, signal) => (exited = signal !== null ? `was killed by ${signal}` : `exited with status ${code}`));
  child.once('error', (e) => (exited = `could not start (${e.message})`));
  child.unref();

  await modules;
  const deadline = Date.now() + CAPSULE_START_TIMEOUT_MS;
  for (;;) {
    try {
      const sock = await connectSocket(socket);
      const selection: Selection = { transport: socketTransport(sock, socket), choice: 'socket', reason: `jackin run started capsule ${name}` };
      const connect = async (): Promise<Transport> => socketTransport(await connectSocket(socket), socket);
      return await attachTerminal(modules, selection, name, flags.verbose === true, { noMouse: flags.mouse === false, connect });
    } catch (e) {
      if (!(e instanceof JackinError) || e.code !== 'E_SOCKET_UNAVAILABLE') throw e;
    }
    if (exited !== null) {
      const tail = logTail(logPath);
      throw new JackinError('E_CAPSULE_START', `capsule for ${name} ${exited} before its socket was ready${tail ? `: ${tail}` : ''} (log: ${logPath})`);
    }
    if (Date.now() > deadline) {
      throw new JackinError('E_CAPSULE_START', `capsule for ${name} did not open ${socket} within ${CAPSULE_START_TIMEOUT_MS} ms (log: ${logPath})`);
    }
    await new Promise((r) => setTimeout(r, CAPSULE_START_POLL_MS));
  }
}

function formatInstances(list: InstanceInfo[]): string {
  if (list.length === 0) return 'no instances (start one with `jackin run -- <command>`)\n';
  const rows = [['NAME', 'STATE', 'ATTACHED', 'PROGRAM', 'SOCKET']];
  for (const i of list) {
    rows.push([i.name, i.state, i.attached === null ? '-' : i.attached ? 'yes' : 'no', i.program?.join(' ') ?? '-', i.socket]);
  }
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
  return rows.map((r) => r.map((cell, c) => (c === r.length - 1 ? cell : cell.padEnd(widths[c]!))).join('  ')).join('\n') + '\n';
}

async function lsCommand(flags: { json?: boolean }): Promise<number> {
  const list = await listInstances(jackinHome());
  await writeAll(process.stdout, flags.json === true ? JSON.stringify(list) + '\n' : formatInstances(list));
  return 0;
}

function buildProgram(setStatus: (n: number) => void): Command {
  const program = new Command('jackin')
    .description('Attach your terminal to a coding agent running in a jackin capsule (a container, a pod, or this machine).')
    .version(packageVersion(), '-V, --version')
    .enablePositionalOptions()
    .showHelpAfterError('(run `jackin --help` for usage)')
    // Set before the subcommands are added: they copy these settings when created.
    .exitOverride()
    .configureOutput({ writeErr: (s) => process.stderr.write(s) })
    .addHelpText(
      'after',
      `
Examples:
  jackin run -- bash                 start bash in a local capsule and attach to it
  jackin ls                          list local instances
  jackin attach bash                 reattach (detach again with Ctrl+\\ then d)
  jackin attach agent --via docker   attach to the capsule in container "agent"
  jackin doctor                      check clipboard, opener, downloads and instances

Environment: JACKIN_HOME (default ~/.jackin) holds sockets/<instance>/jackin.sock.`,
    );

  program
    .command('attach')
    .description('attach this terminal to a running capsule')
    .argument('<instance>', 'instance name: a local instance, or the container/pod with --via')
    .option('--socket <path>', 'connect to this Unix socket instead of $JACKIN_HOME/sockets/<instance>/jackin.sock')
    .addOption(new Option('--via <engine>', 'reach the capsule through `<engine> exec -i <instance> jackin-capsule attach-proxy`').choices(ENGINES))
    .option('-n, --namespace <ns>', 'Kubernetes namespace (with --via kubectl)')
    .option('-c, --container <name>', 'container in the pod (with --via kubectl)')
    .option('--exec <command>', 'run this relay command with `sh -c`; its stdin/stdout must reach the capsule socket')
    .option('-v, --verbose', 'print the chosen transport and why, and protocol diagnostics, on stderr')
    .option('--no-mouse', 'never capture the mouse (no Ctrl/Alt+click on links; the palette still works; also JACKIN_MOUSE=off)')
    .addHelpText(
      'after',
      `
Without --socket/--via/--exec, jackin uses the local socket when it accepts a connection, otherwise
\`docker exec -i <instance> jackin-capsule attach-proxy\`.
Keys: Ctrl+\\ then d detaches (the program keeps running); Ctrl+\\ twice sends one Ctrl+\\.
Exit status: the program's exit status; 0 after a detach; non-zero with a one-line reason otherwise.

Examples:
  jackin attach bash
  jackin attach agent --via podman
  jackin attach agent-0 --via kubectl -n dev -c agent
  jackin attach box --exec 'ssh box docker exec -i agent jackin-capsule attach-proxy'`,
    )
    .action(async (instance: string, flags: AttachFlags) => setStatus(await attachCommand(instance, flags)));

  program
    .command('run')
    .description('start a command in a local capsule (it survives detaching) and attach to it')
    .argument('[command...]', 'the program and its arguments (default: $SHELL, else /bin/sh)')
    .option('--name <name>', 'instance name (default: the command name, then -2, -3… if taken)')
    .option('--workspace <dir>', 'working directory of the program (default: the current directory)')
    .option('-v, --verbose', 'print diagnostics on stderr')
    .option('--no-mouse', 'never capture the mouse (no Ctrl/Alt+click on links; the palette still works; also JACKIN_MOUSE=off)')
    .passThroughOptions()
    .addHelpText(
      'after',
      `
The capsule's run directory is $JACKIN_HOME/sockets/<name>/ (socket, capsule.json, capsule.log).

Examples:
  jackin run                         your shell
  jackin run -- bash -l
  jackin run --name review -- claude`,
    )
    .action(async (command: string[], flags: RunFlags) => setStatus(await runCommand(command, flags)));

  program
    .command('ls')
    .description('list local instances: name, state (live/stale), attached, program, socket')
    .option('--json', 'print a JSON array')
    .addHelpText('after', '\nExamples:\n  jackin ls\n  jackin ls --json')
    .action(async (flags: { json?: boolean }) => setStatus(await lsCommand(flags)));

  program
    .command('doctor')
    .description('check the clipboard backend, the link opener, the download directory, the keys and each instance, with the fix for each problem')
    .option('--json', 'print one JSON object: {"ok":bool,"checks":[{name,status,detail,fix?}]}')
    .addHelpText('after', '\nExit status: 0 when nothing is an error (warnings allowed), 1 otherwise.\n\nExamples:\n  jackin doctor\n  jackin doctor --json')
    .action(async (flags: { json?: boolean }) => setStatus(await doctorCommand(flags)));

  registerExportCommand(program, setStatus);

  return program;
}

async function doctorCommand(flags: { json?: boolean }): Promise<number> {
  const { formatChecks, runDoctor } = await import('../host/doctor.ts');
  const checks = await runDoctor();
  const ok = checks.every((c) => c.status !== 'error');
  await writeAll(process.stdout, flags.json === true ? JSON.stringify({ ok, checks }) + '\n' : formatChecks(checks));
  return ok ? 0 : 1;
}

/** Runs the CLI and returns the exit status (errors are printed here). */
export async function run(argv: string[]): Promise<number> {
  let status = 0;
  const json = argv.includes('--json');
  const program = buildProgram((n) => (status = n));
  try {
    await program.parseAsync(argv);
    return status;
  } catch (e) {
    if (e instanceof CommanderError) {
      // --help and --version end here with status 0; usage errors were already printed by commander.
      return e.exitCode === 0 ? 0 : 2;
    }
    const code = e instanceof JackinError ? e.code : 'E_INTERNAL';
    const exitCode = e instanceof JackinError ? e.exitCode : 70;
    const line = json ? JSON.stringify({ error: { code, message: describeError(e) } }) : `jackin: ${describeError(e)}`;
    await writeAll(process.stderr, line + '\n');
    return exitCode;
  }
}

/** Entry point of bin/jackin.js. Exits explicitly: a relay or a TTY handle must not keep jackin alive. */
export async function main(argv: string[]): Promise<void> {
  const status = await run(argv);
  await writeAll(process.stdout, '');
  process.exit(status);
}
