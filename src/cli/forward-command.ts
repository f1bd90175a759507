/**
 * `jackin forward NAME SPEC... [--json] [--verbose]` (SPEC: PORT, HOSTPORT:CONTAINERPORT or :CONTAINERPORT): forwards a port of the host's loopback to a port
 * of the container's loopback until Ctrl+C, attached or not, like `kubectl port-forward`
 * (docs/protocol.md section 8.15). Prints the local URL; with --verbose one line per connection, when it ends. Every connection
 * travels on its own connection to the capsule (socket or exec relay, so --via works). The host never
 * reads, stores or logs the forwarded bytes; the start and the end are recorded in `jackin log`.
 */
import type { Command } from './commander.ts';
import { describeError, JackinError } from '../errors.ts';
import { jackinHome } from '../host/instances/instances.ts';
import { appendAction } from '../host/instances/action-log.ts';
import { ForwardListener, type ForwardEvent } from '../host/forward/forward-listener.ts';
import { recordForward } from '../host/forward/forward-registry.ts';
import { announceForwards, type ForwardAnnouncement } from '../host/forward/forward-announce.ts';
import { capsuleHasForwards } from '../transport/forward-connect.ts';
import { selectOptionsFromFlags, selectTransport } from '../transport/select.ts';
import { resolveInstance } from '../host/instances/resolve-instance.ts';
import type { Transport } from '../transport/transport.ts';
import { inertJson, inertText } from '../ui/inert-text.ts';
import type { SetStatus } from './command-kit.ts';
import { interruptOnSignals } from './interrupt-signals.ts';
import { addTransportOptions, withSsh, type TransportFlags } from './transport-options.ts';
import { refuseShortVerbose } from './usage-errors.ts';
import { NAME_OPTION_HELP, requiredInstance } from './instance-option.ts';

interface ForwardFlags extends TransportFlags {
  name?: string;
  json?: boolean;
  verbose?: boolean;
}

/** Host ports below this need root on most hosts: a port below it is forwarded only from a host port at or above it. */
const FIRST_UNPRIVILEGED_PORT = 1024;

function portError(message: string): JackinError {
  return new JackinError('E_FORWARD_PORT', message);
}

/** One forward: a host port (0: pick a free one) to a port of the container's loopback. */
interface PortSpec {
  hostPort: number;
  containerPort: number;
}

/** `PORT`, `HOSTPORT:CONTAINERPORT`, or `:CONTAINERPORT` (any free host port); a host port below 1024 is refused (pass one above it). */
function parsePortSpec(spec: string): PortSpec {
  const m = /^(\d{1,5})?(?::(\d{1,5}))?$/.exec(spec);
  if (m === null || (m[1] === undefined && m[2] === undefined))
    throw portError(`${JSON.stringify(spec)} is not PORT, HOSTPORT:CONTAINERPORT or :CONTAINERPORT`);
  const containerPort = Number(m[2] ?? m[1]);
  if (m[1] === undefined) {
    if (containerPort < 1 || containerPort > 65535) throw portError(`${containerPort} is not a port (1..65535)`);
    return { hostPort: 0, containerPort };
  }
  const hostPort = Number(m[1]);
  for (const p of [hostPort, containerPort]) if (p < 1 || p > 65535) throw portError(`${p} is not a port (1..65535)`);
  if (hostPort < FIRST_UNPRIVILEGED_PORT) {
    throw portError(
      m[2] === undefined
        ? `port ${hostPort} is below ${FIRST_UNPRIVILEGED_PORT} on the host: name a host port above it, e.g. \`jackin forward NAME ${hostPort + 8000}:${hostPort}\`, or let jackin pick one: \`jackin forward NAME :${hostPort}\``
        : `host port ${hostPort} is below ${FIRST_UNPRIVILEGED_PORT}: pick one of ${FIRST_UNPRIVILEGED_PORT} or above`,
    );
  }
  return { hostPort, containerPort };
}

/** Every spec parsed; E_FORWARD_PORT when none is given or two name the same host port. */
function parsePortSpecs(specs: readonly string[]): PortSpec[] {
  if (specs.length === 0) throw portError('name at least one port: PORT, HOSTPORT:CONTAINERPORT or :CONTAINERPORT');
  const parsed = specs.map(parsePortSpec);
  const seen = new Set<number>();
  for (const p of parsed) {
    if (p.hostPort === 0) continue;
    if (seen.has(p.hostPort)) throw portError(`host port ${p.hostPort} is named twice: each forward needs its own host port`);
    seen.add(p.hostPort);
  }
  return parsed;
}

/** Where one connection came from and which container loopback it reached, until it ends. */
interface ConnectionSeen {
  from: string;
  address?: string;
}

/** A connection's one -v line, said when it ends: where from, where to, and how it ended. */
function describeConnection(e: Extract<ForwardEvent, { kind: 'closed' | 'failed' }>, seen: ConnectionSeen | undefined): string {
  const from = seen === undefined ? `connection ${e.id}` : `connection ${e.id} from ${seen.from}`;
  const to = seen?.address === undefined ? '' : ` to ${seen.address === '::1' ? '[::1]' : seen.address}`;
  if (e.kind === 'failed') return `${from} not forwarded: ${inertText(e.error.message, 300)} (${e.error.code})`;
  return e.outcome.ok
    ? `${from}${to}: closed (${e.outcome.sent} bytes sent, ${e.outcome.received} received)`
    : `${from}${to}: ${e.outcome.reason} by ${e.outcome.by === 'local' ? 'the host side' : 'the container side'}: ${inertText(e.outcome.message, 300)}`;
}

async function forwardCommand(positional: readonly string[], flags: ForwardFlags): Promise<number> {
  // With --name every positional is a port; without it the first one is the instance.
  const [first, ...rest] = positional;
  const instance = requiredInstance('forward', [
    ['NAME', flags.name === undefined ? first : undefined],
    ['--name', flags.name],
  ]);
  const specs = parsePortSpecs(flags.name === undefined ? rest : positional);
  const home = jackinHome();
  const select = await withSsh(selectOptionsFromFlags(instance, home, flags), flags);
  const connect = async (): Promise<Transport> => (await selectTransport(select)).transport;
  const json = flags.json === true;
  const out = (line: string): void => void process.stdout.write(`${line}\n`);
  const err = (line: string): void => void process.stderr.write(`jackin: ${line}\n`);

  await resolveInstance(select);
  if (!(await capsuleHasForwards(connect)))
    throw new JackinError(
      'E_FORWARD_UNSUPPORTED',
      `the capsule of ${instance} has no forwards (an upstream or older jackin-capsule); update it in the container`,
    );
  const interruption = interruptOnSignals();
  const listeners: ForwardListener[] = [];
  const unrecords: Array<() => Promise<void>> = [];
  let announcement: ForwardAnnouncement | undefined;
  const several = specs.length > 1;
  try {
    for (const { hostPort, containerPort } of specs) {
      const connections = new Map<number, ConnectionSeen>();
      // Connection ids count per forward: with several, each line also says which forward it went through.
      let bound: ForwardListener | undefined;
      const boundPort = (): number => bound?.port ?? hostPort;
      const which = (): string => (several ? ` (localhost:${boundPort()} -> ${containerPort})` : '');
      const listener = await ForwardListener.listen({
        hostPort,
        containerPort,
        connect,
        onEvent: (e) => {
          if (e.kind === 'accepted') {
            connections.set(e.id, { from: e.from });
            return;
          }
          if (e.kind === 'connected') {
            const seen = connections.get(e.id);
            if (seen !== undefined) seen.address = e.address;
            return;
          }
          const seen = connections.get(e.id);
          connections.delete(e.id);
          if (e.kind === 'failed' && !flags.verbose && !json) err(`${describeConnection(e, seen)}${which()}`);
          if (!flags.verbose) return;
          if (json) {
            const how = e.kind === 'closed' ? { ...e.outcome } : { ok: false, code: e.error.code, message: e.error.message };
            out(
              inertJson({
                connection: e.id,
                ...(several ? { hostPort: boundPort(), containerPort } : {}),
                ...(seen !== undefined ? { from: seen.from } : {}),
                ...(seen?.address !== undefined ? { address: seen.address } : {}),
                ...how,
              }),
            );
          } else err(`${describeConnection(e, seen)}${which()}`);
        },
      });
      bound = listener;
      listeners.push(listener);
      unrecords.push(await recordForward(home, { instance, hostPort: listener.port, containerPort, kind: 'forward' }));
      await appendAction(home, {
        instance,
        action: 'forward',
        target: `localhost:${listener.port} -> ${instance}:${containerPort}`,
        result: 'ok',
        detail: `listening on ${listener.addresses.join(', ')}`,
      });
    }
    // Listed in the container (`jackin-capsule ports`) before the URLs are printed, so an agent told a URL
    // finds it there; an older capsule without the list is not told, and forwards all the same.
    announcement = announceForwards(
      connect,
      listeners.map((l, i) => ({ hostPort: l.port, containerPort: specs[i]!.containerPort, kind: 'forward' as const })),
    );
    const announced = await announcement.settled;
    if (!announced.listed && !announced.unsupported)
      err(`the container's \`jackin-capsule ports\` does not list these forwards: ${inertText(announced.error.message, 300)} (${announced.error.code})`);
    // Said once every port is bound: a port that cannot be bound fails the whole command, nothing half-open.
    specs.forEach(({ containerPort }, i) => {
      const listener = listeners[i]!;
      if (json) out(inertJson({ ok: true, instance, url: listener.url, hostPort: listener.port, containerPort, addresses: listener.addresses }));
      else {
        out(listener.url);
        err(
          `forwarding ${listener.addresses.map((a) => (a === '::1' ? `[::1]:${listener.port}` : `${a}:${listener.port}`)).join(' and ')} to port ${containerPort} of ${inertText(instance, 200)}'s loopback${i === specs.length - 1 ? '; Ctrl+C stops' : ''}`,
        );
      }
    });
    // A Ctrl+C may have come while the ports were bound or announced: it stops the forward all the same.
    await new Promise<void>((resolve) =>
      interruption.signal.aborted ? resolve() : interruption.signal.addEventListener('abort', () => resolve(), { once: true }),
    );
    return 0;
  } catch (e) {
    if (e instanceof JackinError && json) out(inertJson({ ok: false, code: e.code, message: describeError(e) }));
    throw e;
  } finally {
    // Off the container's list first: nothing there names a port that no longer leads to it.
    announcement?.dispose();
    for (const [i, listener] of listeners.entries()) {
      await listener.close();
      await unrecords[i]?.();
      await appendAction(home, {
        instance,
        action: 'forward',
        target: `localhost:${listener.port} -> ${instance}:${specs[i]!.containerPort}`,
        result: 'ok',
        detail: 'closed',
      });
    }
    interruption.dispose();
  }
}

/** Adds `jackin forward` to the CLI. */
export function registerForwardCommand(program: Command, setStatus: SetStatus): void {
  const cmd = program
    .command('forward')
    .description("forward ports of the host's loopback to ports of the container's loopback, until Ctrl+C")
    .usage('[options] <instance> <port...>')
    .argument('[instance]', 'the instance (or give it with --name; then every argument is a port)')
    .argument('[ports...]', 'PORT, HOSTPORT:CONTAINERPORT, or :CONTAINERPORT (any free host port, printed)')
    .option('--name <instance>', `${NAME_OPTION_HELP}; the same as giving it as the first argument`)
    .option('--json', 'print one {"ok":true,"url",...} per port (and, with --verbose, one JSON object per connection) on stdout')
    .option('--verbose', 'print one line per connection on stderr, when it ends: from where, to which loopback, how');
  refuseShortVerbose(cmd);
  addTransportOptions(cmd)
    .addHelpText(
      'after',
      `
The host listens on its own loopback only (127.0.0.1, and ::1 where it has it), never on another address;
the capsule connects to 127.0.0.1, then ::1, of the container, never elsewhere. Each connection travels on
its own connection to the capsule, so it works with --via and --exec, attached or not; at most 32 at once.
The forwarded bytes are never read, stored or logged. A container port below 1024 needs a host port of 1024
or above. Several ports are forwarded at once, each printed (one URL per line, or one JSON object per port
with --json) once all are bound; if one cannot be bound, none is kept. :CONTAINERPORT lets the host pick a
free port. Each port is listed in the container while it runs: \`jackin-capsule ports\` there prints its
host URL. Exit status: 0 after Ctrl+C, 1 when a port is taken, the instance does not exist (E_NO_INSTANCE)
or is dead (E_INSTANCE_DEAD), or the capsule has no forwards, 2 for a bad port.

Examples:
  jackin forward agent 5173                  http://localhost:5173/ -> the container's 5173
  jackin forward agent 8080:80               a container port below 1024, from host port 8080
  jackin forward agent 5173 3000 9229:9229   three ports at once
  jackin forward agent :5173                 any free host port; the URL says which
  jackin forward agent 3000 --via podman --verbose`,
    )
    .action(async (instance: string | undefined, ports: string[], flags: ForwardFlags) =>
      setStatus(await forwardCommand([...(instance !== undefined ? [instance] : []), ...ports], flags)),
    );
}
