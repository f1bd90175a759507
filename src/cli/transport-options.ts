/** The options that choose how a host command reaches a capsule: `jackin attach`, `export`, `stage` and `forward` share them. */
import { Option, type Command } from './commander.ts';
import { ENGINES, type Engine, type SelectOptions } from '../transport/select.ts';
import { checkInstanceName } from '../transport/instance-paths.ts';
import { jackinHome } from '../host/instances/instances.ts';
import { RemoteMachine } from '../host/instances/remote-capsule.ts';
import { PACKAGE_ROOT } from '../package-root.ts';
import { capsuleFromEnv } from '../host/instances/capsule-choice.ts';

export interface TransportFlags {
  socket?: string;
  via?: Engine;
  namespace?: string;
  container?: string;
  exec?: string;
  ssh?: string;
}

const SSH_OPTION_HELP = 'reach the capsule on that machine over ssh ([user@]host[:port]; ssh as you run it, or JACKIN_SSH_COMMAND)';

/** Adds --socket, --via, -n/--namespace, -c/--container, --exec and --ssh to `command`. */
export function addTransportOptions(command: Command): Command {
  return command
    .option('--socket <path>', 'connect to this Unix socket instead of $JACKIN_HOME/sockets/<instance>/jackin.sock')
    .addOption(new Option('--via <engine>', 'reach the capsule through `<engine> exec -i <instance> jackin-capsule attach-proxy`').choices(ENGINES))
    .option('-n, --namespace <ns>', 'Kubernetes namespace (with --via kubectl)')
    .option('-c, --container <name>', 'container in the pod (with --via kubectl)')
    .option('--exec <command>', 'run this relay command with `sh -c`; its stdin/stdout must reach the capsule socket')
    .option('--ssh <host>', SSH_OPTION_HELP);
}

/** The remote machine `--ssh TARGET` names, for one command; progress lines go to stderr. */
export function remoteMachine(target: string): RemoteMachine {
  return new RemoteMachine(target, {
    home: jackinHome(),
    env: process.env,
    packageRoot: PACKAGE_ROOT,
    nodePath: process.execPath,
    status: (line) => void process.stderr.write(`${line}\n`),
    // JACKIN_CAPSULE=runtime copies the capsule runtime even where the host's own Node would run.
    ...(capsuleFromEnv(process.env) === 'runtime' ? { capsule: 'runtime' as const } : {}),
  });
}

/**
 * With --ssh, the selection reaches the instance on that machine: the connection is opened now (a host key
 * or password question reaches the terminal before a session takes it over) and the runtime made ready.
 */
export async function withSsh(select: SelectOptions, flags: TransportFlags): Promise<SelectOptions> {
  if (flags.ssh === undefined) return select;
  const remote = remoteMachine(flags.ssh);
  return { ...select, sshRelay: await remote.relayArgv(checkInstanceName(select.instance)) };
}
