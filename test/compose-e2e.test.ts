// End-to-end: the compose service of docs/guide.md, run as written with podman-compose (only this machine's
// values put in where the guide has a reader's), and `jackin attach` to it by name, over the socket and
// --via podman. The project, its container and its network are removed by the exact names this test gave them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { INNER_PROMPT, JACKIN, paneFor, REPO_ROOT, waitForInnerShell, waitForJackinExit } from './helpers/jackin-cli.ts';
import { containerName, glibcTestImage, removeContainer } from './helpers/podman-image.mjs';

const execFileP = promisify(execFile);
/** Creating the container, then Node and the PTY inside it, on a loaded 2-core machine. */
const CONTAINER_START_MS = 60_000;
const PALETTE_KEY = [0x1c];

/** `text` with `from` replaced by `to`; fails when the guide no longer has `from` (the test would go stale). */
function put(text: string, from: string, to: string): string {
  assert.ok(text.includes(from), `the guide's compose block no longer has ${JSON.stringify(from)}`);
  return text.replace(from, to);
}

test('docs/guide.md: the compose service runs with podman-compose as written, and jackin attaches to it by name', { timeout: 240_000 }, async (t) => {
  const guide = readFileSync(join(REPO_ROOT, 'docs', 'guide.md'), 'utf8');
  const block = /### Compose[\s\S]*?```yaml\n([\s\S]*?)```/.exec(guide)?.[1];
  assert.ok(block !== undefined, 'the compose block is in the guide');
  const pane = await paneFor(t, { rows: 30, cols: 120 });
  const image = await glibcTestImage();
  const project = containerName('compose');
  const dir = mkdtempSync(join(tmpdir(), 'jackin-compose-'));
  chmodSync(dir, 0o755);
  const env = { ...process.env, HOME: pane.home };
  t.after(async () => {
    await execFileP('podman-compose', ['-p', project, 'down'], { cwd: dir, env }).catch(() => undefined);
    await removeContainer(`${project}_agent_1`);
    await execFileP('podman', ['network', 'rm', '-f', `${project}_default`]).catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  });

  // What a reader changes: the image, `id -u`:`id -g`, where Node and the package are, and the program
  // (a shell with a known prompt instead of claude).
  const uid = process.getuid?.() ?? 0;
  const gid = process.getgid?.() ?? 0;
  let compose = put(block, 'image: my-agent', `image: ${image.ref}`);
  compose = put(compose, 'user: "1000:1000"', `user: "${uid}:${gid}"`);
  compose = put(compose, '/usr/bin/node:', `${realpathSync(process.execPath)}:`);
  compose = put(compose, '/usr/lib/node_modules/jackin-bridge:', `${realpathSync(REPO_ROOT)}:`);
  compose = put(compose, 'command: ["claude"]', 'command: ["env", "PS1=in$ ", "bash", "--norc", "--noprofile"]');
  writeFileSync(join(dir, 'compose.yml'), compose);
  writeFileSync(join(dir, 'hello.txt'), 'from the workspace\n');
  // The guide's first step: the run directory, created by its owner (mode 0700).
  mkdirSync(join(pane.home, '.jackin', 'sockets', 'agent'), { recursive: true, mode: 0o700 });

  await execFileP('podman-compose', ['-p', project, 'up', '-d', 'agent'], { cwd: dir, env });

  // Over the socket: attach waits for it to appear, the program runs in /workspace as the user given.
  await pane.typeLine(`clear; ${JACKIN} attach agent; echo "jackin-rc=$?"`);
  await pane.waitForText(INNER_PROMPT, { timeoutMs: CONTAINER_START_MS });
  await pane.typeLine('echo "pid1=$(cat /proc/1/comm) user=$(id -u) pwd=$PWD $(cat hello.txt)"');
  await pane.waitForText(new RegExp(`^pid1=(catatonit|podman-init) user=${uid} pwd=/workspace from the workspace$`, 'm'));
  await pane.sendBytes([...PALETTE_KEY, ...Buffer.from('d')]);
  assert.equal(await waitForJackinExit(pane), 0);
  await pane.waitForText('jackin: detached from agent');

  // Through the engine, by the container's own name (`podman-compose ps`); the program's exit status comes back.
  await pane.typeLine(`clear; ${JACKIN} attach ${project}_agent_1 --via podman; echo "jackin-rc=$?"`);
  // The detached session's screen (its prompt) is up until `clear` runs: wait for the inner shell's answer.
  await waitForInnerShell(pane, 30_000);
  await pane.typeLine('echo via-$((2*21)); exit 5');
  await pane.waitForText(/^via-42$/m);
  assert.equal(await waitForJackinExit(pane, 30_000), 5);
});
