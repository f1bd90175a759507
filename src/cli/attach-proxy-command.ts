/** `jackin-capsule attach-proxy`: relays stdio to the capsule socket for hosts that come through an exec relay. */
import { join } from 'node:path';
import type { Command } from 'commander';
import { runAttachProxy } from '../capsule/attach-proxy.ts';
import { SOCKET_NAME } from '../capsule/run-dir.ts';
import { defaultRunDir } from '../capsule/serve.ts';
import type { SetStatus } from './command-kit.ts';

export function registerAttachProxyCommand(program: Command, setStatus: SetStatus): void {
  program
    .command('attach-proxy')
    .description(
      'Relay stdin/stdout to the capsule socket, byte for byte (used by `jackin attach --via docker|podman|kubectl`).',
    )
    .option('--socket <path>', `socket to connect to (default: <run-dir>/${SOCKET_NAME})`)
    .action(async (opts: { socket?: string }) => {
      setStatus(await runAttachProxy({ socketPath: opts.socket ?? join(defaultRunDir(), SOCKET_NAME) }));
    });
}
