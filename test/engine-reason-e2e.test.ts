// needs-docker-engine
// A container that cannot start says why in the engine's own words, on Podman and on a real Docker engine
// (scripts/docker-engine.sh, started by scripts/run-tests.mjs): docker ends its stderr with a usage line
// ("Run 'docker run --help' for more information"), and the line before it is the reason. Two failures no
// registry is needed for: an image on a registry that does not answer (localhost), and a reference that is
// not one. Nothing starts; the names are removed anyway, by their exact name.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { runJackin } from './helpers/jackin-cli.ts';
import { type TestEngine, testContainer } from './helpers/podman-image.mjs';
import { testDir } from './helpers/test-run.ts';

const ENGINES: readonly TestEngine[] = ['podman', 'docker'];
/** Podman retries a pull three times, a second apart, before it gives up. */
const FAIL_MS = 60_000;

for (const engine of ENGINES) {
  test(`${engine}: a missing image and a bad reference fail with the engine's reason, not its usage line`, { timeout: 2 * FAIL_MS }, async (t) => {
    const dir = testDir(t, `jackin-reason-${engine}-`);
    const env = { ...process.env, JACKIN_HOME: join(dir, 'jh') };
    const cases: Array<[string, RegExp]> = [
      [
        `localhost/jackin-no-such-image-${process.pid}:1`,
        engine === 'docker'
          ? /Unable to find image .*jackin-no-such-image.* locally \| docker: Error response from daemon: .*localhost/
          : /Error: initializing source .*jackin-no-such-image.*localhost/,
      ],
      ['UPPER:bad ref', /invalid reference format/],
    ];
    for (const [image, reason] of cases) {
      const name = testContainer(t, `${engine}-reason`, engine);
      const r = await runJackin(['run', '--image', image, '--engine', engine, '--name', name, '--workspace', dir, '--', 'true'], env, {
        timeoutMs: FAIL_MS,
      });
      assert.equal(r.code, 1, r.stderr);
      const line = r.stderr.split('\n').find((l) => l.includes('could not start the container')) ?? '';
      assert.match(line, new RegExp(`^jackin: could not start the container: ${engine} run failed: `), r.stderr);
      assert.match(line, reason, r.stderr);
      assert.match(line, /\(E_CONTAINER_START\)$/, r.stderr);
      assert.doesNotMatch(line, /--help/, 'the usage line is left out');
    }
  });
}
