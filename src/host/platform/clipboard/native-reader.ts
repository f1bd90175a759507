/**
 * The macOS and Windows/WSL readers: run the helper in native/, parse its one JSON line, read the image
 * file it wrote (capped), then delete that file.
 */
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, unlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PACKAGE_ROOT } from '../../../package-root.ts';
import { JackinError } from '../../../errors.ts';
import { parsePastedPath } from '../pasted-path.ts';
import { OSASCRIPT_INSTALL, POWERSHELL_INSTALL, macosArgv, windowsArgv, type NativeMode } from './argv.ts';
import { parseNativeOutput, windowsPathToWsl, type NativeOutput } from './native-contract.ts';
import { readRawFile } from './read-raw-file.ts';
import { describeCommand, runHelper, type HelperCommand } from './run-helper.ts';
import type { ClipboardContent, ClipboardReader, ReadLimits } from './types.ts';

/** The helpers print one small JSON line. */
const MAX_JSON_BYTES = 64 * 1024;

/** native/ at the package root. */
const NATIVE_DIR = join(PACKAGE_ROOT, 'native');
export const MACOS_HELPER = join(NATIVE_DIR, 'macos-clipboard.js');
export const WINDOWS_HELPER = join(NATIVE_DIR, 'windows-clipboard.ps1');

/** Runs one helper invocation and parses its output; exposed for tests with a stand-in program. */
export async function runNativeHelper(
  helper: string,
  cmd: HelperCommand,
  limits: ReadLimits,
  installHint: string,
  env: NodeJS.ProcessEnv,
): Promise<NativeOutput> {
  const r = await runHelper(cmd, { timeoutMs: limits.timeoutMs, maxBytes: MAX_JSON_BYTES, installHint, env });
  const stdout = r.stdout.toString('utf8');
  if (r.exitCode !== 0 && stdout.trim() === '') {
    throw new JackinError(
      'E_CLIPBOARD_READ_FAILED',
      `${describeCommand({ file: cmd.file, args: cmd.args.slice(0, 4) })} failed (${r.signal ?? `exit ${r.exitCode}`}): ${r.stderr || 'no message'}`,
    );
  }
  return parseNativeOutput(helper, stdout);
}

/**
 * Turns a helper's output into reader results. `localPath` maps a path the helper printed to one this
 * process can open (identity on macOS and Windows; Windows → /mnt/<drive> under WSL).
 */
export async function interpretNativeOutput(out: NativeOutput, limits: ReadLimits, localPath: (p: string) => string | null): Promise<ClipboardContent | null> {
  switch (out.kind) {
    case 'none':
      return null;
    case 'error':
      throw new JackinError('E_CLIPBOARD_READ_FAILED', `the clipboard helper failed: ${out.message}`);
    case 'text':
      return null;
    case 'file': {
      const p = localPath(out.path);
      if (p === null) throw new JackinError('E_CLIPBOARD_READ_FAILED', `cannot map the copied file ${JSON.stringify(out.path)} to a local path`);
      const paths = (out.paths ?? [out.path]).map((x) => localPath(x));
      if (paths.some((x) => x === null))
        throw new JackinError('E_CLIPBOARD_READ_FAILED', `cannot map the copied files ${JSON.stringify(out.paths)?.slice(0, 300)} to local paths`);
      return { kind: 'file', path: p, paths: paths as string[], offered: [] };
    }
    case 'image': {
      const p = localPath(out.path);
      if (p === null) throw new JackinError('E_CLIPBOARD_READ_FAILED', `cannot map the helper's image ${JSON.stringify(out.path)} to a local path`);
      try {
        const bytes = await readRawFile(p, limits.maxBytes);
        if (bytes.length === 0) return null;
        return { kind: 'image', bytes, mimeType: out.format, offered: out.types };
      } finally {
        await unlink(p).catch(() => undefined);
      }
    }
    default: {
      const never: never = out;
      throw new TypeError(`unexpected helper output ${JSON.stringify(never)}`);
    }
  }
}

function pathFromText(out: NativeOutput, localPath: (p: string) => string | null): string | null {
  switch (out.kind) {
    case 'file':
      return localPath(out.path);
    case 'text':
      return parsePastedPath(out.text);
    case 'error':
      throw new JackinError('E_CLIPBOARD_READ_FAILED', `the clipboard helper failed: ${out.message}`);
    case 'none':
    case 'image':
      return null;
    default: {
      const never: never = out;
      throw new TypeError(`unexpected helper output ${JSON.stringify(never)}`);
    }
  }
}

export function createMacosReader(limits: ReadLimits, env: NodeJS.ProcessEnv, reason: string): ClipboardReader {
  const invoke = async <T>(mode: NativeMode, use: (out: NativeOutput) => Promise<T>): Promise<T> => {
    // A fresh private directory per read: the helper writes the image there and we remove it after.
    const dir = await mkdtemp(join(tmpdir(), 'jackin-clip-'));
    try {
      const out = await runNativeHelper('macOS', macosArgv(MACOS_HELPER, mode, dir), limits, OSASCRIPT_INSTALL, env);
      return await use(out);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  };
  const same = (p: string): string => p;
  return {
    name: 'macos',
    reason,
    readImage: () => invoke('image', (out) => interpretNativeOutput(out, limits, same)),
    readPath: () => invoke('text', async (out) => pathFromText(out, same)),
  };
}

/** The Windows and WSL reader; the helper script is read at the first use, then kept. */
export class WindowsReader implements ClipboardReader {
  readonly name = 'windows';
  readonly reason: string;
  readonly #limits: ReadLimits;
  readonly #env: NodeJS.ProcessEnv;
  readonly #wsl: boolean;
  #script: string | null = null;

  constructor(limits: ReadLimits, env: NodeJS.ProcessEnv, reason: string, wsl: boolean) {
    this.#limits = limits;
    this.#env = env;
    this.reason = reason;
    this.#wsl = wsl;
  }

  async readImage(): Promise<ClipboardContent | null> {
    return interpretNativeOutput(await this.#invoke('image'), this.#limits, (p) => this.#localPath(p));
  }

  async readPath(): Promise<string | null> {
    return pathFromText(await this.#invoke('text'), (p) => this.#localPath(p));
  }

  #localPath(p: string): string | null {
    return this.#wsl ? windowsPathToWsl(p) : p;
  }

  #invoke(mode: NativeMode): Promise<NativeOutput> {
    this.#script ??= readFileSync(WINDOWS_HELPER, 'utf8');
    return runNativeHelper('Windows', windowsArgv(this.#script, mode), this.#limits, POWERSHELL_INSTALL, this.#env);
  }
}
