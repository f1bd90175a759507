/**
 * The registry tarballs a runtime is made from, each verified against its pin (pins.ts) before it is kept
 * in `<cache>/runtime/tarballs/` (under the name `npm pack` gives it): the registry's packument must state
 * the pinned integrity, and the bytes must hash to it while they stream in. A tarball in that directory is
 * hashed again before use, so a file put there by hand (`jackin runtime fetch --from DIR`) or damaged on
 * disk is never trusted by its name alone. Nothing unverified is ever kept under a tarball's name.
 */
import { createReadStream, createWriteStream } from 'node:fs';
import { copyFile, mkdir, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { JackinError } from '../../errors.ts';
import { nodeCrypto, randomBytes } from '../../lazy-builtins.ts';
import { packFileName, spec, type PinnedPackage, type RuntimeArch } from './pins.ts';

/** Download progress of one tarball: bytes so far and the total the registry announced (null: unknown). */
export type Progress = (label: string, received: number, total: number | null) => void;

export interface TarballSource {
  /** The registry's base URL, ending in `/`. */
  readonly registry: string;
  /** `<cache>/runtime/tarballs`. */
  readonly dir: string;
  readonly say: (line: string) => void;
  readonly progress?: Progress | undefined;
}

/** A packument that does not answer within this is taken as unreachable. */
const PACKUMENT_TIMEOUT_MS = 30_000;
/** A tarball download that receives nothing for this long is given up. */
const STALL_TIMEOUT_MS = 60_000;

/** The registry's base URL from the environment: JACKIN_REGISTRY, npm_config_registry, else npm's. */
export function registryUrl(env: NodeJS.ProcessEnv): string {
  const url = env['JACKIN_REGISTRY'] || env['npm_config_registry'] || 'https://registry.npmjs.org/';
  return url.endsWith('/') ? url : `${url}/`;
}

/** Where a package's packument is: `@scope/name` is one path segment, `@scope%2fname`, as npm asks. */
function packumentUrl(registry: string, name: string): string {
  return new URL(name.replace('/', '%2f'), registry).href;
}

/** The tarball's usual URL on `registry` (what the packument would say), for messages when it cannot be asked. */
function usualTarballUrl(registry: string, p: PinnedPackage): string {
  const base = p.name.includes('/') ? p.name.slice(p.name.indexOf('/') + 1) : p.name;
  return new URL(`${p.name}/-/${base}-${p.version}.tgz`, registry).href;
}

/** `sha512-<base64>` of a file. */
async function fileIntegrity(file: string): Promise<string> {
  const hash = nodeCrypto().createHash('sha512');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return `sha512-${hash.digest('base64')}`;
}

/** A package the registry could not give, and why (for the one offline error). */
interface Missing {
  readonly pin: PinnedPackage;
  readonly url: string;
  readonly reason: string;
}

class Unreachable extends Error {}

/** A temporary name beside `file`, unique to this process and call. */
function tempBeside(file: string): string {
  return `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
}

/** The cached tarball of `pin` when it is there and hashes to the pin; a damaged one is removed. */
async function cachedTarball(pin: PinnedPackage, dir: string, say: (line: string) => void): Promise<string | null> {
  const file = join(dir, packFileName(pin));
  try {
    await stat(file);
  } catch {
    return null;
  }
  if ((await fileIntegrity(file)) === pin.integrity) return file;
  say(`${file} does not match the pinned integrity of ${spec(pin)}: removed, fetching it again`);
  await rm(file, { force: true });
  return null;
}

/** Copies `from` into the cache as `pin`'s tarball, after checking it hashes to the pin. */
async function keepVerified(pin: PinnedPackage, from: string, dir: string): Promise<string> {
  const actual = await fileIntegrity(from);
  if (actual !== pin.integrity) {
    throw new JackinError('E_RUNTIME_INTEGRITY', `${from} is not ${spec(pin)}: its integrity is ${actual}, the pinned one ${pin.integrity}; nothing was kept`);
  }
  await mkdir(dir, { recursive: true });
  const file = join(dir, packFileName(pin));
  const tmp = tempBeside(file);
  try {
    await copyFile(from, tmp);
    await rename(tmp, file);
  } finally {
    await rm(tmp, { force: true });
  }
  return file;
}

async function fetchOrUnreachable(url: string, init: RequestInit): Promise<Response> {
  let res: Response;
  try {
    res = await fetch(url, init);
  } catch (e) {
    const cause = e instanceof Error && e.cause instanceof Error ? `: ${e.cause.message}` : '';
    throw new Unreachable(`${e instanceof Error ? e.message : String(e)}${cause}`);
  }
  if (!res.ok) {
    await res.body?.cancel();
    throw new Unreachable(`HTTP ${res.status}`);
  }
  return res;
}

/** The tarball URL the packument gives for `pin`, after checking it states the pinned integrity. */
async function tarballUrl(pin: PinnedPackage, registry: string): Promise<string> {
  const res = await fetchOrUnreachable(packumentUrl(registry, pin.name), {
    headers: { accept: 'application/vnd.npm.install-v1+json; q=1.0, application/json; q=0.8' },
    signal: AbortSignal.timeout(PACKUMENT_TIMEOUT_MS),
  });
  let doc: { versions?: Record<string, { dist?: { integrity?: unknown; tarball?: unknown } }> };
  try {
    doc = (await res.json()) as typeof doc;
  } catch (e) {
    throw new Unreachable(`its packument is not JSON (${e instanceof Error ? e.message : String(e)})`);
  }
  const dist = doc.versions?.[pin.version]?.dist;
  if (dist === undefined) throw new Unreachable(`the registry has no version ${pin.version}`);
  if (dist.integrity !== pin.integrity) {
    throw new JackinError(
      'E_RUNTIME_INTEGRITY',
      `the registry ${registry} states ${spec(pin)} has integrity ${String(dist.integrity)}, not the pinned ${pin.integrity}: it is not used`,
    );
  }
  if (typeof dist.tarball !== 'string') throw new Unreachable('its packument names no tarball');
  return dist.tarball;
}

/** Downloads `url` into the cache as `pin`'s tarball, hashing while it streams; refused when the hash differs. */
async function download(pin: PinnedPackage, url: string, src: TarballSource): Promise<string> {
  await mkdir(src.dir, { recursive: true });
  const file = join(src.dir, packFileName(pin));
  const tmp = tempBeside(file);
  const abort = new AbortController();
  let stall: NodeJS.Timeout | undefined;
  const armStall = (): void => {
    clearTimeout(stall);
    stall = setTimeout(() => abort.abort(new Error(`nothing received for ${STALL_TIMEOUT_MS / 1000} s`)), STALL_TIMEOUT_MS);
  };
  try {
    armStall();
    const res = await fetchOrUnreachable(url, { signal: abort.signal });
    const length = Number(res.headers.get('content-length'));
    const total = Number.isSafeInteger(length) && length > 0 ? length : null;
    const hash = nodeCrypto().createHash('sha512');
    const out = createWriteStream(tmp, { flags: 'wx' });
    let received = 0;
    try {
      if (res.body !== null) {
        for await (const chunk of res.body as AsyncIterable<Uint8Array>) {
          armStall();
          hash.update(chunk);
          received += chunk.length;
          src.progress?.(spec(pin), received, total);
          if (!out.write(chunk)) await new Promise<void>((resolve) => out.once('drain', () => resolve()));
        }
      }
    } catch (e) {
      throw new Unreachable(`the download of ${url} broke off after ${received} bytes (${e instanceof Error ? e.message : String(e)})`);
    } finally {
      await new Promise<void>((resolve, reject) => out.end((e?: Error | null) => (e ? reject(e) : resolve())));
    }
    const actual = `sha512-${hash.digest('base64')}`;
    if (actual !== pin.integrity) {
      throw new JackinError(
        'E_RUNTIME_INTEGRITY',
        `the tarball of ${spec(pin)} from ${url} hashes to ${actual}, not the pinned ${pin.integrity}: it is not used`,
      );
    }
    await rename(tmp, file);
    return file;
  } finally {
    clearTimeout(stall);
    await rm(tmp, { force: true });
  }
}

/**
 * The verified tarball of each pin, from the cache or the registry. Every package the registry could not
 * give is gathered into one E_RUNTIME_FETCH (offlineError); an integrity that differs stops at once.
 */
export async function verifiedTarballs(arch: RuntimeArch, pins: readonly PinnedPackage[], src: TarballSource): Promise<string[]> {
  const files: string[] = [];
  const missing: Missing[] = [];
  for (const pin of pins) {
    const cached = await cachedTarball(pin, src.dir, src.say);
    if (cached !== null) {
      files.push(cached);
      continue;
    }
    let url = usualTarballUrl(src.registry, pin);
    try {
      url = await tarballUrl(pin, src.registry);
      src.say(`downloading ${spec(pin)} from ${url}`);
      files.push(await download(pin, url, src));
    } catch (e) {
      if (!(e instanceof Unreachable)) throw e;
      missing.push({ pin, url, reason: e.message });
    }
  }
  if (missing.length > 0) throw offlineError(arch, missing, src.registry, pins);
  return files;
}

/** The verified tarball of each pin, from the cache or from `dir` (`npm pack` names); missing ones in one error. */
export async function tarballsFrom(arch: RuntimeArch, pins: readonly PinnedPackage[], dir: string, src: TarballSource): Promise<string[]> {
  const files: string[] = [];
  const absent: PinnedPackage[] = [];
  for (const pin of pins) {
    const cached = await cachedTarball(pin, src.dir, src.say);
    if (cached !== null) {
      files.push(cached);
      continue;
    }
    const candidate = join(dir, packFileName(pin));
    try {
      await stat(candidate);
    } catch {
      absent.push(pin);
      continue;
    }
    src.say(`taking ${spec(pin)} from ${candidate}`);
    files.push(await keepVerified(pin, candidate, src.dir));
  }
  if (absent.length > 0) {
    throw new JackinError(
      'E_RUNTIME_FETCH',
      `${dir} does not hold ${absent.map((p) => packFileName(p)).join(', ')} (${absent.map(spec).join(', ')}): on a machine with network run \`npm pack ${pins.map(spec).join(' ')}\`, copy the .tgz files into ${dir}, then run \`jackin runtime fetch --arch ${arch} --from ${dir}\` again`,
    );
  }
  return files;
}

/** The one error of an unreachable registry: each package missing with its URL, and how to fill the cache by hand. */
function offlineError(arch: RuntimeArch, missing: readonly Missing[], registry: string, pins: readonly PinnedPackage[]): JackinError {
  const list = missing.map((m) => `${spec(m.pin)} (${m.url}: ${m.reason})`).join('; ');
  return new JackinError(
    'E_RUNTIME_FETCH',
    `the capsule runtime for ${arch} could not be fetched from the registry ${registry}, missing: ${list}. ` +
      `On an offline machine, fill the cache by hand: on a machine with network run \`npm pack ${pins.map(spec).join(' ')}\`, ` +
      `copy the .tgz files over, then run \`jackin runtime fetch --arch ${arch} --from DIR\` (DIR: where you copied them); ` +
      'or point JACKIN_REGISTRY at a registry this machine reaches',
  );
}
