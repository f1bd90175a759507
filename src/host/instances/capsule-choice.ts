/**
 * Which capsule `jackin run --image` lends a container (`--capsule host|runtime|image`), decided from facts
 * the caller gathers (the platform, whether this Node is a glibc build, this host's and the image's
 * architectures): pure, so every case is tested in a table. The host's own Node runs in a Linux container
 * only when this is a Linux glibc host of the image's architecture; anywhere else (macOS, Windows, an image
 * of another architecture) the capsule is a Linux runtime of the image's architecture from jackin's cache
 * (src/host/runtime/). The image's own `jackin-capsule` is used only when asked for.
 */
import { JackinError } from '../../errors.ts';
import { runtimeArch, type RuntimeArch } from '../runtime/runtime.ts';

export const CAPSULE_SOURCES = ['host', 'runtime', 'image'] as const;
export type CapsuleKind = (typeof CAPSULE_SOURCES)[number];

export interface CapsuleFacts {
  /** `--capsule`, when given. */
  asked: CapsuleKind | undefined;
  platform: NodeJS.Platform;
  /** This Node is a glibc build (process.report's glibcVersionRuntime). */
  glibc: boolean;
  /** process.arch. */
  hostArch: string;
  /** The image's architecture as the engine names it (amd64, arm64), or null when unknown (not pulled yet). */
  imageArch: string | null;
  /** For messages. */
  image: string;
}

export type CapsuleChoice =
  | { kind: 'host' }
  | { kind: 'image' }
  /** `lendLibraries`: this host is Linux glibc of the runtime's architecture, so its loader and libraries can go with it. */
  | { kind: 'runtime'; arch: RuntimeArch; lendLibraries: boolean };

/** process.arch to the engines' name for it, for an image architecture jackin has no runtime for. */
const ENGINE_ARCH: Readonly<Record<string, string>> = { x64: 'amd64', ia32: '386', arm: 'arm', ppc64: 'ppc64le', s390x: 's390x', riscv64: 'riscv64' };

/** Can this host's Node and native modules run in a Linux container at all? Only a Linux glibc build can. */
function canLend(platform: NodeJS.Platform, glibc: boolean): boolean {
  return platform === 'linux' && glibc;
}

/** The image's architecture for the decision: the engine's, or this host's when the image is not here yet. */
function imageArchOf(f: CapsuleFacts): string {
  return f.imageArch ?? ENGINE_ARCH[f.hostArch] ?? f.hostArch;
}

/** Whether the image's architecture is this host's. */
function sameArch(f: CapsuleFacts): boolean {
  if (f.imageArch === null) return true;
  const mapped = runtimeArch(f.imageArch);
  return mapped !== null ? mapped === f.hostArch : f.imageArch === (ENGINE_ARCH[f.hostArch] ?? f.hostArch);
}

function runtimeFor(f: CapsuleFacts): CapsuleChoice {
  const engineArch = imageArchOf(f);
  const arch = runtimeArch(engineArch);
  if (arch === null) {
    throw new JackinError(
      'E_USAGE',
      `image ${f.image} is linux/${engineArch}, and jackin has a capsule runtime for amd64 and arm64 only: install jackin-bridge in the image and pass --capsule image`,
    );
  }
  return { kind: 'runtime', arch, lendLibraries: canLend(f.platform, f.glibc) && arch === f.hostArch };
}

/** The capsule for these facts; E_USAGE for `--capsule host` where the host's Node cannot run in the image. */
export function chooseCapsule(f: CapsuleFacts): CapsuleChoice {
  const lends = canLend(f.platform, f.glibc);
  switch (f.asked) {
    case 'image':
      return { kind: 'image' };
    case 'runtime':
      return runtimeFor(f);
    case 'host':
      if (!lends) {
        throw new JackinError(
          'E_USAGE',
          `--capsule host needs a Linux glibc host (this is ${f.platform}${f.platform === 'linux' ? ' without glibc' : ''}): its Node cannot run in a Linux container; ` +
            'use --capsule runtime (the default here: a Linux runtime from the npm registry), or install jackin-bridge in the image and use --capsule image',
        );
      }
      if (!sameArch(f)) {
        throw new JackinError(
          'E_USAGE',
          `--capsule host: image ${f.image} is linux/${imageArchOf(f)} and this host's Node is ${f.hostArch}, so it cannot run there: ` +
            "use --capsule runtime (the default for such an image: a Linux runtime of the image's architecture from the npm registry)",
        );
      }
      return { kind: 'host' };
    case undefined:
      return lends && sameArch(f) ? { kind: 'host' } : runtimeFor(f);
    default: {
      const never: never = f.asked;
      throw new TypeError(`unexpected capsule source ${JSON.stringify(never)}`);
    }
  }
}

/** JACKIN_CAPSULE (config key `capsule`): the default for --capsule; unset or empty is none. */
export function capsuleFromEnv(env: Readonly<Record<string, string | undefined>>): CapsuleKind | undefined {
  const value = env['JACKIN_CAPSULE'];
  if (value === undefined || value === '') return undefined;
  const kind = CAPSULE_SOURCES.find((k) => k === value.toLowerCase());
  if (kind === undefined)
    throw new JackinError(
      'E_USAGE',
      `JACKIN_CAPSULE=${JSON.stringify(value)} is not one of ${CAPSULE_SOURCES.join(', ')}: fix it, or unset it for the default`,
    );
  return kind;
}
