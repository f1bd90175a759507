/**
 * The fast path of `jackin-capsule attach-proxy`, the relay an exec transport (`docker exec -i … attach-proxy`)
 * starts once per attach and per export. It parses its one option by hand and loads only the relay: no
 * commander, no protocol, no PTY, so a relay starts about as fast as Node itself. Anything it does not
 * recognise (--help, a typo) goes to the full CLI, which gives the usual help and errors.
 */
import { describeError, JackinError } from '../errors.ts';
import { runAttachProxy } from '../capsule/attach-proxy.ts';
import { defaultRunDir } from '../capsule/session/run-dir.ts';
import { runDirSocketPath } from '../transport/instance-paths.ts';

/** The socket path for `attach-proxy [--socket PATH]`, or null when the arguments need the full CLI. */
export function fastProxySocket(args: readonly string[], env: NodeJS.ProcessEnv = process.env): string | null {
  if (args[0] !== 'attach-proxy') return null;
  if (args.length === 1) return runDirSocketPath(defaultRunDir(env));
  if (args.length === 3 && args[1] === '--socket' && args[2] !== undefined && args[2] !== '' && !args[2].startsWith('-')) return args[2];
  if (args.length === 2 && args[1]!.startsWith('--socket=') && args[1]!.length > '--socket='.length) return args[1]!.slice('--socket='.length);
  return null;
}

/** Runs the relay and exits; same error line and status as the full CLI. */
export async function proxyMain(socketPath: string): Promise<void> {
  try {
    process.exit(await runAttachProxy({ socketPath }));
  } catch (e) {
    const code = e instanceof JackinError ? e.code : 'E_INTERNAL';
    process.stderr.write(`jackin-capsule: ${code}: ${describeError(e)}\n`);
    process.exit(e instanceof JackinError ? e.exitCode : 1);
  }
}
