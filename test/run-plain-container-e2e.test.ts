// End-to-end on a real Podman engine: `jackin run --image` without a terminal relays the program plainly, as
// `docker run` without -t does: stdout holds only the program's bytes (LF line ends, no host escapes), stdin
// is its input with its end as end of file, the exit status is the program's, and the container is removed.
// The container is removed by the exact name the test gave it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import { JACKIN_BIN } from './helpers/jackin-cli.ts';
import { glibcTestImage, testContainer } from './helpers/podman-image.mjs';
import { pollUntil } from './helpers/poll.ts';
import { testDir, testRunEnv } from './helpers/test-run.ts';

const execFileP = promisify(execFile);

function jackin(args: string[], env: NodeJS.ProcessEnv, input: Buffer): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [JACKIN_BIN, ...args], { env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (b: Buffer) => (stdout += b.toString('latin1')));
    child.stderr.on('data', (b: Buffer) => (stderr += b.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(input);
  });
}

test('podman: jackin run --image with stdin and stdout piped relays the program plainly, ends with its status, removes its container', {
  timeout: 240_000,
}, async (t) => {
  const name = testContainer(t, 'podman-plain', 'podman');
  const image = await glibcTestImage('podman');
  const home = testDir(t, 'jackin-plain-ctr-home-', { shared: true });
  const ws = testDir(t, 'jackin-plain-ctr-ws-', { shared: true });
  const env = { ...process.env, ...testRunEnv(), JACKIN_HOME: home };
  const r = await jackin(
    [
      'run',
      '--image',
      image.ref,
      '--engine',
      'podman',
      '--name',
      name,
      '--workspace',
      ws,
      '--',
      'sh',
      '-c',
      'printf "got:"; cat; printf "a\\nb\\033[1mc\\n"; exit 3',
    ],
    env,
    Buffer.from('piped in\n'),
  );
  assert.equal(r.code, 3, r.stderr);
  assert.equal(r.stdout, 'got:piped in\na\nb\x1b[1mc\n');
  await pollUntil(
    'the container to be removed',
    async () => ((await execFileP('podman', ['ps', '-a', '--filter', `name=^${name}$`, '--format', '{{.Names}}'])).stdout.trim() === '' ? true : undefined),
    { timeoutMs: 30_000 },
  );
});
