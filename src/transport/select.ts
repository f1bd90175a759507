/**
 * Picks how `jackin attach` reaches a capsule, and says why (printed with --verbose):
 * --socket PATH, --via ENGINE or --exec CMD when given (at most one); otherwise the instance's socket under
 * $JACKIN_HOME when it accepts a connection, else `docker exec` on a container of that name.
 */
import { join } from 'node:path';
import { JackinError } from '../errors.ts';
import { relayArgv, type RelaySpec } from './exec-args.ts';
import { relayTransport, spawnRelay } from './exec-relay.ts';
import { connectSocket, socketTransport } from './socket.ts';
import type { Transport } from './transport.ts';

export const ENGINES = ['docker', 'podman', 'kubectl'] as const;
export type Engine = (typeof ENGINES)[number];

export interface SelectOptions {
  instance: string;
  jackinHome: string;
  socket?: string;
  via?: Engine;
  namespace?: string;
  container?: string;
  exec?: string;
}

/** The transport flags shared by `jackin attach` and `jackin export`, as selection options. */
export function selectOptionsFromFlags(
  instance: string,
  jackinHome: string,
  flags: { socket?: string; via?: Engine; namespace?: string; container?: string; exec?: string },
): SelectOptions {
  return {
    instance,
    jackinHome,
    ...(flags.socket !== undefined ? { socket: flags.socket } : {}),
    ...(flags.via !== undefined ? { via: flags.via } : {}),
    ...(flags.namespace !== undefined ? { namespace: flags.namespace } : {}),
    ...(flags.container !== undefined ? { container: flags.container } : {}),
    ...(flags.exec !== undefined ? { exec: flags.exec } : {}),
  };
}

export type Plan =
  | { kind: 'socket'; path: string; reason: string }
  | { kind: 'relay'; spec: RelaySpec; reason: string }
  /** Try the socket; on failure fall back to the relay. */
  | { kind: 'auto'; path: string; fallback: RelaySpec };

export interface Selection {
  transport: Transport;
  /** 'socket', or the relay kind. */
  choice: 'socket' | RelaySpec['kind'];
  reason: string;
}

function usage(message: string): JackinError {
  return new JackinError('E_USAGE', message, { exitCode: 2 });
}

/** An instance name is a directory name under $JACKIN_HOME/sockets: no separators, no dot-dirs. */
export function checkInstanceName(name: string): string {
  if (name.length === 0 || name.length > 128 || name === '.' || name === '..' || /[/\\\0\n\r]/.test(name) || name.startsWith('-')) {
    throw usage(`invalid instance name ${JSON.stringify(name)}: use letters, digits, "." "_" "-" (no "/", not starting with "-")`);
  }
  return name;
}

/** The run directory of a local instance. */
export function instanceRunDir(jackinHome: string, instance: string): string {
  return join(jackinHome, 'sockets', checkInstanceName(instance));
}

/** The socket of a local instance. */
export function instanceSocketPath(jackinHome: string, instance: string): string {
  return join(instanceRunDir(jackinHome, instance), 'jackin.sock');
}

/** Pure: what to try, from the flags alone. */
export function planTransport(o: SelectOptions): Plan {
  const given = [o.socket !== undefined && '--socket', o.via !== undefined && '--via', o.exec !== undefined && '--exec'].filter(
    (x): x is string => x !== false,
  );
  if (given.length > 1) throw usage(`${given.join(' and ')} cannot be combined: pick one transport`);
  if ((o.namespace !== undefined || o.container !== undefined) && o.via !== 'kubectl') {
    throw usage('--namespace and --container apply only to --via kubectl');
  }
  if (o.socket !== undefined) return { kind: 'socket', path: o.socket, reason: '--socket was given' };
  if (o.exec !== undefined) return { kind: 'relay', spec: { kind: 'custom', command: o.exec }, reason: '--exec was given' };
  if (o.via !== undefined) {
    const reason = `--via ${o.via} was given`;
    if (o.via === 'kubectl') {
      const spec: RelaySpec = { kind: 'kubectl', pod: o.instance };
      if (o.namespace !== undefined) spec.namespace = o.namespace;
      if (o.container !== undefined) spec.container = o.container;
      return { kind: 'relay', spec, reason };
    }
    return { kind: 'relay', spec: { kind: o.via, target: o.instance }, reason };
  }
  return { kind: 'auto', path: instanceSocketPath(o.jackinHome, o.instance), fallback: { kind: 'docker', target: o.instance } };
}

async function startRelay(spec: RelaySpec, reason: string): Promise<Selection> {
  const exec = await spawnRelay(relayArgv(spec));
  return { transport: relayTransport(exec), choice: spec.kind, reason };
}

/** Connects as planned. Errors: E_USAGE, E_BAD_TARGET, E_SOCKET_UNAVAILABLE, E_RELAY_SPAWN. */
export async function selectTransport(o: SelectOptions): Promise<Selection> {
  const plan = planTransport(o);
  switch (plan.kind) {
    case 'socket': {
      const sock = await connectSocket(plan.path);
      return { transport: socketTransport(sock, plan.path), choice: 'socket', reason: plan.reason };
    }
    case 'relay':
      return startRelay(plan.spec, plan.reason);
    case 'auto': {
      let why: string;
      try {
        const sock = await connectSocket(plan.path);
        return { transport: socketTransport(sock, plan.path), choice: 'socket', reason: `socket ${plan.path} accepted a connection` };
      } catch (e) {
        if (!(e instanceof JackinError)) throw e;
        why = e.message;
      }
      try {
        return await startRelay(plan.fallback, `${why}; falling back to docker exec`);
      } catch (e) {
        if (e instanceof JackinError && e.code === 'E_RELAY_SPAWN') {
          throw new JackinError(
            'E_INSTANCE_UNREACHABLE',
            `cannot reach instance ${JSON.stringify(o.instance)}: ${why}, and ${e.message}; start it with \`jackin run --name ${o.instance}\` or pass --via/--exec`,
            { cause: e },
          );
        }
        throw e;
      }
    }
    default: {
      const never: never = plan;
      throw new TypeError(`unexpected plan ${JSON.stringify(never)}`);
    }
  }
}
