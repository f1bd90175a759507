/** Where a local instance lives under $JACKIN_HOME, from its name (checked first). */
import { join } from 'node:path';
import { JackinError } from '../errors.ts';

/** An instance name is a directory name under $JACKIN_HOME/sockets: no separators, no dot-dirs. */
export function checkInstanceName(name: string): string {
  if (name.length === 0 || name.length > 128 || name === '.' || name === '..' || /[/\\\0\n\r]/.test(name) || name.startsWith('-')) {
    throw new JackinError('E_USAGE', `invalid instance name ${JSON.stringify(name)}: use letters, digits, "." "_" "-" (no "/", not starting with "-")`, { exitCode: 2 });
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
