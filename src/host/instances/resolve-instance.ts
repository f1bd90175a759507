/**
 * The one check every command that targets an instance makes before it reaches it (attach, export, stage,
 * forward): does the name name anything, and is it running? Without it each command met a missing name only
 * as a failed connection and said so in its own words ("lost connection", "export it again", "the capsule has
 * no forwards", "the docker engine is not reachable"). Here a name that matches nothing is E_NO_INSTANCE,
 * saying where jackin looked; a local capsule that died and left its run directory is E_INSTANCE_DEAD.
 *
 * It only diagnoses: the transport is still chosen (and the connection made) by selectTransport.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { JackinError } from '../../errors.ts';
import { lookupContainer, lookupPod, onPath, type ContainerEngine, type ContainerLookup } from '../../transport/container-engine.ts';
import { readContainerRecord } from '../../transport/container-record.ts';
import { instanceRunDir, runDirSocketPath, SOCKET_NAME } from '../../transport/instance-paths.ts';
import type { SelectOptions } from '../../transport/select.ts';
import { connectSocket, isNotListening } from '../../transport/socket.ts';
import { capsuleInHostPidNamespace } from './instances.ts';

/** A live capsule accepts at once; this only bounds a socket that neither accepts nor refuses. */
const LOCAL_PROBE_TIMEOUT_MS = 1_000;

/** What a local run directory shows of its instance. */
export type LocalState = 'none' | 'starting' | 'answers' | 'dead';

/**
 * none: no run directory, or one whose capsule ended cleanly (only its log is left); starting: a run directory
 * a container mounts, whose capsule may not have opened its socket yet (selectTransport waits for it), empty
 * or not;
 * answers: its socket accepts a connection, or refuses this user (another user's capsule: selectTransport
 * says so); dead: a local capsule (`jackin run` wrote its log, or capsule.json names a pid of this host's PID
 * namespace) left its socket or capsule.json, and nothing listens.
 */
export async function localState(runDir: string): Promise<LocalState> {
  const has = (file: string): boolean => existsSync(join(runDir, file));
  if (!existsSync(runDir)) return 'none';
  // A run directory made for a container about to start (the guide's `mkdir`, then `docker run -d`) holds
  // nothing yet: starting, and the connection waits for its socket. One holding only a log ended cleanly.
  if (!(has(SOCKET_NAME) || has('capsule.json'))) return has('capsule.log') ? 'none' : 'starting';
  if (!has('capsule.log') && !(await capsuleInHostPidNamespace(runDir))) return 'starting';
  try {
    (await connectSocket(runDirSocketPath(runDir), { timeoutMs: LOCAL_PROBE_TIMEOUT_MS })).destroy();
    return 'answers';
  } catch (e) {
    return isNotListening(e) ? 'dead' : 'answers';
  }
}

function noInstance(name: string, looked: string): JackinError {
  return new JackinError(
    'E_NO_INSTANCE',
    `no instance named ${name}: ${looked}; \`jackin ls\` lists the local instances, \`jackin run --name ${name}\` starts one`,
  );
}

/** E_INSTANCE_DEAD for a local run directory whose capsule is gone (also used by `jackin stop`). */
export function instanceDead(name: string, runDir: string): JackinError {
  return new JackinError(
    'E_INSTANCE_DEAD',
    `the capsule of ${name} is not running: it left its run directory ${runDir} behind, and nothing listens on its socket; remove it with \`jackin rm ${name}\`, or start it again with \`jackin run --name ${name}\``,
  );
}

/** E_NO_INSTANCE for a name with no local run directory, when no engine was asked (`jackin stop`, `jackin log`). */
export function noLocalInstance(name: string, home: string, also = ''): JackinError {
  return noInstance(name, `none in ${join(home, 'sockets')}${also}`);
}

/** E_NO_INSTANCE or E_CONTAINER_STOPPED from an engine's answer; null when the container runs or the engine could not say. */
function fromEngine(name: string, engine: ContainerEngine, found: ContainerLookup, looked: string): JackinError | null {
  if (found.kind === 'absent') return noInstance(name, `${looked}${engine} has no container of that name (\`${engine} ps -a\` lists them)`);
  if (found.kind === 'found' && found.state !== 'running' && found.state !== 'created') {
    return new JackinError(
      'E_CONTAINER_STOPPED',
      `container ${name} is not running (${engine} says: ${found.state}): start it with \`${engine} start ${name}\``,
    );
  }
  return null;
}

/**
 * Throws E_NO_INSTANCE, E_INSTANCE_DEAD or E_CONTAINER_STOPPED when the instance `o` names cannot be reached
 * for that reason; returns when it may be (the connection then says anything else). --socket and --exec
 * name no instance to look for; --via kubectl asks kubectl for the pod (a cluster it cannot reach is left
 * to the relay to say).
 */
export async function resolveInstance(o: SelectOptions): Promise<void> {
  // The relay says what it found: an --exec command, or the capsule's attach-proxy on an --ssh machine.
  if (o.socket !== undefined || o.exec !== undefined || o.sshRelay !== undefined) return;
  if (o.via === 'kubectl') {
    // Asked while the relay starts (attach), or once before the transfer: kubectl's NotFound is the name's.
    const found = await lookupPod(o.instance, o.namespace);
    if (found.kind === 'absent') {
      const where = o.namespace !== undefined ? ` in namespace ${o.namespace}` : ' in your current namespace';
      throw noInstance(o.instance, `kubectl has no pod of that name${where} (\`kubectl get pods\` lists them)`);
    }
    return;
  }
  if (o.via !== undefined) {
    const found = await lookupContainer(o.via, o.instance);
    const e = fromEngine(o.instance, o.via, found, '');
    if (e !== null) throw e;
    return;
  }
  // A container `jackin run --image` started: selectTransport asks its engine whether it still runs.
  if (readContainerRecord(o.jackinHome, o.instance) !== null) return;
  const runDir = instanceRunDir(o.jackinHome, o.instance);
  const local = await localState(runDir);
  if (local === 'dead') throw instanceDead(o.instance, runDir);
  if (local !== 'none') return;
  // The engine selectTransport falls back to, and only that one.
  const engine: ContainerEngine | null = onPath('docker') ? 'docker' : onPath('podman') ? 'podman' : null;
  const looked = `none in ${join(o.jackinHome, 'sockets')}, and `;
  if (engine === null) throw noInstance(o.instance, `${looked}neither docker nor podman is installed to look for a container`);
  const found = await lookupContainer(engine, o.instance);
  if (found.kind === 'unknown') throw noInstance(o.instance, `${looked}${engine} could not be asked for a container (${found.why})`);
  const e = fromEngine(o.instance, engine, found, looked);
  if (e !== null) throw e;
}
