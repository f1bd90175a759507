/**
 * Picks how `jackin attach` reaches a capsule, and says why (printed with --verbose):
 * --socket PATH, --via ENGINE or --exec CMD when given (at most one); otherwise the instance's socket under
 * $JACKIN_HOME when it accepts a connection, else `docker exec` on a container of that name.
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { JackinError } from '../errors.ts';
import { containerState, onPath } from './container-engine.ts';
import { readContainerRecord } from './container-record.ts';
import { instanceSocketPath } from './instance-paths.ts';
import { relayArgv, type Engine, type RelaySpec } from './exec-args.ts';

export { ENGINES, type Engine } from './exec-args.ts';
import { relayTransport, spawnRelay } from './exec-relay.ts';
import { connectSocket, connectSocketTransport, isNotListening, isPermissionDenied, socketTransport } from './socket.ts';
import { waitForSocket } from './socket-wait.ts';
import { acrossVmBoundary, boundaryReason, rememberBoundary, rememberedBoundary } from './socket-boundary.ts';
import type { OnRead } from './borrowed-reads.ts';
import type { ConnectOptions, Transport } from './transport.ts';

/**
 * How long `attach` and `export` wait for a socket that is about to appear: a container started with
 * `run -d` a moment ago whose capsule has not opened it yet (Node and the PTY take a few hundred ms).
 */
const SOCKET_APPEAR_TIMEOUT_MS = 10_000;
const SOCKET_APPEAR_POLL_MS = 50;
/** How long a permission refusal is taken for a socket being handed over (see connectSoon), not a real one. */
export const SOCKET_HANDOVER_GRACE_MS = 2_000;
/** How often the engine is asked, while waiting, whether the container still runs. */
const CONTAINER_CHECK_MS = 1_000;

export interface SelectOptions {
  instance: string;
  jackinHome: string;
  socket?: string;
  via?: Engine;
  namespace?: string;
  container?: string;
  exec?: string;
  /** `--ssh HOST`: the relay argv to the instance on that machine, made ready by the command (src/cli/transport-options.ts). */
  sshRelay?: readonly string[];
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
  return new JackinError('E_USAGE', message);
}

/** Pure: what to try, from the flags alone. */
export function planTransport(o: SelectOptions): Plan {
  const given = [
    o.socket !== undefined && '--socket',
    o.via !== undefined && '--via',
    o.exec !== undefined && '--exec',
    o.sshRelay !== undefined && '--ssh',
  ].filter((x): x is string => x !== false);
  if (given.length > 1) throw usage(`${given.join(' and ')} cannot be combined: pick one transport`);
  if ((o.namespace !== undefined || o.container !== undefined) && o.via !== 'kubectl') {
    throw usage('--namespace and --container apply only to --via kubectl');
  }
  if (o.socket !== undefined) return { kind: 'socket', path: o.socket, reason: '--socket was given' };
  if (o.exec !== undefined) return { kind: 'relay', spec: { kind: 'custom', command: o.exec }, reason: '--exec was given' };
  if (o.sshRelay !== undefined) return { kind: 'relay', spec: { kind: 'ssh', argv: o.sshRelay }, reason: '--ssh was given' };
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

/** Starts the exec relay of `spec`; `reason` is said with --verbose. */
export async function startRelay(spec: RelaySpec, reason: string): Promise<Selection> {
  const exec = await spawnRelay(relayArgv(spec));
  return { transport: relayTransport(exec), choice: spec.kind, reason };
}

/** The relay to try when the socket does not answer: the recorded engine, else an installed one. */
function fallbackRelay(o: SelectOptions): RelaySpec | null {
  const record = readContainerRecord(o.jackinHome, o.instance);
  if (record !== null) return { kind: record.engine, target: record.container };
  if (onPath('docker')) return { kind: 'docker', target: o.instance };
  if (onPath('podman')) return { kind: 'podman', target: o.instance };
  return null;
}

/**
 * Connects to the instance's socket. When it is not there yet but the instance is starting (a container
 * `jackin run --image` recorded that still runs, or a run directory a container mounts with no local
 * capsule's log in it), waits for it up to SOCKET_APPEAR_TIMEOUT_MS.
 */
async function connectSoon(o: SelectOptions, path: string, onread: OnRead | undefined): Promise<Awaited<ReturnType<typeof connectSocket>>> {
  const record = readContainerRecord(o.jackinHome, o.instance);
  const runDir = dirname(path);
  const starting = record !== null || (existsSync(runDir) && !existsSync(join(runDir, 'capsule.log')));
  if (!starting) return connectSocket(path, onread !== undefined ? { onread } : {});
  const permissionGrace = Date.now() + SOCKET_HANDOVER_GRACE_MS;
  let nextCheck = 0;
  let last: JackinError | undefined;
  return waitForSocket(
    path,
    {
      timeoutMs: SOCKET_APPEAR_TIMEOUT_MS,
      pollMs: SOCKET_APPEAR_POLL_MS,
      refused: (e) => {
        // A capsule running as root hands its new socket to the run directory's owner a moment after binding it.
        const handingOver = isPermissionDenied(e) && Date.now() < permissionGrace;
        if (!(isNotListening(e) || handingOver)) throw e;
        last = e;
      },
      check: async () => {
        if (record !== null && Date.now() >= nextCheck) {
          nextCheck = Date.now() + CONTAINER_CHECK_MS;
          const state = await containerState(record.engine, record.container);
          if (state !== 'running' && state !== 'created') {
            throw new JackinError(
              'E_CONTAINER_STOPPED',
              `container ${record.container} of instance ${o.instance} is ${state === null ? 'gone' : `not running (${record.engine} says: ${state})`}: start it again with \`jackin run --image ${record.image} --name ${o.instance}\``,
            );
          }
        }
        // The capsule is up and its socket still refuses: across a VM boundary it never will (socket-boundary.ts).
        if (last !== undefined && (await acrossVmBoundary(path, last))) {
          await rememberBoundary(o.jackinHome, o.instance, path);
          throw new JackinError('E_SOCKET_UNAVAILABLE', boundaryReason(path), { cause: last });
        }
      },
      // The last refusal says best why the socket never came.
      timedOut: (last) => last,
    },
    onread,
  );
}

/** Connects as planned. Errors: E_USAGE, E_BAD_TARGET, E_SOCKET_UNAVAILABLE, E_SOCKET_PERMISSION, E_CONTAINER_STOPPED, E_INSTANCE_UNREACHABLE, E_RELAY_SPAWN. */
export async function selectTransport(o: SelectOptions, { borrowedReads }: ConnectOptions = {}): Promise<Selection> {
  const plan = planTransport(o);
  const onread = borrowedReads?.onread;
  switch (plan.kind) {
    case 'socket': {
      // The operator named this path: it may be a symlink of theirs.
      const transport = await connectSocketTransport(plan.path, borrowedReads !== undefined ? { borrowedReads } : {}, { followSymlink: true });
      return { transport, choice: 'socket', reason: plan.reason };
    }
    case 'relay':
      return startRelay(plan.spec, plan.reason);
    case 'auto': {
      let why: string;
      try {
        if (await rememberedBoundary(o.jackinHome, o.instance, plan.path)) {
          throw new JackinError('E_SOCKET_UNAVAILABLE', `${boundaryReason(plan.path)} (found before, remembered for ${o.instance})`);
        }
        const sock = await connectSoon(o, plan.path, onread);
        return { transport: socketTransport(sock, plan.path, borrowedReads), choice: 'socket', reason: `socket ${plan.path} accepted a connection` };
      } catch (e) {
        if (!(e instanceof JackinError)) throw e;
        // A socket that refuses us belongs to a capsule running as another user: an exec relay would only
        // hide that behind an unrelated error (and a missing docker), so say it.
        if (isPermissionDenied(e)) throw new JackinError('E_SOCKET_PERMISSION', e.message, { cause: e });
        if (e.code === 'E_CONTAINER_STOPPED') throw e;
        why = e.message;
      }
      const fallback = fallbackRelay(o);
      if (fallback === null) {
        throw new JackinError(
          'E_INSTANCE_UNREACHABLE',
          `cannot reach instance ${JSON.stringify(o.instance)}: ${why}, and neither docker nor podman is installed to reach a container of that name; start it with \`jackin run --name ${o.instance}\` or pass --socket/--via/--exec`,
        );
      }
      try {
        return await startRelay(fallback, `${why}; falling back to ${fallback.kind} exec`);
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
