/**
 * `jackin stage [--name INSTANCE] <host-path>... [--json]`: hands host files to the agent. Each file travels
 * on its own control connection (socket or exec relay), so it works whether or not someone is attached,
 * and lands in the capsule at `<run>/files/<random>/<name>`; the container path is printed on stdout (one
 * line, or one JSON object, per path), errors on stderr, exit status 1 when any path failed, 128 + the
 * signal's number when a signal interrupts it. The same host checks as a pasted path: regular files only, no secret locations, within
 * JACKIN_STAGE_MAX_BYTES per file and for the whole command.
 */
import { Option, type Command } from './commander.ts';
import { describeError, JackinError, refusedOrFailed } from '../errors.ts';
import { jackinHome } from '../host/instances/instances.ts';
import { stageFile } from '../host/paste/stage-client.ts';
import { closeSources, openStageSources } from '../host/paste/stage-source.ts';
import { stageMaxBytes } from '../policy/stage-limits.ts';
import { inertJson, inertText } from '../ui/inert-text.ts';
import { selectOptionsFromFlags, selectTransport } from '../transport/select.ts';
import { resolveInstance } from '../host/instances/resolve-instance.ts';
import type { Transport } from '../transport/transport.ts';
import type { SetStatus } from './command-kit.ts';
import { interruptOnSignals } from './interrupt-signals.ts';
import { pickInstance } from './export-command.ts';
import { NAME_OPTION_HELP } from './instance-option.ts';
import { addTransportOptions, withSsh, type TransportFlags } from './transport-options.ts';
import { appendAction } from '../host/instances/action-log.ts';

interface StageFlags extends TransportFlags {
  name?: string;
  /** The old spelling of --name. */
  to?: string;
  json?: boolean;
}

async function stageCommand(paths: string[], flags: StageFlags): Promise<number> {
  if (paths.length === 0) throw new JackinError('E_USAGE', 'name at least one host file to stage');
  const maxBytes = stageMaxBytes(process.env);
  const instance = await pickInstance(flags, ['--to', flags.to]);
  const select = await withSsh(selectOptionsFromFlags(instance, jackinHome(), flags), flags);
  await resolveInstance(select);
  const connect = async (): Promise<Transport> => (await selectTransport(select)).transport;
  const json = flags.json === true;
  const out = (line: string): void => void process.stdout.write(`${line}\n`);
  const failed = async (source: string, e: unknown): Promise<void> => {
    const code = e instanceof JackinError ? e.code : 'E_INTERNAL';
    if (json) out(inertJson({ ok: false, source, code, message: describeError(e) }));
    else process.stderr.write(`jackin: stage ${inertText(source, 4096)}: ${inertText(describeError(e), 4096)} (${code})\n`);
    const result = interruption.signal.aborted ? 'cancelled' : refusedOrFailed(e);
    await appendAction(jackinHome(), { instance, action: 'stage', target: source, result, detail: `${code}: ${describeError(e)}` });
  };

  const interruption = interruptOnSignals();
  const opened = await openStageSources(paths, maxBytes);
  let failures = 0;
  try {
    for (const o of opened) {
      if (!o.ok) {
        failures++;
        await failed(o.path, o.error);
        continue;
      }
      if (interruption.signal.aborted) break;
      try {
        const r = await stageFile(o.source, { connect, signal: interruption.signal });
        const via = r.resolved === null ? '' : ` (symlink to ${r.resolved})`;
        await appendAction(jackinHome(), { instance, action: 'stage', target: r.source, result: 'ok', detail: `${r.destination} (${r.bytes} bytes)${via}` });
        if (json) out(inertJson({ ok: true, source: r.source, destination: r.destination, bytes: r.bytes, sha256: r.sha256 }));
        // The container path comes from the capsule, and a host path can name a file (or a symlink's target)
        // the container created in a workspace it shares: all printed inert (JSON output escapes them already).
        else out(`${inertText(r.destination, 8192)}  (${r.bytes} bytes, sha256 ${r.sha256})${inertText(via, 8192)}`);
        if (!json && r.resolved !== null)
          process.stderr.write(`jackin: ${inertText(r.source, 4096)} is a symlink; staged its target ${inertText(r.resolved, 4096)}\n`);
      } catch (e) {
        failures++;
        await failed(o.source.path, e);
      }
    }
  } finally {
    await closeSources(opened);
    interruption.dispose();
  }
  return interruption.status() ?? (failures > 0 ? 1 : 0);
}

/** Adds `jackin stage` to the CLI. */
export function registerStageCommand(program: Command, setStatus: SetStatus): void {
  const cmd = program
    .command('stage')
    .description('copy host files into a capsule at <run>/files/<random>/<name> and print their container paths')
    .argument('[paths...]', 'host files (regular files; directories and secret locations are refused)')
    .option('--name <instance>', `${NAME_OPTION_HELP}; default: the only running one`)
    .addOption(new Option('--to <instance>', 'the old spelling of --name').hideHelp())
    .option('--json', 'print one JSON object per path on stdout');
  addTransportOptions(cmd)
    .addHelpText(
      'after',
      `
Each file is sent in 1 MiB chunks, checked by the capsule for size and SHA-256, and published create-new
(0600, in a 0700 directory of its own) under its original name; the capsule removes staged files when it
exits. Refused: directories, files under ~/.ssh, ~/.gnupg, ~/.aws, ~/.kube, ~/.config/gcloud, keychains,
~/.docker/config.json, ~/.netrc and files named like private keys or .env; files over JACKIN_STAGE_MAX_BYTES
(default 1 GiB, also the cap on all the files of one command). Symlinks are resolved on the host.

With --json each path prints {"ok":true,"source","destination","bytes","sha256"} or
{"ok":false,"source","code","message"}. Exit status: 0 when every path was staged, 1 otherwise, 2 for a
usage error; Ctrl+C (130) or SIGTERM (143) stops the transfer in flight and leaves no file behind.
--to is the old spelling of --name. A name that matches nothing is E_NO_INSTANCE; a local capsule that
died is E_INSTANCE_DEAD.

Examples:
  jackin stage report.pdf                        into the only running instance
  jackin stage --name agent data.csv notes.md --json
  jackin stage --name agent --via docker build.log`,
    )
    .action(async (paths: string[], flags: StageFlags) => setStatus(await stageCommand(paths, flags)));
}
