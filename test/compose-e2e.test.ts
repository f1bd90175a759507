// End-to-end: the compose service of docs/guide.md, as `jackin run --image --dry-run --format compose` prints it
// for this machine (its Node, this package, the pane's home), run with podman-compose, and `jackin attach` to it
// by name, over the socket and --via podman. The guide's block is that output for the guide's reference
// operator (src/host/instances/recipes.test.ts). The project, its container and its network are removed by
// the exact names this test gave them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { INNER_PROMPT, JACKIN, paneFor, runJackin, waitForInnerShell, waitForJackinExit } from './helpers/jackin-cli.ts';
import { containerName, glibcTestImage, removeContainer } from './helpers/podman-image.mjs';

const execFileP = promisify(execFile);
/** Creating the container, then Node and the PTY inside it, on a loaded 2-core machine. */
const CONTAINER_START_MS = 60_000;
const PALETTE_KEY = [0x1c];

test('jackin run --dry-run --format compose: the compose file it prints runs with podman-compose, and jackin attaches to it by name', {
  timeout: 240_000,
}, async (t) => {
  const pane = await paneFor(t, { rows: 30, cols: 120 });
  const image = await glibcTestImage();
  const project = containerName('compose');
  const dir = mkdtempSync(join(tmpdir(), 'jackin-compose-'));
  chmodSync(dir, 0o755);
  const env = { ...process.env, HOME: pane.home, JACKIN_HOME: pane.jackinHome };
  t.after(async () => {
    await execFileP('podman-compose', ['-p', project, 'down'], { cwd: dir, env }).catch(() => undefined);
    await removeContainer(`${project}_agent_1`);
    await execFileP('podman', ['network', 'rm', '-f', `${project}_default`]).catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  });

  // The program: a shell with a known prompt instead of claude (its `$` reaches compose doubled, and back as one).
  const printed = await runJackin(
    [
      'run',
      '--image',
      image.ref,
      '--engine',
      'podman',
      '--name',
      'agent',
      '--workspace',
      dir,
      '--dry-run',
      '--format',
      'compose',
      '--',
      'env',
      'PS1=in$ ',
      'bash',
      '--norc',
      '--noprofile',
    ],
    env,
  );
  assert.equal(printed.code, 0, printed.stderr);
  const compose = printed.stdout;
  // This machine's paths, shortened as a reader writes them; nothing of the guide's reference operator.
  assert.match(compose, /^ {6}- ~\/\.jackin\/sockets\/agent:\/jackin\/run$/m);
  assert.match(compose, /^ {6}- \.:\/workspace$/m);
  assert.doesNotMatch(compose, /\/usr\/lib\/node_modules\/jackin-bridge|\/home\/op/);
  assert.match(compose, /"PS1=in\$\$ "/);
  writeFileSync(join(dir, 'compose.yml'), compose);
  const uid = process.getuid?.() ?? 0;
  writeFileSync(join(dir, 'hello.txt'), 'from the workspace\n');
  // The file's first step (its first comment line): the run directory, created by its owner (mode 0700).
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
