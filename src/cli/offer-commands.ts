/**
 * `jackin-capsule open-url <url>` and `jackin-capsule offer <path>`: run inside the container (as BROWSER,
 * as an `xdg-open` shim, or by an agent) to offer the operator a link or a file. They only record an
 * offer in the capsule through its control channel; nothing opens or is written on the host until the
 * operator acts.
 */
import { resolve } from 'node:path';
import type { Command } from './commander.ts';
import { JackinError } from '../errors.ts';
import { OFFER_FILE_METHOD, OFFER_URL_METHOD, readControlReply, type ControlMethod } from '../protocol/index.ts';
import { defaultRunDir } from '../capsule/session/run-dir.ts';
import { runDirSocketPath } from '../transport/instance-paths.ts';
import { controlRequest } from '../transport/control-request.ts';

/** Text that reads as a file path rather than a URL: `xdg-open ./report.html`, `/tmp/x`, `~/x`, `file:`. */
function looksLikeFilePath(arg: string): boolean {
  return /^(?:\/|\.{1,2}(?:\/|$)|~(?:\/|$))/u.test(arg) || /^file:/iu.test(arg);
}

async function send<Name extends string, Params>(runDir: string, method: ControlMethod<Name, Params, unknown, unknown>, params: Params): Promise<void> {
  const socketPath = runDirSocketPath(runDir);
  let reply: unknown;
  try {
    reply = await controlRequest(socketPath, method, params);
  } catch (e) {
    throw new JackinError(
      'E_NO_CAPSULE',
      `no capsule answers at ${socketPath} (${e instanceof Error ? e.message : String(e)}); set JACKIN_RUN_DIR or pass --run-dir`,
      { cause: e },
    );
  }
  readControlReply(method, reply);
}

/** Offers a URL; refuses file paths (offer those with `jackin-capsule offer`). */
async function openUrlCommand(url: string, runDir: string): Promise<void> {
  if (looksLikeFilePath(url)) {
    throw new JackinError('E_URL_SCHEME', `${JSON.stringify(url)} is a file path, not a link; offer a file with: jackin-capsule offer <path>`);
  }
  await send(runDir, OFFER_URL_METHOD, { url });
}

/** Offers a file; a relative path resolves against `cwd`. */
async function offerFileCommand(path: string, runDir: string, cwd: string = process.cwd()): Promise<void> {
  await send(runDir, OFFER_FILE_METHOD, { path: resolve(cwd, path) });
}

export function registerOpenUrlCommand(program: Command): void {
  program
    .command('open-url')
    .description('Offer a link to the operator (install as BROWSER and as xdg-open): nothing opens until they choose "Open offered link".')
    .option('--run-dir <dir>', 'run directory of the capsule (default: $JACKIN_RUN_DIR or /jackin/run)')
    .argument('<url>', 'http, https or mailto link (put -- before it when it starts with -)')
    .addHelpText(
      'after',
      `
Exit status: 0 when the offer was recorded (not when a browser opened), 1 when the link was refused or no
capsule answered.

Examples:
  jackin-capsule open-url -- https://example.com/login
  BROWSER=/usr/local/bin/jackin-browser gh auth login    a shim that runs open-url (docs/guide.md)`,
    )
    .action(async (url: string, opts: { runDir?: string }) => {
      await openUrlCommand(url, opts.runDir ?? defaultRunDir());
    });
}

export function registerOfferCommand(program: Command): void {
  program
    .command('offer')
    .description('Offer a file to the operator: nothing is copied until they pull it ("Pull offered file" or `jackin export --offered`).')
    .option('--run-dir <dir>', 'run directory of the capsule (default: $JACKIN_RUN_DIR or /jackin/run)')
    .argument('<path>', 'the file (relative to the current directory)')
    .addHelpText(
      'after',
      `
Exit status: 0 when the offer was recorded, 1 when the capsule refused it or no capsule answered.

Example:
  jackin-capsule offer out/report.pdf     then, on the host: jackin export --offered`,
    )
    .action(async (path: string, opts: { runDir?: string }) => {
      await offerFileCommand(path, opts.runDir ?? defaultRunDir());
    });
}
