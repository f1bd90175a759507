import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { imageFacts } from './image-facts.ts';
import { DEFAULT_IMAGE_PATH } from './container-run-argv.ts';

/**
 * A stand-in podman that logs its argv: `image inspect` answers once `pulled` exists (arm64, a PATH), `pull`
 * creates it when `pullable` exists.
 */
function standIn(t: { after: (fn: () => void) => void }) {
  const bin = mkdtempSync(join(tmpdir(), 'jackin-facts-'));
  t.after(() => rmSync(bin, { recursive: true, force: true }));
  const log = join(bin, 'argv.log');
  writeFileSync(
    join(bin, 'podman'),
    `#!/bin/sh
printf '%s\\n' "$*" >> '${log}'
case "$1" in
  image) [ -e '${bin}/pulled' ] && { echo 'arm64 ["PATH=/opt/bin:/bin"]'; exit 0; }; echo "Error: no such image" >&2; exit 125 ;;
  pull) [ -e '${bin}/pullable' ] && { printf 'Copying blob \\033]0;owned\\007done\\n'; : > '${bin}/pulled'; exit 0; }; echo "Error: initializing source" >&2; exit 125 ;;
esac
exit 2
`,
    { mode: 0o755 },
  );
  return { bin, env: { PATH: `${bin}:/usr/bin:/bin` }, argv: () => readFileSync(log, 'utf8').trim().split('\n') };
}

test('imageFacts: an image here is inspected, never pulled', async (t) => {
  const s = standIn(t);
  writeFileSync(join(s.bin, 'pulled'), '');
  const lines: string[] = [];
  const facts = await imageFacts('podman', 'agent:1', { pullMissing: true, say: (l) => lines.push(l), env: s.env });
  assert.deepEqual(facts, { arch: 'arm64', path: '/opt/bin:/bin', pulled: false });
  assert.deepEqual(s.argv(), ['image inspect --format {{.Architecture}} {{json .Config.Env}} agent:1']);
  assert.deepEqual(lines, []);
});

test('imageFacts: an image not here is pulled first, said, then inspected; without pullMissing it is not', async (t) => {
  const s = standIn(t);
  writeFileSync(join(s.bin, 'pullable'), '');
  const lines: string[] = [];
  const dry = await imageFacts('podman', 'agent:1', { pullMissing: false, say: (l) => lines.push(l), env: s.env });
  assert.deepEqual(dry, { arch: null, path: DEFAULT_IMAGE_PATH, pulled: false });
  assert.deepEqual(s.argv(), ['image inspect --format {{.Architecture}} {{json .Config.Env}} agent:1']);
  const progress: string[] = [];
  const facts = await imageFacts('podman', 'agent:1', { pullMissing: true, say: (l) => lines.push(l), env: s.env, progress: (l) => progress.push(l) });
  assert.deepEqual(facts, { arch: 'arm64', path: '/opt/bin:/bin', pulled: true });
  // The engine's progress, a registry's words among it, reaches the terminal inert.
  assert.deepEqual(progress, ['Copying blob \\x1b]0;owned\\x07done']);
  assert.deepEqual(s.argv().slice(1), [
    'image inspect --format {{.Architecture}} {{json .Config.Env}} agent:1',
    'pull agent:1',
    'image inspect --format {{.Architecture}} {{json .Config.Env}} agent:1',
  ]);
  assert.deepEqual(lines, ['pulling agent:1 first: its architecture decides which capsule it gets']);
});

test('imageFacts: a pull that fails leaves the guess (no architecture, the default PATH), no error', async (t) => {
  const s = standIn(t);
  const facts = await imageFacts('podman', 'localhost/none:1', { pullMissing: true, say: () => undefined, env: s.env });
  assert.deepEqual(facts, { arch: null, path: DEFAULT_IMAGE_PATH, pulled: false });
  assert.deepEqual(s.argv(), ['image inspect --format {{.Architecture}} {{json .Config.Env}} localhost/none:1', 'pull localhost/none:1']);
});
