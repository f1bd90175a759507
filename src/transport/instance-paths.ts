/** Where a local instance lives under $JACKIN_HOME, from its name (checked first), and where a run directory's socket is. */
import { join } from 'node:path';
import { JackinError } from '../errors.ts';
import { describeRefusedName, instanceNameProblem } from '../policy/instance-name.ts';

/**
 * An instance name is a directory name under $JACKIN_HOME/sockets and a word printed in tables and messages:
 * the one rule of src/policy/instance-name.ts, refused with E_BAD_INSTANCE_NAME (the name shown inert).
 */
export function checkInstanceName(name: string): string {
  const problem = instanceNameProblem(name);
  if (problem !== null) {
    throw new JackinError(
      'E_BAD_INSTANCE_NAME',
      `invalid instance name ${describeRefusedName(name)}: ${problem}; use letters, digits, "." "_" "-" (no "/", not starting with "-")`,
    );
  }
  return name;
}

/** The run directory of a local instance. */
export function instanceRunDir(jackinHome: string, instance: string): string {
  return join(jackinHome, 'sockets', checkInstanceName(instance));
}

/** The socket's name in a run directory: `$JACKIN_HOME/sockets/<instance>/` on the host, `/jackin/run` in a container. */
export const SOCKET_NAME = 'jackin.sock';

/** The capsule's socket in a run directory. */
export function runDirSocketPath(runDir: string): string {
  return join(runDir, SOCKET_NAME);
}

/** The socket of a local instance. */
export function instanceSocketPath(jackinHome: string, instance: string): string {
  return runDirSocketPath(instanceRunDir(jackinHome, instance));
}
