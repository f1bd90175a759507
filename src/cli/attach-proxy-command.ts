/** `jackin-capsule attach-proxy`: relays stdio to the capsule socket for hosts that come through an exec relay. */
import type { Command } from './commander.ts';
import { runAttachProxy } from '../capsule/attach-proxy.ts';
import { defaultRunDir } from '../capsule/session/run-dir.ts';
import { runDirSocketPath, SOCKET_NAME } from '../transport/instance-paths.ts';
import type { SetStatus } from './command-kit.ts';

export function registerAttachProxyCommand(program: Command, setStatus: SetStatus): void {
  program
    .command('attach-proxy')
    .description('Relay stdin/stdout to the capsule socket, byte for byte (used by `jackin attach --via docker|podman|kubectl`).')
    .option('--socket <path>', `socket to connect to (default: $JACKIN_RUN_DIR/${SOCKET_NAME}, or /jackin/run/${SOCKET_NAME})`)
    .addHelpText(
      'after',
      `
Exit status: 0 once both directions have ended, 1 when the socket cannot be reached.

Example (what jackin attach --via docker runs):
  docker exec -i agent jackin-capsule attach-proxy`,
    )
    .action(async (opts: { socket?: string }) => {
      setStatus(await runAttachProxy({ socketPath: opts.socket ?? runDirSocketPath(defaultRunDir()) }));
    });
}
