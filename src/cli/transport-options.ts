/** The options that choose how a host command reaches a capsule: `jackin attach` and `jackin export` share them. */
import { Option, type Command } from './commander.ts';
import { ENGINES, type Engine } from '../transport/select.ts';

export interface TransportFlags {
  socket?: string;
  via?: Engine;
  namespace?: string;
  container?: string;
  exec?: string;
}

/** Adds --socket, --via, -n/--namespace, -c/--container and --exec to `command`. */
export function addTransportOptions(command: Command): Command {
  return command
    .option('--socket <path>', 'connect to this Unix socket instead of $JACKIN_HOME/sockets/<instance>/jackin.sock')
    .addOption(new Option('--via <engine>', 'reach the capsule through `<engine> exec -i <instance> jackin-capsule attach-proxy`').choices(ENGINES))
    .option('-n, --namespace <ns>', 'Kubernetes namespace (with --via kubectl)')
    .option('-c, --container <name>', 'container in the pod (with --via kubectl)')
    .option('--exec <command>', 'run this relay command with `sh -c`; its stdin/stdout must reach the capsule socket');
}
