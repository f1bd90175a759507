/**
 * One capsule runtime (`--capsule runtime`, src/host/runtime/) for a whole test run: assembled from the
 * registry (about 50 MB) the first time a test asks, into a cache directory under the run's TMPDIR, and
 * shared by every test file after it (each file is its own process, two at a time, so the first one holds a
 * lock directory while it assembles and the others wait for its `ready` mark). Tests point JACKIN_CACHE_DIR
 * at it. scripts/run-tests.mjs removes it with the run's temporary directory at the end (RUNTIME_CACHE_NAME
 * is one of the tools' names it leaves out of its leftover check); run without the script, it stays in the
 * system's temporary directory as a cache for the next run.
 */
import { existsSync, mkdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { runJackin } from './jackin-cli.ts';

/** Its name in the run's TMPDIR (scripts/run-tests.mjs knows it). */
const RUNTIME_CACHE_NAME = 'jackin-test-runtime-cache';
/** A download on a slow line, then the code cache made by the runtime's Node. */
const ASSEMBLE_TIMEOUT_MS = 600_000;

let shared: Promise<{ cache: string; node: string }> | null = null;

/** Assembles the runtime into `cache`; the path of its `node` (what --dry-run mounts at /opt/jackin/node). */
async function assemble(cache: string): Promise<string> {
  // A dry run with --capsule runtime assembles the runtime (so that the mounts it prints exist), and no
  // image is needed: one not pulled is taken to be of the host's architecture.
  const r = await runJackin(
    ['run', '--image', 'localhost/jackin-test-no-such-image', '--engine', 'podman', '--capsule', 'runtime', '--dry-run', '--', 'true'],
    { ...process.env, JACKIN_CACHE_DIR: cache },
    { timeoutMs: ASSEMBLE_TIMEOUT_MS },
  );
  if (r.code !== 0) throw new Error(`assembling the test run's capsule runtime failed (status ${r.code}): ${r.stderr}`);
  const node = /'?([^\s']+)'?:\/opt\/jackin\/node:ro/.exec(r.stdout)?.[1];
  if (node === undefined || !node.startsWith(cache)) throw new Error(`the dry run mounts no runtime node from ${cache}: ${r.stdout}`);
  return node;
}

/** The run's runtime cache directory (JACKIN_CACHE_DIR), with the runtime for this machine's architecture in it, and that runtime's node. */
function sharedRuntime(): Promise<{ cache: string; node: string }> {
  shared ??= (async () => {
    const cache = join(tmpdir(), RUNTIME_CACHE_NAME);
    const ready = join(cache, '.ready');
    const lock = `${cache}.lock`;
    const deadline = Date.now() + ASSEMBLE_TIMEOUT_MS;
    while (!existsSync(ready)) {
      let mine = false;
      try {
        mkdirSync(lock);
        mine = true;
      } catch {
        // Another test file assembles it: wait for its mark, or for its lock to go (it failed: try again).
      }
      if (mine) {
        try {
          if (!existsSync(ready)) {
            mkdirSync(cache, { recursive: true, mode: 0o755 });
            writeFileSync(ready, await assemble(cache));
          }
        } finally {
          rmSync(lock, { recursive: true, force: true });
        }
        break;
      }
      if (Date.now() > deadline) throw new Error(`the test run's capsule runtime was not assembled within ${ASSEMBLE_TIMEOUT_MS} ms (${lock} stays)`);
      await sleep(500);
    }
    return { cache, node: readFileSync(ready, 'utf8') };
  })();
  return shared;
}

/** The run's runtime cache directory (JACKIN_CACHE_DIR). */
export async function sharedRuntimeCache(): Promise<string> {
  return (await sharedRuntime()).cache;
}

/** The host path of the shared runtime's node. */
export async function runtimeNode(): Promise<string> {
  return (await sharedRuntime()).node;
}

/** The host file a container's /opt/jackin/node is with `--capsule host` (this Node) or `runtime` (the run's runtime). */
export async function lentNode(capsule: 'host' | 'runtime'): Promise<string> {
  return capsule === 'host' ? realpathSync(process.execPath) : runtimeNode();
}

/** The environment a jackin of a test needs (for a pane, on top of its clean one): nothing for `--capsule host`, the run's cache for `runtime`. */
export async function capsuleEnv(capsule: 'host' | 'runtime'): Promise<Record<string, string>> {
  return capsule === 'runtime' ? { JACKIN_CACHE_DIR: await sharedRuntimeCache() } : {};
}
