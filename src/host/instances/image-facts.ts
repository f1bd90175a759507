/**
 * What `jackin run --image` needs to know of an image before it lends a capsule: its architecture (which
 * Node and PTY binary it can run: the host's own, or a runtime of another architecture) and its PATH.
 * An image that is not here yet is pulled first, so an amd64-only image on an arm64 Mac gets the amd64
 * runtime rather than a guess; a pull that fails leaves the guess (the host's architecture) and `run`
 * then fails with the engine's own reason, as it did before.
 */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { ContainerEngine } from '../../transport/container-engine.ts';
import { engineCommand } from '../../transport/container-engine.ts';
import { DEFAULT_IMAGE_PATH, imagePathFromEnv } from './container-run-argv.ts';
import { inertText } from '../../ui/inert-text.ts';

/** A pull that takes longer than this is left to `run` (which pulls again, showing its own progress). */
const PULL_TIMEOUT_MS = 10 * 60_000;

export interface ImageFacts {
  /** As the engine names it (amd64, arm64), or null when the image is not here. */
  arch: string | null;
  path: string;
  /** Whether this call pulled it. */
  pulled: boolean;
}

async function inspect(engine: ContainerEngine, image: string, env: Readonly<Record<string, string>> | undefined): Promise<ImageFacts | null> {
  let out: string;
  try {
    out = (
      await engineCommand(
        engine,
        ['image', 'inspect', '--format', '{{.Architecture}} {{json .Config.Env}}', image],
        undefined,
        env !== undefined ? { env } : {},
      )
    ).trim();
  } catch {
    return null;
  }
  const space = out.indexOf(' ');
  const arch = space > 0 ? out.slice(0, space) : '';
  return { arch: /^[A-Za-z0-9_/-]{1,32}$/.test(arch) ? arch : null, path: imagePathFromEnv(space > 0 ? out.slice(space + 1) : ''), pulled: false };
}

/**
 * `ENGINE pull IMAGE`, its progress on jackin's stderr line by line, made inert (a registry's words reach the
 * operator's terminal through it), and its complaints kept back: a failed pull is not an error here (`run`
 * says why in the engine's words). Resolves whether it pulled.
 */
function pull(engine: ContainerEngine, image: string, env: Readonly<Record<string, string>> | undefined, progress: (line: string) => void): Promise<boolean> {
  return new Promise((resolve) => {
    const child = spawn(engine, ['pull', image], {
      stdio: ['ignore', 'pipe', 'ignore'],
      timeout: PULL_TIMEOUT_MS,
      ...(env !== undefined ? { env: { ...process.env, ...env } } : {}),
    });
    createInterface({ input: child.stdout, crlfDelay: Number.POSITIVE_INFINITY }).on('line', (line) => {
      if (line.trim() !== '') progress(inertText(line, 400));
    });
    child.once('error', () => resolve(false));
    child.once('close', (code) => resolve(code === 0));
  });
}

/** The image's facts; with `pullMissing`, an image not here is pulled first (announced through `say`, its progress lines, inert, through `progress`). */
export async function imageFacts(
  engine: ContainerEngine,
  image: string,
  {
    pullMissing,
    say,
    env,
    progress = (line) => void process.stderr.write(`${line}\n`),
  }: { pullMissing: boolean; say: (line: string) => void; env?: Readonly<Record<string, string>>; progress?: (line: string) => void },
): Promise<ImageFacts> {
  const here = await inspect(engine, image, env);
  if (here !== null) return here;
  if (pullMissing && !image.startsWith('-')) {
    say(`pulling ${image} first: its architecture decides which capsule it gets`);
    if (await pull(engine, image, env, progress)) {
      const pulled = await inspect(engine, image, env);
      if (pulled !== null) return { ...pulled, pulled: true };
    }
  }
  return { arch: null, path: DEFAULT_IMAGE_PATH, pulled: false };
}
