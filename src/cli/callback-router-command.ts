/**
 * `jackin callback-router PORT` (hidden): the login callback router of one host port, started detached by
 * the first session that opens a login link calling back to PORT (src/host/forward/callback-router.ts). Its
 * first line on stdout tells that session how it went: `ready`, `live` (another router has the port), or a
 * JSON `{"error":{code,message}}`; then it writes nothing more and exits once its last session is gone.
 */
import type { Command } from './commander.ts';
import { JackinError } from '../errors.ts';
import { CallbackRouter } from '../host/forward/callback-router.ts';
import { jackinHome } from '../host/instances/instances.ts';
import { writeAll, type SetStatus } from './command-kit.ts';

async function callbackRouterCommand(portText: string): Promise<number> {
  const port = Number(portText);
  if (!Number.isInteger(port) || port < 1024 || port > 65535) {
    await writeAll(process.stdout, `${JSON.stringify({ error: { code: 'E_USAGE', message: `not a port of 1024 to 65535: ${portText.slice(0, 20)}` } })}\n`);
    return 2;
  }
  let router: CallbackRouter | 'live';
  try {
    router = await CallbackRouter.start(jackinHome(), port);
  } catch (e) {
    const code = e instanceof JackinError ? e.code : 'E_CALLBACK_ROUTER';
    await writeAll(process.stdout, `${JSON.stringify({ error: { code, message: e instanceof Error ? e.message : String(e) } })}\n`);
    return 1;
  }
  // The starter reads one line, then closes the pipe: nothing is written after it.
  await writeAll(process.stdout, router === 'live' ? 'live\n' : 'ready\n').catch(() => {});
  if (router !== 'live') await router.closed;
  return 0;
}

export function registerCallbackRouterCommand(program: Command, setStatus: SetStatus): void {
  program
    .command('callback-router <port>', { hidden: true })
    .description('route the login callbacks of a host port to the sessions that opened their links (started by jackin itself)')
    .action(async (port: string) => setStatus(await callbackRouterCommand(port)));
}
