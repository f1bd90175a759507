// The container section's first prompts through `jackin run --image` itself, from spawning it to the
// program's prompt: the capsule lent from the host (`--capsule host`) against the capsule runtime
// (`--capsule runtime`, issue 46), warm (assembled in the cache) and cold (its tarballs cached, the runtime
// itself not yet assembled: what a new jackin version's first run does). The first download and assembly
// (`jackin runtime fetch` into an empty cache, from the npm registry) is timed apart and reported.
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { spawnOnPty } from './pty-process.mjs';
import { REPO_ROOT } from './variants.mjs';

const execFileP = promisify(execFile);
const JACKIN_BIN = join(REPO_ROOT, 'bin', 'jackin.js');
const PROMPT = 'bench$ ';
const SHELL = ['env', `PS1=${PROMPT}`, 'bash', '--norc', '--noprofile'];

/** A clean environment, but for the certificates a TLS-inspecting network needs for the registry. */
function env(extra) {
  const certs = process.env.NODE_EXTRA_CA_CERTS !== undefined ? { NODE_EXTRA_CA_CERTS: process.env.NODE_EXTRA_CA_CERTS } : {};
  return { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/root', LANG: 'C.UTF-8', TERM: 'xterm-256color', ...certs, ...extra };
}

/** Removes the assembled runtimes of `cache`, keeping the verified tarballs they were made from. */
function dropAssembled(cache) {
  const dir = join(cache, 'runtime');
  for (const entry of readdirSync(dir)) if (entry !== 'tarballs') rmSync(join(dir, entry), { recursive: true, force: true });
}

/** One `jackin run --image` to its first prompt (ms), then the program is ended and the container removed. */
async function firstPrompt(image, capsule, cache, n) {
  const home = mkdtempSync(join(tmpdir(), 'jackin-bench-rt-'));
  const name = `jackin-bench-rt-${process.pid}-${n}`;
  const t0 = process.hrtime.bigint();
  const pty = spawnOnPty(process.execPath, [JACKIN_BIN, 'run', '--image', image, '--engine', 'podman', '--name', name, '--capsule', capsule, '--', ...SHELL], {
    env: env({ JACKIN_HOME: home, JACKIN_CACHE_DIR: cache, JACKIN_PASTE_KEY: 'none' }),
    cwd: home,
  });
  try {
    await pty.waitForText(PROMPT, { timeoutMs: 60_000 });
    const ms = Number(process.hrtime.bigint() - t0) / 1e6;
    pty.write('exit\r');
    await pty.waitForExit(15_000).catch(() => undefined);
    return ms;
  } finally {
    pty.kill();
    await execFileP('podman', ['rm', '-f', '-t', '0', name]).catch(() => undefined);
    rmSync(home, { recursive: true, force: true });
  }
}

/**
 * `rounds` of each: cold runtime, warm runtime, host, taking turns. Returns medians' inputs (ms) and the
 * first fetch's time, or an error string for a part that failed.
 */
export async function runtimeFirstPrompts(image, { rounds, log }) {
  const cache = mkdtempSync(join(tmpdir(), 'jackin-bench-cache-'));
  const out = { fetchMs: null, cold: [], warm: [], host: [], error: null };
  try {
    const t0 = process.hrtime.bigint();
    await execFileP(process.execPath, [JACKIN_BIN, 'runtime', 'fetch', '--arch', 'x64'], { env: env({ JACKIN_CACHE_DIR: cache }) });
    out.fetchMs = Number(process.hrtime.bigint() - t0) / 1e6;
    log(`container: runtime: first fetch (download from the registry and assembly) ${Math.round(out.fetchMs)} ms`);
    let n = 0;
    for (let i = 0; i < rounds; i++) {
      dropAssembled(cache);
      out.cold.push(await firstPrompt(image, 'runtime', cache, ++n));
      out.warm.push(await firstPrompt(image, 'runtime', cache, ++n));
      out.host.push(await firstPrompt(image, 'host', cache, ++n));
    }
    log(
      `container: jackin run --image first prompt (ms): runtime cold ${out.cold.map(Math.round).join(', ')}; ` +
        `runtime warm ${out.warm.map(Math.round).join(', ')}; host ${out.host.map(Math.round).join(', ')}`,
    );
  } catch (e) {
    out.error = e instanceof Error ? e.message : String(e);
    log(`container: runtime first prompts failed: ${out.error}`);
  } finally {
    rmSync(cache, { recursive: true, force: true });
  }
  return out;
}
