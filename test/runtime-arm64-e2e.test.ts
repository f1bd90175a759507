// needs-docker-engine
// The arm64 runtime in a real arm64 container on this x64 machine, through qemu user emulation registered
// with binfmt_misc (scripts/setup-arm64.sh; on CI, .ci/run), on Podman and on a real Docker engine. The
// image is Debian's arm64 busybox-static, glibc and libstdc++ (test/helpers/podman-image.mjs
// arm64TestImage), loaded with arm64 recorded, no registry. Without the set-up every test here fails and
// names it: a machine that cannot emulate arm64 must not pass for one that tested it.
// Every container is removed by the exact name the test gave it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { arm64TestImage, assertArm64Emulation, type TestEngine, testContainer } from './helpers/podman-image.mjs';

const execFileP = promisify(execFile);
const ENGINES: readonly TestEngine[] = ['podman', 'docker'];

for (const engine of ENGINES) {
  test(`${engine}: the arm64 test image is recorded as arm64 and its busybox runs under emulation`, { timeout: 120_000 }, async (t) => {
    assertArm64Emulation();
    const image = await arm64TestImage(engine);
    const inspected = await execFileP(engine, ['image', 'inspect', '--format', '{{.Os}}/{{.Architecture}}', image.ref], { encoding: 'utf8' });
    assert.equal(inspected.stdout.trim(), 'linux/arm64');
    const name = testContainer(t, `${engine}-arm64`, engine);
    const r = await execFileP(engine, ['run', '--rm', '--name', name, '--platform', 'linux/arm64', image.ref, 'uname', '-m'], { encoding: 'utf8' });
    assert.equal(r.stdout.trim(), 'aarch64');
  });
}
