/**
 * Whether a pid really is the local capsule of an instance, before `jackin stop` signals it. The pid comes
 * from the capsule's status reply or from capsule.json, and both are the container's word when the run
 * directory is bind-mounted into one: a hostile capsule could name any process of the operator (or -1,
 * which kill(2) takes as "every process you may signal"). So the host checks the process itself: it must
 * have been started to serve this very run directory (`--run-dir DIR`, or JACKIN_RUN_DIR=DIR in its
 * environment), read from /proc on Linux and from ps(1) elsewhere.
 */
import { execFile } from 'node:child_process';
import { readFile, readlink, realpath } from 'node:fs/promises';
import { isAbsolute, resolve } from 'node:path';

/** What the host knows of a process: its argv, its start-up environment and working directory when readable. */
interface ProcessFacts {
  readonly argv: readonly string[];
  readonly env: readonly string[];
  readonly cwd: string | null;
}

async function linuxFacts(pid: number): Promise<ProcessFacts | null> {
  const split = (b: Buffer): string[] =>
    b
      .toString('utf8')
      .split('\0')
      .filter((s) => s !== '');
  try {
    const argv = split(await readFile(`/proc/${pid}/cmdline`));
    const env = await readFile(`/proc/${pid}/environ`).then(split, () => []);
    const cwd = await readlink(`/proc/${pid}/cwd`).catch(() => null);
    return { argv, env, cwd };
  } catch {
    return null;
  }
}

/** ps(1) joins argv with spaces: a run directory with a space in its name is then not confirmed (refused, never guessed). */
function psFacts(pid: number): Promise<ProcessFacts | null> {
  return new Promise((done) => {
    execFile('ps', ['-ww', '-o', 'args=', '-p', String(pid)], { timeout: 5_000 }, (e, stdout) => {
      done(e !== null || stdout.trim() === '' ? null : { argv: stdout.trim().split(/\s+/u), env: [], cwd: null });
    });
  });
}

/** The run directory a process was started to serve, as it was written (possibly relative), or null. */
function servedRunDir(facts: Pick<ProcessFacts, 'argv' | 'env'>): string | null {
  const { argv, env } = facts;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--') break;
    if (a === '--run-dir' && i + 1 < argv.length) return argv[i + 1]!;
    if (a.startsWith('--run-dir=')) return a.slice('--run-dir='.length);
  }
  const fromEnv = env.find((v) => v.startsWith('JACKIN_RUN_DIR='));
  return fromEnv === undefined ? null : fromEnv.slice('JACKIN_RUN_DIR='.length);
}

const canonical = (p: string): Promise<string> => realpath(p).catch(() => resolve(p));

/**
 * Null when `pid` is a process started to serve `runDir` (so signalling it stops that instance), else why
 * it is not (shown to the operator). Never trusts the number alone: it must be a plain process id (no 0, 1
 * or negative value, which kill(2) reads as a process group or every process).
 */
export async function unconfirmedCapsulePid(pid: number, runDir: string, platform: NodeJS.Platform = process.platform): Promise<string | null> {
  if (!Number.isSafeInteger(pid) || pid < 2) return `the capsule named pid ${pid}, which is not a process id`;
  const facts = platform === 'linux' ? await linuxFacts(pid) : await psFacts(pid);
  if (facts === null) return `no process ${pid} can be read`;
  const served = servedRunDir(facts);
  if (served === null) return `process ${pid} is not a jackin capsule serving ${runDir}`;
  const absolute = isAbsolute(served) ? served : facts.cwd === null ? null : resolve(facts.cwd, served);
  if (absolute === null || (await canonical(absolute)) !== (await canonical(runDir))) {
    return `process ${pid} serves another run directory, not ${runDir}`;
  }
  return null;
}
