/**
 * Other Node versions for the tests that need one: the lines .ci/run tests (.ci/node-versions), and a Node
 * just below package.json's `engines`. Each is installed from the npm registry by scripts/install-node.sh
 * into the cache outside the project (nothing is done when it is there already, as after .ci/run).
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));

/** The exact versions .ci/run tests, newest first. */
export const NODE_LINES: readonly string[] = readFileSync(join(root, '.ci', 'node-versions'), 'utf8')
  .split('\n')
  .map((l) => l.trim())
  .filter((l) => l !== '' && !l.startsWith('#'));

/** The newest Node below `engines` (`>=20`): the last 18. */
export const BELOW_ENGINES = '18.20.8';

/** The `node` binary of `version`, installed first when needed. */
export function installedNode(version: string): string {
  const bin = execFileSync(join(root, 'scripts', 'install-node.sh'), [version], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }).trim();
  return join(bin, 'node');
}

/** A tested line other than the one running this test (another V8): its version and `node` binary. */
export function otherLineNode(): { version: string; node: string } {
  const major = process.versions.node.split('.')[0];
  const version = NODE_LINES.find((v) => v.split('.')[0] !== major);
  if (version === undefined) throw new Error(`.ci/node-versions lists no line other than Node ${major}`);
  return { version, node: installedNode(version) };
}
