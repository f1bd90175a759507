/**
 * The argv of every exec relay, built by one pure function so the exact command an engine runs is tested
 * (conventions: devcontainers/cli). A relay is any command whose stdin/stdout is a byte-blind pipe to the
 * capsule's socket; `jackin-capsule attach-proxy` is that pipe inside the container.
 */
import { JackinError } from '../errors.ts';

const RELAY_PROGRAM = ['jackin-capsule', 'attach-proxy'] as const;

/** The engines `--via` names: each has an exec that runs the relay in the container or pod. */
export const ENGINES = ['docker', 'podman', 'kubectl'] as const;
export type Engine = (typeof ENGINES)[number];

export type RelaySpec =
  | { kind: 'docker'; target: string }
  | { kind: 'podman'; target: string }
  | { kind: 'kubectl'; pod: string; namespace?: string; container?: string }
  /**
   * Any relay command, run as `sh -c <command>` so an operator writes it exactly as in a shell (pipes,
   * quoting, `ssh host docker exec ...`). It is the operator's own command line, so a shell adds no trust
   * boundary; splitting it ourselves would only reimplement the shell's quoting rules badly.
   */
  | { kind: 'custom'; command: string }
  /** An ssh command line to a capsule on another machine (`--ssh`, src/host/instances/remote-capsule.ts), run as it is. */
  | { kind: 'ssh'; argv: readonly string[] };

/**
 * An engine reads a value starting with `-` as an option, so a target like `--privileged` would change
 * what the engine does instead of naming a container. Names are also never empty.
 */
function checkName(what: string, value: string): string {
  if (value.length === 0) throw new JackinError('E_BAD_TARGET', `${what} is empty: pass the container or pod name`);
  if (value.startsWith('-')) {
    throw new JackinError('E_BAD_TARGET', `${what} ${JSON.stringify(value)} starts with "-" and would be read as an option: pass a real name`);
  }
  if (/[\0\n\r]/.test(value)) {
    throw new JackinError('E_BAD_TARGET', `${what} ${JSON.stringify(value)} contains a control character`);
  }
  return value;
}

/** The exact argv that starts the relay described by `spec`. */
export function relayArgv(spec: RelaySpec): string[] {
  switch (spec.kind) {
    case 'docker':
    case 'podman':
      return [spec.kind, 'exec', '-i', checkName('target', spec.target), ...RELAY_PROGRAM];
    case 'kubectl': {
      const argv = ['kubectl', 'exec', '-i', checkName('pod', spec.pod)];
      if (spec.namespace !== undefined) argv.push('-n', checkName('namespace', spec.namespace));
      if (spec.container !== undefined) argv.push('-c', checkName('container', spec.container));
      argv.push('--', ...RELAY_PROGRAM);
      return argv;
    }
    case 'custom':
      if (spec.command.trim().length === 0) {
        throw new JackinError(
          'E_BAD_TARGET',
          '--exec command is empty: pass the relay command, e.g. --exec "ssh box docker exec -i agent jackin-capsule attach-proxy"',
        );
      }
      return ['sh', '-c', spec.command];
    case 'ssh':
      return [...spec.argv];
    default: {
      const never: never = spec;
      throw new TypeError(`unexpected relay spec ${JSON.stringify(never)}`);
    }
  }
}

/** The argv as one shell-readable line, for --verbose and error messages. */
export function formatArgv(argv: readonly string[]): string {
  return argv.map((a) => (/^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replaceAll("'", `'\\''`)}'`)).join(' ');
}
