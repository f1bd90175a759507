/** `jackin attach <instance>`: attaches this terminal to a running capsule, locally or through an exec relay. */
import { existsSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Command } from './commander.ts';
import { JackinError } from '../errors.ts';
import { capsuleSharesHostNetwork, jackinHome } from '../host/instances/instances.ts';
import { selectOptionsFromFlags, selectTransport, type SelectOptions } from '../transport/select.ts';
import { instanceRunDir } from '../transport/instance-paths.ts';
import { resolveInstance } from '../host/instances/resolve-instance.ts';
import type { Connect } from '../transport/transport.ts';
import { attachTerminal, loadSessionModules, NO_MOUSE_HELP } from './attach-terminal.ts';
import type { SetStatus } from './command-kit.ts';
import { addTransportOptions, withSsh, type TransportFlags } from './transport-options.ts';
import { refuseShortVerbose } from './usage-errors.ts';
import { NAME_OPTION_HELP, requiredInstance } from './instance-option.ts';

interface AttachFlags extends TransportFlags {
  name?: string;
  verbose?: boolean;
  /** false with --no-mouse. */
  mouse?: boolean;
  allowUpstreamRequests?: boolean;
}

async function attachCommand(positional: string | undefined, flags: AttachFlags): Promise<number> {
  const instance = requiredInstance('attach', [
    ['NAME', positional],
    ['--name', flags.name],
  ]);
  const home = jackinHome();
  const selectOptions: SelectOptions = await withSsh(selectOptionsFromFlags(instance, home, flags), flags);
  const modules = loadSessionModules();
  // Connecting (or starting a relay, or adopting the one bin/jackin.js started) while the session's modules
  // load: a relay's stdout is held until the session reads it (src/transport/relay-launch.ts), so a relay
  // that ends before then loses nothing (test/cli.test.ts has the case).
  // The name is checked (resolve-instance.ts) while the connection is made, so that an engine's answer costs
  // no start-up time; a missing or dead instance is said as such, whatever the connection attempt said.
  const [selected, resolved] = await Promise.allSettled([Promise.all([selectTransport(selectOptions), modules]), resolveInstance(selectOptions)]);
  if (resolved.status === 'rejected') {
    if (selected.status === 'fulfilled') selected.value[0].transport.close();
    throw resolved.reason;
  }
  if (selected.status === 'rejected') throw selected.reason;
  const [selection] = selected.value;
  // Attaching draws a screen and reads keys: without a terminal on both, refuse at once (a session on
  // /dev/null or a pipe never ends). After the instance was reached, so a wrong name is told first.
  if (process.stdin.isTTY !== true || process.stdout.isTTY !== true) {
    selection.transport.close();
    const which = process.stdin.isTTY !== true ? (process.stdout.isTTY !== true ? 'stdin and stdout are' : 'stdin is') : 'stdout is';
    throw new JackinError(
      'E_NOT_A_TERMINAL',
      `cannot attach to ${instance}: ${which} not a terminal; run jackin attach from a terminal (jackin run -- CMD relays a program's bytes without one)`,
    );
  }
  // Exports open their own control connection the same way (socket, or another exec relay).
  const connect: Connect = async (o) => (await selectTransport(selectOptions, o)).transport;
  // A name with no local instance fell back to `docker exec` on a container of that name: when that fails
  // too, the likeliest cause is a mistyped instance name, so the line says where the names are.
  const guessed = flags.socket === undefined && flags.via === undefined && flags.exec === undefined && flags.ssh === undefined && selection.choice !== 'socket';
  const explainLost = async (message: string): Promise<string | null> =>
    guessed && !existsSync(instanceRunDir(home, instance)) ? `${message}; no local instance is named ${instance} either (\`jackin ls\` lists them)` : null;
  // A local capsule (jackin run) shares the host's loopback: its login callbacks need no forward. Only a
  // socket can lead to one; through a relay the host cannot tell, and forwards.
  const runDir = flags.socket !== undefined ? dirname(flags.socket) : instanceRunDir(home, instance);
  const sharedLoopback = selection.choice === 'socket' && (await capsuleSharesHostNetwork(runDir));
  return attachTerminal(modules, selection, instance, flags.verbose === true, {
    noMouse: flags.mouse === false,
    connect,
    explainLost,
    allowUpstreamRequests: flags.allowUpstreamRequests === true,
    sharedLoopback,
  });
}

export function registerAttachCommand(program: Command, setStatus: SetStatus): void {
  addTransportOptions(
    refuseShortVerbose(program.command('attach'))
      .description('attach this terminal to a running capsule')
      .argument('[instance]', 'instance name: a local instance, or the container/pod with --via')
      .option('--name <instance>', `${NAME_OPTION_HELP}; the same as giving it as the first argument`),
  )
    .option('--verbose', 'print the chosen transport and why, and protocol diagnostics, on stderr')
    .option('--no-mouse', NO_MOUSE_HELP)
    .option(
      '--allow-upstream-requests',
      "honour link, export and clipboard requests from a capsule without jackin's extensions, one per palette key or click (also JACKIN_UPSTREAM_REQUESTS=allow)",
    )
    .addHelpText(
      'after',
      `
Without --socket/--via/--exec, jackin uses the local socket when it accepts a connection, otherwise
\`<engine> exec -i <instance> jackin-capsule attach-proxy\` with the engine jackin run --image used for
that instance, else docker or podman, whichever is installed.

Keys: Ctrl+\\ then d detaches (the program keeps running); Ctrl+\\ twice sends one Ctrl+\\.

Exit status: the program's exit status; 0 after a detach; non-zero with a one-line reason otherwise.

Examples:
  jackin attach bash
  jackin attach agent --via podman
  jackin attach agent-0 --via kubectl -n dev -c agent
  jackin attach --ssh dev@box agent     a capsule jackin run --ssh started there
  jackin attach box --exec 'ssh box docker exec -i agent jackin-capsule attach-proxy'`,
    )
    .action(async (instance: string | undefined, flags: AttachFlags) => setStatus(await attachCommand(instance, flags)));
}
