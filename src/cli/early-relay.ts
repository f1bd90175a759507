/**
 * `jackin attach NAME --via ENGINE` reaches the capsule through `ENGINE exec -i NAME jackin-capsule
 * attach-proxy`, a relay that takes about as long to start (the engine's exec, then Node in the container)
 * as jackin takes to load. bin/jackin.js therefore starts that relay first, from this small module, and
 * loads the CLI while it starts; the attach command adopts it when its own plan is the same argv
 * (src/transport/exec-relay.ts), and it is stopped otherwise.
 *
 * Only the plain forms are recognised here: `attach`, one container name, `--via docker|podman|kubectl`,
 * and flags that do not change the transport. Anything else (another option, `--help`, a name that is
 * not a plain container name) starts nothing early, and the CLI handles it as usual.
 *
 * It runs before the CLI applies the config file (src/cli/config-file.ts) and reads no JACKIN_* variable: the
 * relay's argv follows from the arguments alone, and the engine passes none of jackin's environment into
 * the container.
 */
import { launchRelay, type LaunchedRelay } from '../transport/relay-launch.ts';
import { ENGINES, relayArgv, type Engine } from '../transport/exec-args.ts';

/** `attach` flags that do not change how the capsule is reached. */
const NEUTRAL_FLAGS = new Set(['--verbose', '--no-mouse', '--allow-upstream-requests']);
/** Docker's and Podman's container name rule (Kubernetes pod names are a subset). */
const PLAIN_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/;

/** The relay argv `jackin attach` will run for these arguments (after `node jackin.js`), or null when not sure. */
export function earlyRelayArgv(args: readonly string[]): string[] | null {
  if (args[0] !== 'attach') return null;
  let engine: Engine | undefined;
  let name: string | undefined;
  for (let i = 1; i < args.length; i++) {
    const a = args[i]!;
    if (a === '--via' || a.startsWith('--via=')) {
      if (engine !== undefined) return null;
      const named = a === '--via' ? args[++i] : a.slice('--via='.length);
      engine = ENGINES.find((e) => e === named);
      if (engine === undefined) return null;
    } else if (NEUTRAL_FLAGS.has(a)) {
      // Passed over: it changes nothing the relay needs.
    } else if (PLAIN_NAME.test(a) && name === undefined) {
      name = a;
    } else {
      return null;
    }
  }
  if (engine === undefined || name === undefined) return null;
  // The same argv the attach command will plan (PLAIN_NAME passes relayArgv's name checks).
  return relayArgv(engine === 'kubectl' ? { kind: 'kubectl', pod: name } : { kind: engine, target: name });
}

/**
 * Starts the relay for these arguments, when earlyRelayArgv names one. Never throws: a relay that cannot
 * start at all here is left to the CLI, which starts it again and reports the error as usual.
 */
export function startEarlyRelay(args: readonly string[]): LaunchedRelay | null {
  const argv = earlyRelayArgv(args);
  if (argv === null) return null;
  try {
    return launchRelay(argv);
  } catch {
    return null;
  }
}
