/**
 * `jackin export [--name INSTANCE] <container-path>... [--to DIR] [--reveal | --open] [--json] [--offered]`:
 * pulls container files over the control channel, so it works whether or not someone is attached and never
 * takes over a session. Results on stdout (one line, or one JSON object, per path); progress and errors on
 * stderr; exit status 1 when any path failed, 128 + the signal's number when a signal interrupts it.
 */
import { existsSync, statSync } from 'node:fs';
import { Option, type Command } from './commander.ts';
import { describeError, JackinError, refusedOrFailed } from '../errors.ts';
import { exportDirectory } from '../host/platform/download-dir.ts';
import { exportFile, type ExportProgress } from '../host/export/export-client.ts';
import { OFFERS_METHOD } from '../protocol/index.ts';
import { controlCall } from '../transport/control-call.ts';
import { appendAction } from '../host/instances/action-log.ts';
import { jackinHome, listInstances } from '../host/instances/instances.ts';
import { createOpener } from '../host/platform/opener.ts';
import { selectOptionsFromFlags, selectTransport, type SelectOptions } from '../transport/select.ts';
import { resolveInstance } from '../host/instances/resolve-instance.ts';
import type { Connect } from '../transport/transport.ts';
import { formatBytes } from '../ui/format-bytes.ts';
import { cutColumns, inertJson, inertText } from '../ui/inert-text.ts';
import type { SetStatus } from './command-kit.ts';
import { interruptOnSignals } from './interrupt-signals.ts';
import { NAME_OPTION_HELP, namedInstance } from './instance-option.ts';
import { addTransportOptions, withSsh, type TransportFlags } from './transport-options.ts';

/** Longest container path or message shown in one line (inertText cuts the rest). */
const MAX_SHOWN_COLUMNS = 1000;

/** Redraw the progress line at most this often. */
const PROGRESS_INTERVAL_MS = 200;

interface ExportFlags extends TransportFlags {
  name?: string;
  /** The old spelling of --name. */
  from?: string;
  to?: string;
  reveal?: boolean;
  open?: boolean;
  json?: boolean;
  offered?: boolean;
}

function usage(message: string): JackinError {
  return new JackinError('E_USAGE', message);
}

/**
 * The instance a command without a positional NAME targets: `--name` (or its old spelling, `export --from`,
 * `stage --to`), or the only live instance.
 */
export async function pickInstance(
  flags: { name?: string; via?: TransportFlags['via']; exec?: string; ssh?: string },
  alias: readonly [string, string | undefined],
): Promise<string> {
  const named = namedInstance([['--name', flags.name], alias]);
  if (named !== undefined) return named;
  if (flags.via !== undefined || flags.exec !== undefined || flags.ssh !== undefined)
    throw usage('--via, --exec and --ssh need --name INSTANCE (the container, pod or remote instance to reach)');
  const live = (await listInstances(jackinHome())).filter((i) => i.state === 'live');
  if (live.length === 1 && live[0] !== undefined) return live[0].name;
  if (live.length === 0)
    throw new JackinError('E_NO_INSTANCE', 'no instance is running; start one with `jackin run`, or name a container with --name NAME --via docker');
  throw usage(`${live.length} instances are running (${live.map((i) => inertText(i.name, 128)).join(', ')}): pick one with --name`);
}

/**
 * The progress line cut to the terminal's columns, counted as the terminal draws them (a wide character
 * takes two, a combining mark none), one short of the width so the cursor never wraps: `\r\x1b[K` clears
 * one row only, and a line that wrapped left its first rows behind at every redraw.
 */
export function fitProgressLine(line: string, columns: number): string {
  return cutColumns(line, Math.max(1, columns - 1));
}

/** A one-line progress meter on stderr: bytes, rate, ETA. */
class ProgressMeter {
  readonly #stream: NodeJS.WriteStream;
  #started = 0;
  #last = 0;
  #shown = false;

  constructor(stream: NodeJS.WriteStream) {
    this.#stream = stream;
  }

  update(p: ExportProgress): void {
    const now = Date.now();
    if (p.bytes === 0) this.#started = now;
    if (now - this.#last < PROGRESS_INTERVAL_MS && p.bytes !== p.total) return;
    this.#last = now;
    const secs = Math.max((now - this.#started) / 1000, 0.001);
    const rate = p.bytes / secs;
    const eta = rate > 0 ? Math.ceil((p.total - p.bytes) / rate) : 0;
    const pct = p.total === 0 ? 100 : Math.floor((p.bytes / p.total) * 100);
    // A directory archived while it streams knows only an upper bound: no percentage or ETA then. The name
    // is the one the file is published under (never the capsule's raw name), and shown inert all the same.
    const name = inertText(p.name, 80);
    const line =
      p.atMost === true
        ? `${name}: ${formatBytes(p.bytes)} (archive of at most ${formatBytes(p.total)})  ${formatBytes(rate)}/s`
        : `${name}: ${formatBytes(p.bytes)} / ${formatBytes(p.total)} (${pct}%)  ${formatBytes(rate)}/s  ETA ${eta}s`;
    this.#stream.write(`\r\x1b[K${fitProgressLine(line, this.#stream.columns || 80)}`);
    this.#shown = true;
  }

  clear(): void {
    if (this.#shown) this.#stream.write('\r\x1b[K');
    this.#shown = false;
  }
}

async function exportCommand(paths: string[], flags: ExportFlags): Promise<number> {
  if (paths.length === 0 && flags.offered !== true) throw usage('name at least one container path, or pass --offered');
  const instance = await pickInstance(flags, ['--from', flags.from]);
  const select: SelectOptions = await withSsh(selectOptionsFromFlags(instance, jackinHome(), flags), flags);
  const connect: Connect = async (o) => (await selectTransport(select, o)).transport;
  const directory = await exportDirectory(instance, flags.to);
  // Said once, before anything is pulled, rather than as a write error for every path.
  if (flags.to !== undefined && existsSync(directory) && !statSync(directory).isDirectory()) {
    throw usage(`--to ${directory} is not a directory: pass a directory (one that does not exist yet is created)`);
  }
  await resolveInstance(select);
  const mode = flags.open === true ? 'open' : flags.reveal === true ? 'reveal' : undefined;
  const json = flags.json === true;
  const out = (line: string): void => void process.stdout.write(`${line}\n`);

  const sources = [...paths];
  if (flags.offered === true) {
    const { file } = await controlCall(connect, OFFERS_METHOD, {});
    if (file === null) {
      throw new JackinError('E_NO_OFFER', `instance ${instance} offers no file (inside the container: jackin-capsule offer <path>)`);
    }
    sources.push(file);
  }

  const interruption = interruptOnSignals();
  const stop = interruption.signal;
  const meter = process.stderr.isTTY && !json ? new ProgressMeter(process.stderr) : undefined;
  let failed = 0;
  try {
    for (const source of sources) {
      if (stop.aborted) break;
      try {
        const r = await exportFile(
          { path: source, ...(mode !== undefined ? { mode } : {}) },
          // The command serves nothing else while it exports: its writes need not go through libuv's pool.
          { connect, directory, signal: stop, inlineWrites: true, ...(meter ? { onProgress: (p: ExportProgress) => meter.update(p) } : {}) },
        );
        meter?.clear();
        await appendAction(jackinHome(), { instance, action: 'export', target: source, result: 'ok', detail: r.destination });
        if (json) out(inertJson({ ok: true, source, destination: r.destination, bytes: r.bytes, sha256: r.sha256 }));
        else out(`${inertText(r.destination, MAX_SHOWN_COLUMNS)}  (${r.bytes} bytes, sha256 ${r.sha256})`);
        if (mode !== undefined) {
          try {
            const opened = await createOpener().openFile(r.destination, mode);
            const done = opened.revealedInstead === undefined ? mode : 'reveal';
            await appendAction(jackinHome(), {
              instance,
              action: `${done}-file`,
              target: r.destination,
              result: 'ok',
              ...(opened.revealedInstead !== undefined ? { detail: `not opened: ${opened.revealedInstead}` } : {}),
            });
            if (opened.revealedInstead !== undefined) {
              process.stderr.write(`jackin: revealed ${inertText(r.destination, MAX_SHOWN_COLUMNS)} instead of opening it: ${opened.revealedInstead}\n`);
            }
          } catch (e) {
            await appendAction(jackinHome(), { instance, action: `${mode}-file`, target: r.destination, result: 'failed', detail: describeError(e) });
            process.stderr.write(
              `jackin: could not ${mode} ${inertText(r.destination, MAX_SHOWN_COLUMNS)}: ${inertText(describeError(e), MAX_SHOWN_COLUMNS)}\n`,
            );
          }
        }
      } catch (e) {
        meter?.clear();
        failed++;
        const code = e instanceof JackinError ? e.code : 'E_INTERNAL';
        const result = stop.aborted ? 'cancelled' : refusedOrFailed(e);
        await appendAction(jackinHome(), { instance, action: 'export', target: source, result, detail: `${code}: ${describeError(e)}` });
        if (json) out(inertJson({ ok: false, source, code, message: describeError(e) }));
        else
          process.stderr.write(
            `jackin: export ${inertText(source, MAX_SHOWN_COLUMNS)}: ${inertText(describeError(e), MAX_SHOWN_COLUMNS)} (${inertText(code, 64)})\n`,
          );
      }
    }
  } finally {
    interruption.dispose();
  }
  return interruption.status() ?? (failed > 0 ? 1 : 0);
}

/** Adds `jackin export` to the CLI. */
export function registerExportCommand(program: Command, setStatus: SetStatus): void {
  addTransportOptions(
    program
      .command('export')
      .description('copy files or directories out of a capsule into <downloads>/jackin/<instance>/ (policy-checked, verified, never overwriting)')
      .argument('[paths...]', 'container paths; relative paths resolve against the capsule workspace')
      .option('--name <instance>', `${NAME_OPTION_HELP}; default: the only running one`)
      .addOption(new Option('--from <instance>', 'the old spelling of --name').hideHelp())
      .option(
        '--to <dir>',
        'destination directory, created if missing (default: $JACKIN_DOWNLOAD_DIR, XDG download dir or ~/Downloads, then jackin/<instance>)',
      )
      .addOption(new Option('--reveal', 'show each exported file in the file manager').conflicts('open'))
      .addOption(new Option('--open', 'open each exported file with its default application').conflicts('reveal'))
      .option('--json', 'print one JSON object per path on stdout')
      .option('--offered', 'also export the file the capsule offers (jackin-capsule offer <path>)'),
  )
    .addHelpText(
      'after',
      `
Directories arrive as <name>.tar.zst; a file keeps the name (and extension) of the path you asked for.
--open never opens a file that would run something (.desktop, .exe, .sh, .app, .lnk, .url, a script or
program by its first bytes...): it is revealed instead, with a note saying why. Each file is written to a
0600 temporary file, checked for size and SHA-256, then published under a new name (report-1.txt if
report.txt exists); nothing is ever replaced.

With --json each path prints {"ok":true,"source","destination","bytes","sha256"} or
{"ok":false,"source","code","message"}. Exit status: 0 when every path was exported, 1 otherwise, 2 for a
usage error; Ctrl+C (130) or SIGTERM (143) stops the export in flight and leaves no file behind.
--from is the old spelling of --name (--to is the destination directory). A name that matches nothing is
E_NO_INSTANCE; a local capsule that died is E_INSTANCE_DEAD.

Examples:
  jackin export report.txt                       from the only running instance
  jackin export --name agent out/ shot.png --json
  jackin export --name agent build.log --to /tmp --open
  jackin export --offered                        pull what the agent offered`,
    )
    .action(async (paths: string[], flags: ExportFlags) => setStatus(await exportCommand(paths, flags)));
}
