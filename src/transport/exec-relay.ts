import type { Readable, Writable } from 'node:stream';
import { JackinError } from '../errors.ts';
import { engineReason } from './engine-reason.ts';
import { formatArgv } from './exec-args.ts';
import { launchRelay, type ExecExit, type LaunchedRelay } from './relay-launch.ts';
import type { Transport } from './transport.ts';

/** After SIGTERM, how long a relay gets before SIGKILL (docker exec forwards the signal and tidies up). */
const RELAY_KILL_GRACE_MS = 2_000;

/** A running relay process: its byte streams, its exit, and a way to stop it. */
export interface Exec {
  readonly argv: readonly string[];
  readonly stdin: Writable;
  readonly stdout: Readable;
  readonly exited: Promise<ExecExit>;
  /** The last bytes it wrote on stderr, as text. */
  stderrTail(): string;
  terminate(): void;
}

/** A launched relay as an Exec; terminate() stops it: SIGTERM, then SIGKILL after RELAY_KILL_GRACE_MS. Idempotent. */
class RelayExec implements Exec {
  readonly argv: readonly string[];
  readonly stdin: Writable;
  readonly stdout: Readable;
  readonly exited: Promise<ExecExit>;
  readonly #relay: LaunchedRelay;
  #killTimer: NodeJS.Timeout | undefined;

  constructor(relay: LaunchedRelay) {
    this.argv = relay.argv;
    this.stdin = relay.child.stdin!;
    this.stdout = relay.child.stdout!;
    this.exited = relay.exited;
    this.#relay = relay;
    void relay.exited.then(() => clearTimeout(this.#killTimer));
  }

  stderrTail(): string {
    return this.#relay.stderrTail();
  }

  terminate(): void {
    const { child } = this.#relay;
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.stdin!.destroy();
    child.kill('SIGTERM');
    this.#killTimer ??= setTimeout(() => child.kill('SIGKILL'), RELAY_KILL_GRACE_MS);
    this.#killTimer.unref();
  }
}

/**
 * A relay bin/jackin.js started before the CLI loaded (src/cli/early-relay.ts), waiting for the attach
 * command to claim it; at most one, claimed at most once.
 */
let prelaunched: LaunchedRelay | null = null;

/** Hands over the relay bin/jackin.js started early (null: it started none). */
export function offerPrelaunchedRelay(relay: LaunchedRelay | null): void {
  prelaunched = relay;
}

/** Stops the early relay if nothing claimed it (the command turned out to need another relay, or none). */
export function discardPrelaunchedRelay(): void {
  if (prelaunched === null) return;
  new RelayExec(prelaunched).terminate();
  prelaunched = null;
}

function claimPrelaunched(argv: readonly string[]): LaunchedRelay | null {
  const relay = prelaunched;
  if (relay === null || relay.argv.length !== argv.length || relay.argv.some((a, i) => a !== argv[i])) return null;
  prelaunched = null;
  return relay;
}

/**
 * Starts `argv` as a relay (or adopts the early relay started with exactly this argv), with piped
 * stdin/stdout; stderr is captured rather than shown, because while the operator's terminal is in raw
 * mode a relay's diagnostics would land in the middle of the program's screen. Resolves once the process
 * has spawned; rejects with E_RELAY_SPAWN when the program cannot be started.
 */
export async function spawnRelay(argv: readonly string[], { env }: { env?: NodeJS.ProcessEnv } = {}): Promise<Exec> {
  const relay = (env === undefined ? claimPrelaunched(argv) : null) ?? launchRelay(argv, env);
  const failed = await relay.started;
  if (failed !== null) {
    const hint = failed.code === 'ENOENT' ? `${argv[0]} is not installed or not on PATH` : (failed.code ?? failed.message);
    throw new JackinError('E_RELAY_SPAWN', `cannot start relay \`${formatArgv(argv)}\`: ${hint}`, { cause: failed });
  }
  return new RelayExec(relay);
}

/**
 * The usual reasons an engine's exec fails, said plainly with the fix; null for anything else. Matched on
 * docker's, podman's and kubectl's own wording.
 */
export function relayHint(said: string): string | null {
  if (/no such container|no container with name or id|not found: no such container|pods? ".*" not found/i.test(said)) {
    return 'no such container (or pod) is running: check the name (docker ps / podman ps / kubectl get pods)';
  }
  if (/cannot connect to the docker daemon|is the docker daemon running|error during connect/i.test(said)) {
    return 'the docker engine is not reachable: start it, or pass --via podman if podman runs the container';
  }
  if (/is not running|container state improper|can only (create exec sessions on|exec into) running containers/i.test(said)) {
    return "the container is not running: start it again (jackin run --image, or your engine's start)";
  }
  if (/jackin-capsule.*(not found|no such file)|executable file .* not found/i.test(said)) {
    return "jackin-capsule is not on the container's PATH: install it in the image, or start the container with jackin run --image";
  }
  return null;
}

/** Wraps a relay as a Transport. */
export function relayTransport(exec: Exec): Transport {
  return {
    kind: 'relay',
    readable: exec.stdout,
    writable: exec.stdin,
    description: formatArgv(exec.argv),
    close() {
      exec.terminate();
    },
    async failureDetail() {
      const { code, signal } = await exec.exited;
      const status = signal !== null ? `killed by ${signal}` : `exited with status ${code}`;
      const said = engineReason(exec.stderrTail());
      if (said === null) return `relay ${status}`;
      const hint = relayHint(said);
      return hint === null ? `relay ${status}: ${said}` : `${hint} (relay ${status}: ${said})`;
    },
  };
}
