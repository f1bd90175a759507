import { test } from 'node:test';
import assert from 'node:assert/strict';
import { hasCode } from '../../errors.ts';
import { chooseCapsule, type CapsuleFacts } from './capsule-choice.ts';

const linux = { platform: 'linux', glibc: true, hostArch: 'x64', image: 'img' } as const;

test('chooseCapsule: the default is the host on Linux glibc with an image of its architecture, else a runtime of the image architecture', () => {
  const rows: Array<[Partial<CapsuleFacts>, ReturnType<typeof chooseCapsule>]> = [
    // Linux glibc, same architecture (or not pulled yet: taken as the host's): the host lends its Node.
    [{ imageArch: 'amd64' }, { kind: 'host' }],
    [{ imageArch: null }, { kind: 'host' }],
    [{ hostArch: 'arm64', imageArch: 'arm64' }, { kind: 'host' }],
    [{ hostArch: 'arm64', imageArch: 'aarch64' }, { kind: 'host' }],
    // A Linux host of another architecture than the image: the image's runtime, with no host libraries.
    [{ imageArch: 'arm64' }, { kind: 'runtime', arch: 'arm64', lendLibraries: false }],
    [
      { hostArch: 'arm64', imageArch: 'amd64' },
      { kind: 'runtime', arch: 'x64', lendLibraries: false },
    ],
    // Linux without glibc (a musl Node): a runtime, and nothing of the host's C library can be lent.
    [
      { glibc: false, imageArch: 'amd64' },
      { kind: 'runtime', arch: 'x64', lendLibraries: false },
    ],
    // macOS and Windows: always a runtime, of the image's architecture (the host's when not pulled yet).
    [
      { platform: 'darwin', glibc: false, hostArch: 'arm64', imageArch: 'arm64' },
      { kind: 'runtime', arch: 'arm64', lendLibraries: false },
    ],
    [
      { platform: 'darwin', glibc: false, hostArch: 'arm64', imageArch: null },
      { kind: 'runtime', arch: 'arm64', lendLibraries: false },
    ],
    [
      { platform: 'darwin', glibc: false, hostArch: 'arm64', imageArch: 'amd64' },
      { kind: 'runtime', arch: 'x64', lendLibraries: false },
    ],
    [
      { platform: 'win32', glibc: false, hostArch: 'x64', imageArch: 'amd64' },
      { kind: 'runtime', arch: 'x64', lendLibraries: false },
    ],
    [
      { platform: 'win32', glibc: false, hostArch: 'x64', imageArch: null },
      { kind: 'runtime', arch: 'x64', lendLibraries: false },
    ],
    // Asked for.
    [{ asked: 'image', platform: 'darwin', glibc: false, imageArch: 's390x' }, { kind: 'image' }],
    [{ asked: 'image', imageArch: 'amd64' }, { kind: 'image' }],
    [
      { asked: 'runtime', imageArch: 'amd64' },
      { kind: 'runtime', arch: 'x64', lendLibraries: true },
    ],
    [
      { asked: 'runtime', imageArch: null },
      { kind: 'runtime', arch: 'x64', lendLibraries: true },
    ],
    [
      { asked: 'runtime', imageArch: 'arm64' },
      { kind: 'runtime', arch: 'arm64', lendLibraries: false },
    ],
    [{ asked: 'host', imageArch: 'amd64' }, { kind: 'host' }],
    // A host architecture with no runtime still lends its Node to an image of its own architecture.
    [{ hostArch: 'ppc64', imageArch: 'ppc64le' }, { kind: 'host' }],
  ];
  for (const [facts, want] of rows) {
    const f = { ...linux, asked: undefined, imageArch: null, ...facts };
    assert.deepEqual(chooseCapsule(f), want, JSON.stringify(facts));
  }
});

test('chooseCapsule: --capsule host where the host Node cannot run, and an architecture with no runtime, are E_USAGE naming the way out', () => {
  const refused = (facts: Partial<CapsuleFacts>, message: RegExp) =>
    assert.throws(
      () => chooseCapsule({ ...linux, asked: undefined, imageArch: null, ...facts }),
      (e) => hasCode(e, 'E_USAGE') && message.test((e as Error).message),
      JSON.stringify(facts),
    );
  refused({ asked: 'host', platform: 'darwin', glibc: false }, /needs a Linux glibc host \(this is darwin\).*--capsule runtime/);
  refused({ asked: 'host', glibc: false }, /this is linux without glibc.*--capsule runtime/);
  refused({ asked: 'host', imageArch: 'arm64' }, /image img is linux\/arm64 and this host's Node is x64.*use --capsule runtime/);
  refused({ imageArch: 's390x' }, /image img is linux\/s390x.*amd64 and arm64 only.*--capsule image/);
  refused({ asked: 'runtime', imageArch: 'ppc64le' }, /linux\/ppc64le.*--capsule image/);
  refused({ platform: 'darwin', glibc: false, hostArch: 'ia32', imageArch: null }, /linux\/386.*--capsule image/);
});
