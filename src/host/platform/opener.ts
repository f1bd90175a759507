/**
 * Opens a checked URL, or an exported file (open / reveal), on the host: through `JACKIN_OPENER` when
 * set (argv = that command split shell-like, then the target; spawned without a shell), else through
 * `open` with `wait: true`, because without it `open` resolves as soon as the launcher spawns and a
 * failure would never be reported. Every URL is re-checked here and every open passes a rate limiter,
 * whatever the caller already did: this is the last step before something leaves the terminal.
 */
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import type * as OpenPackage from 'open';
import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join } from 'node:path';
import { JackinError } from '../../errors.ts';
import { PACKAGE_ROOT } from '../../package-root.ts';
import { launcherContent, launcherExtension, LAUNCHER_MAGIC_BYTES } from '../../policy/launcher-files.ts';
import { checkUrl, linksEnabled, redactUrlForLog, type UrlCheckOk } from '../../policy/url-safety.ts';
import { createRateLimiter, DEFAULT_OPEN_RATE, type RateLimiter } from './rate-limiter.ts';
import { splitShellWords } from './shell-words.ts';

/**
 * The ES-only `open` package, through bin/esm-import.js: the CLI's bundle runs compiled through vm.Script
 * (src/cli/code-cache.ts), where import() is refused; a file Node loads itself may use it.
 */
function importOpen(): Promise<typeof OpenPackage> {
  const importEsm = createRequire(import.meta.url)(join(PACKAGE_ROOT, 'bin', 'esm-import.js')) as (specifier: string) => Promise<unknown>;
  return importEsm('open') as Promise<typeof OpenPackage>;
}

/**
 * How long to wait for the launcher to exit before assuming it launched. Some launchers run the
 * browser in the foreground when none is running yet (xdg-open → firefox), and would never exit.
 */
const OPENER_SETTLE_MS = 10_000;
/** Bytes of the opener's stderr kept for the error message. */
const MAX_STDERR_BYTES = 2048;

type FileOpenAction = 'open' | 'reveal';
/** What an opener was asked to do; passed to JACKIN_OPENER as JACKIN_OPEN_ACTION. */
type OpenAction = 'url' | FileOpenAction;

interface OpenResult {
  /** The command that ran, for the notice (`xdg-open`, or JACKIN_OPENER's first word). */
  readonly command: string;
  /** 'exited' when it exited with status 0; 'running' when it was still running after the settle time. */
  readonly state: 'exited' | 'running';
  /** Set when "open" was asked for a file that runs something when opened: it was revealed instead, for this reason. */
  readonly revealedInstead?: string;
}

export interface OpenerOptions {
  /** Environment read for JACKIN_OPENER and JACKIN_OPEN_LINKS and given to JACKIN_OPENER; default process.env. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  readonly platform?: NodeJS.Platform;
  /** Operator-configured extra URL schemes (see checkUrl). */
  readonly extraSchemes?: readonly string[];
  /** Shared limiter; default 3 opens per 5 s for this opener. */
  readonly limiter?: RateLimiter;
  readonly settleMs?: number;
}

export interface Opener {
  /** Re-checks and opens a URL; rejects with E_URL_*, E_LINKS_DISABLED, E_RATE_LIMITED or E_OPENER_FAILED. */
  openUrl(url: string | UrlCheckOk): Promise<OpenResult>;
  /**
   * Opens or reveals an absolute host path; rejects with E_RATE_LIMITED or E_OPENER_FAILED. A file that
   * would run something when opened (launcher-files.ts) is revealed instead, and the result says why.
   */
  openFile(path: string, action: FileOpenAction): Promise<OpenResult>;
}

/** JACKIN_OPENER's words (see shell-words.ts); throws E_OPENER_CONFIG for an unterminated quote or trailing backslash. */
export function splitCommandLine(line: string): string[] {
  return splitShellWords(line, (what) => new JackinError('E_OPENER_CONFIG', `JACKIN_OPENER ${JSON.stringify(line)} has ${what}; fix the quoting`));
}

/** The argv JACKIN_OPENER asks for with `target` appended, or null when JACKIN_OPENER is unset or blank. */
export function openerArgv(env: Readonly<Record<string, string | undefined>>, target: string): string[] | null {
  const raw = env['JACKIN_OPENER'];
  if (raw === undefined || raw.trim() === '') return null;
  const words = splitCommandLine(raw);
  if (words.length === 0) return null;
  return [...words, target];
}

function failed(command: string, detail: string, cause?: unknown): JackinError {
  return new JackinError(
    'E_OPENER_FAILED',
    `opener ${command} ${detail}; check that it is installed or set JACKIN_OPENER to a command that opens its last argument`,
    cause === undefined ? {} : { cause },
  );
}

/** Runs argv without a shell; resolves on exit 0 (or still running after settleMs), else rejects. */
function runCommand(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
  settleMs: number,
  acceptAnyStatus = false,
): Promise<OpenResult> {
  const [command, ...args] = argv;
  if (command === undefined) return Promise.reject(new TypeError('runCommand: empty argv'));
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'ignore', 'pipe'], shell: false, env: { ...env } });
    let stderr = '';
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => {
      if (stderr.length < MAX_STDERR_BYTES) stderr += chunk.slice(0, MAX_STDERR_BYTES - stderr.length);
    });
    const timer = setTimeout(() => {
      // Still running: it launched something that stays in the foreground. Let it live on its own.
      child.stderr.destroy();
      child.unref();
      resolve({ command, state: 'running' });
    }, settleMs);
    child.once('error', (e) => {
      clearTimeout(timer);
      reject(failed(command, `could not be started (${e.message})`, e));
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      if (code === 0 || (acceptAnyStatus && signal === null)) {
        resolve({ command, state: 'exited' });
        return;
      }
      const firstLine = stderr.trim().split('\n')[0] ?? '';
      const status = signal === null ? `exited with status ${code}` : `was killed by ${signal}`;
      reject(failed(command, `${status}${firstLine === '' ? '' : `: ${firstLine}`}`));
    });
  });
}

/** The platform launcher `open` uses, named in notices and errors. */
function platformOpenerName(platform: NodeJS.Platform): string {
  if (platform === 'darwin') return 'open';
  if (platform === 'win32') return 'powershell Start';
  return 'xdg-open';
}

async function runOpenPackage(target: string, platform: NodeJS.Platform, settleMs: number): Promise<OpenResult> {
  const command = platformOpenerName(platform);
  let timer: NodeJS.Timeout | undefined;
  const settled = new Promise<OpenResult>((resolve) => {
    timer = setTimeout(() => resolve({ command, state: 'running' }), settleMs);
  });
  try {
    // `open` is loaded on first use: importing it costs every jackin command about 25 ms of start-up.
    const launched = importOpen()
      .then(({ default: open }) => open(target, { wait: true }))
      .then(
        (): OpenResult => ({ command, state: 'exited' }),
        (e: unknown) => {
          const m = e instanceof Error ? /code (\d+)/u.exec(e.message) : null;
          throw failed(command, m === null ? `failed (${String(e instanceof Error ? e.message : e)})` : `exited with status ${m[1]}`, e);
        },
      );
    return await Promise.race([launched, settled]);
  } finally {
    clearTimeout(timer);
  }
}

export function createOpener(options: OpenerOptions = {}): Opener {
  return new HostOpener(options);
}

class HostOpener implements Opener {
  readonly #env: Readonly<Record<string, string | undefined>>;
  readonly #platform: NodeJS.Platform;
  readonly #extraSchemes: readonly string[] | undefined;
  readonly #limiter: RateLimiter;
  readonly #settleMs: number;

  constructor(options: OpenerOptions) {
    this.#env = options.env ?? process.env;
    this.#platform = options.platform ?? process.platform;
    this.#extraSchemes = options.extraSchemes;
    this.#limiter = options.limiter ?? createRateLimiter(DEFAULT_OPEN_RATE);
    this.#settleMs = options.settleMs ?? OPENER_SETTLE_MS;
  }

  async openUrl(url: string | UrlCheckOk): Promise<OpenResult> {
    if (!linksEnabled(this.#env)) {
      throw new JackinError('E_LINKS_DISABLED', 'opening links is turned off (JACKIN_OPEN_LINKS); unset it to allow links');
    }
    // Re-check even a UrlCheckOk: it is a plain object and could have been built by anyone.
    const raw = typeof url === 'string' ? url : url.href;
    const checked = checkUrl(raw, this.#extraSchemes === undefined ? {} : { extraSchemes: this.#extraSchemes });
    if (!checked.ok) throw new JackinError(checked.code, `refused to open ${redactUrlForLog(raw)}: ${checked.reason}`);
    this.#limiter.take(checked.display);
    return this.#launch(checked.href, 'url');
  }

  async openFile(path: string, requested: FileOpenAction): Promise<OpenResult> {
    if (!isAbsolute(path)) throw new TypeError(`openFile needs an absolute host path, got ${JSON.stringify(path)}`);
    this.#limiter.take(path);
    const refusal = requested === 'open' ? await launcherReason(path) : null;
    const action: FileOpenAction = refusal === null ? requested : 'reveal';
    const platform = this.#platform;
    // Linux and JACKIN_OPENER have no "select this file": reveal opens the folder holding it.
    const target = action === 'reveal' && ((platform !== 'darwin' && platform !== 'win32') || openerArgv(this.#env, path) !== null) ? dirname(path) : path;
    const result = await this.#launch(target, action);
    return refusal === null ? result : { ...result, revealedInstead: refusal };
  }

  #launch(target: string, action: OpenAction): Promise<OpenResult> {
    const env = this.#env;
    const platform = this.#platform;
    const settleMs = this.#settleMs;
    const argv = openerArgv(env, target);
    if (argv !== null) return runCommand(argv, { ...env, JACKIN_OPEN_ACTION: action }, settleMs);
    if (action === 'reveal' && platform === 'darwin') return runCommand(['open', '-R', target], env, settleMs);
    // explorer.exe exits with status 1 even when it selected the file.
    if (action === 'reveal' && platform === 'win32') return runCommand(['explorer.exe', `/select,${target}`], env, settleMs, true);
    return runOpenPackage(target, platform, settleMs);
  }
}

/** Why `path` must be revealed rather than opened (its name, else its first bytes), or null. */
async function launcherReason(path: string): Promise<string | null> {
  const byName = launcherExtension(basename(path));
  if (byName !== null) return byName;
  let head: Buffer;
  try {
    const h = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW);
    try {
      head = Buffer.alloc(LAUNCHER_MAGIC_BYTES);
      const { bytesRead } = await h.read(head, 0, head.length, 0);
      head = head.subarray(0, bytesRead);
    } finally {
      await h.close();
    }
  } catch {
    // Unreadable (or a symlink): nothing is known about what it would run, so do not open it.
    return 'it could not be read to check what it is';
  }
  return launcherContent(head);
}
