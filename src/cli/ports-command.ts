/**
 * `jackin-capsule ports [--json]`: run inside the container (by an agent, a script), lists the ports of the
 * host that lead to this container right now, as the URLs the operator can open on the host. The capsule
 * knows them because each forward announces itself while it runs (docs/protocol.md section 8.18); a
 * forward whose `jackin` ended is gone from the list.
 */
import type { Command } from './commander.ts';
import { JackinError } from '../errors.ts';
import { PORTS_METHOD, readControlReply, type ListedForward, type ListedForwardKind } from '../protocol/index.ts';
import { defaultRunDir } from '../capsule/session/run-dir.ts';
import { runDirSocketPath } from '../transport/instance-paths.ts';
import { controlRequest } from '../transport/control-request.ts';
import { writeAll } from './command-kit.ts';

const KIND_WORDS: Readonly<Record<ListedForwardKind, string>> = {
  forward: 'jackin forward',
  login: 'login callback',
  offered: 'offered port',
};

/** What the operator opens on the host to reach `f`. */
function hostUrl(f: ListedForward): string {
  return `http://localhost:${f.hostPort}/`;
}

/** The listing: one line per forward, or one sentence saying there is none. */
export function formatPorts(forwards: readonly ListedForward[]): string {
  if (forwards.length === 0) return 'no port of the host leads to this container now (the operator forwards one with `jackin forward NAME PORT` on the host)\n';
  return forwards.map((f) => `${hostUrl(f)} -> container port ${f.containerPort} (${KIND_WORDS[f.kind]})\n`).join('');
}

/** The listing as JSON: an array of {hostPort, containerPort, url, kind}, empty when nothing is forwarded. */
export function portsJson(forwards: readonly ListedForward[]): string {
  return `${JSON.stringify(forwards.map((f) => ({ hostPort: f.hostPort, containerPort: f.containerPort, url: hostUrl(f), kind: f.kind })))}\n`;
}

async function portsCommand(runDir: string, json: boolean): Promise<void> {
  const socketPath = runDirSocketPath(runDir);
  let reply: unknown;
  try {
    reply = await controlRequest(socketPath, PORTS_METHOD, {});
  } catch (e) {
    throw new JackinError(
      'E_NO_CAPSULE',
      `no capsule answers at ${socketPath} (${e instanceof Error ? e.message : String(e)}); set JACKIN_RUN_DIR or pass --run-dir`,
      { cause: e },
    );
  }
  const { forwards } = readControlReply(PORTS_METHOD, reply);
  await writeAll(process.stdout, json ? portsJson(forwards) : formatPorts(forwards));
}

export function registerPortsCommand(program: Command): void {
  program
    .command('ports')
    .description("List the host's ports that lead to this container now, as URLs the operator can open on the host.")
    .option('--run-dir <dir>', 'run directory of the capsule (default: $JACKIN_RUN_DIR or /jackin/run)')
    .option('--json', 'print a JSON array of {"hostPort","containerPort","url","kind"} (empty when nothing is forwarded)')
    .addHelpText(
      'after',
      `
Each line is a URL on the operator's host and the port of this container's loopback it reaches: a
\`jackin forward\` running on the host (kind "forward"), or a login link's callback (kind "login"). A
program that listens on 5173 in here is reached at the URL that names container port 5173; print that URL,
not http://localhost:5173/, which on the host is the host's own port. A forward is listed while it runs
and gone once it stops. With nothing forwarded, it says so and exits 0.

Exit status: 0, also when nothing is forwarded; 1 when no capsule answered (E_NO_CAPSULE).

Examples:
  jackin-capsule ports
  jackin-capsule ports --json`,
    )
    .action(async (opts: { runDir?: string; json?: boolean }) => {
      await portsCommand(opts.runDir ?? defaultRunDir(), opts.json === true);
    });
}
