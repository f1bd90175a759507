// End-to-end: the lifecycle commands on local capsules (no containers): `jackin run -d` then `jackin attach`,
// `jackin logs` (all, --tail, -f ending on Ctrl+C and when the capsule is gone, inert on a terminal),
// `jackin rm` and `jackin prune` (dead entries only; a live instance refused with E_INSTANCE_RUNNING).
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stopCapsules } from './helpers/capsules.ts';
import { INNER_PROMPT, INNER_SHELL, JACKIN, jackinAttach, paneFor, runJackin, waitForJackinExit, type JackinResult } from './helpers/jackin-cli.ts';
import { pollUntil } from './helpers/poll.ts';
import { removeTestDir, testDir } from './helpers/test-run.ts';

function jackin(args: string[], home: string): Promise<JackinResult> {
  return runJackin(args, { ...process.env, JACKIN_HOME: home }, { timeoutMs: 60_000 });
}

/** A fresh JACKIN_HOME whose capsules are stopped when the test ends. */
function home(t: TestContext): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'jackin-life-')));
  t.after(async () => {
    await stopCapsules(dir);
    removeTestDir(dir);
  });
  return dir;
}

/** A run directory as a local capsule that died would leave it: capsule.json, its log and a socket file nothing listens on. */
function deadRunDir(home: string, name: string): string {
  const dir = join(home, 'sockets', name);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  writeFileSync(join(dir, 'capsule.json'), JSON.stringify({ pid: 999999, name, program: ['gone'], workspace: '/', startedAt: '2026-01-01T00:00:00Z' }));
  writeFileSync(join(dir, 'jackin.sock'), '');
  // What `jackin run` leaves of a capsule that was killed: its log too.
  writeFileSync(join(dir, 'capsule.log'), 'capsule started\n');
  return dir;
}

test('jackin run -d prints the name and exits 0 once the capsule answers; jackin attach reaches it; logs -f ends on Ctrl+C with 130', async (t) => {
  const pane = await paneFor(t);
  await pane.typeLine(`clear; ${JACKIN} run -d --name bg -- ${INNER_SHELL}; echo "jackin-rc=$?"`);
  const screen = await pane.waitForText(/^jackin-rc=\d+$/m, { timeoutMs: 30_000 });
  assert.match(screen, /^bg\njackin-rc=0$/m, 'the name alone on stdout, then status 0');
  const ls = await jackin(['ls', '--json'], pane.jackinHome);
  const listed = (JSON.parse(ls.stdout) as Array<{ name: string; state: string; attached: boolean | null }>).find((i) => i.name === 'bg');
  assert.equal(listed?.state, 'live');
  assert.equal(listed?.attached, false, 'nobody attached: run -d did not');

  // A log line a hostile program could have put there: on the terminal its controls are escapes.
  writeFileSync(join(pane.jackinHome, 'sockets', 'bg', 'capsule.log'), 'first\tline\n\x1b[31mred\x1b]0;pwned\x07\n');
  await pane.typeLine('clear');
  await pane.typeLine(`${JACKIN} logs -f bg; echo "jackin-rc=$?"`);
  await pane.waitForText(/^first\s+line\n\\x1b\[31mred\\x1b\]0;pwned\\x07$/m);
  await pane.sendKeys('C-c');
  // The shell's ^C echo precedes the status on its line.
  assert.match(await pane.waitForText(/jackin-rc=\d+$/m), /jackin-rc=130$/m, 'Ctrl+C ends a follow with 130');

  await pane.typeLine(`clear; ${jackinAttach('bg')}; echo "jackin-rc=$?"`);
  await pane.waitForText(INNER_PROMPT, { timeoutMs: 30_000 });
  await pane.typeLine('echo "reached-$((40+2))"');
  await pane.waitForText(/^reached-42$/m);
  await pane.typeLine('exit 7');
  assert.equal(await waitForJackinExit(pane, 15_000), 7, "the reattached session gives the program's status");
});

test('jackin run -d: a capsule that cannot start is a non-zero status with its reason, and no name on stdout', async (t) => {
  const h = home(t);
  const r = await jackin(['run', '-d', '--name', 'bad', '--', 'no-such-program-here'], h);
  assert.equal(r.code, 1, r.stderr);
  assert.equal(r.stdout, '');
  assert.match(r.stderr, /capsule for bad exited .*E_SPAWN_FAILED.*\(E_CAPSULE_START\)/u);
});

test('jackin logs: --tail n, and -f ends with 0 once the capsule is gone; jackin log stays the host action log', async (t) => {
  const h = home(t);
  const dir = join(h, 'sockets', 'old');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'capsule.log'), 'one\ntwo\nthree\nfour');
  assert.equal((await jackin(['logs', 'old'], h)).stdout, 'one\ntwo\nthree\nfour');
  assert.equal((await jackin(['logs', '--tail', '2', 'old'], h)).stdout, 'three\nfour');
  assert.equal((await jackin(['logs', '--tail', '0', 'old'], h)).stdout, '');
  assert.equal((await jackin(['logs', '--tail', '9', 'old'], h)).stdout, 'one\ntwo\nthree\nfour');
  const bad = await jackin(['logs', '--tail', 'x', 'old'], h);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /--tail "x" is not a number/u);
  const none = await jackin(['logs', 'nobody'], h);
  assert.equal(none.code, 1);
  assert.match(none.stderr, /\(E_NO_INSTANCE\)$/mu);

  // A program that ends: the follow prints the capsule's last words and ends by itself when it is gone.
  const started = await jackin(['run', '-d', '--name', 'brief', '--', 'sh', '-c', 'exit 3'], h);
  assert.equal(started.stdout, 'brief\n', started.stderr);
  const followed = await jackin(['logs', '-f', 'brief'], h);
  assert.equal(followed.code, 0, followed.stderr);
  assert.match(followed.stdout, /program exited with status 3/u);

  const words = async (args: string[]) => (await jackin(args, h)).stdout.replace(/\s+/g, ' ');
  assert.match(await words(['logs', '--help']), /capsule log .*not jackin log, the host's record of actions/u);
  assert.match(await words(['log', '--help']), /host's record of host actions .*a capsule's own log is jackin logs NAME/u);
});

test('jackin rm removes dead instances and refuses a live one; jackin prune removes only what is dead', async (t) => {
  const h = home(t);
  const live = await jackin(['run', '-d', '--name', 'live', '--', 'sleep', '600'], h);
  assert.equal(live.stdout, 'live\n', live.stderr);

  const refused = await jackin(['rm', 'live'], h);
  assert.equal(refused.code, 1);
  assert.equal(refused.stdout, '');
  assert.match(refused.stderr, /instance live is running: stop it first with `jackin stop live` \(E_INSTANCE_RUNNING\)/u);
  assert.ok(existsSync(join(h, 'sockets', 'live', 'jackin.sock')));

  const unknown = await jackin(['rm', 'nobody'], h);
  assert.equal(unknown.code, 1);
  assert.match(unknown.stderr, /no instance nobody.*\(E_NO_INSTANCE\)/u);

  // rm of several: each dead one removed (one line each), the unknown one reported, status 1.
  const d1 = deadRunDir(h, 'dead1');
  const d2 = deadRunDir(h, 'dead2');
  const some = await jackin(['rm', 'dead1', 'nobody', 'dead2', '--json'], h);
  assert.equal(some.code, 1);
  assert.deepEqual(
    some.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l)),
    [
      { name: 'dead1', what: 'run-dir', path: d1 },
      { name: 'dead2', what: 'run-dir', path: d2 },
    ],
  );
  assert.match(some.stderr, /"code":"E_NO_INSTANCE"/u);
  assert.equal(existsSync(d1) || existsSync(d2), false);

  // prune: the stale one goes, the live one and a finished one (its log alone, for jackin logs) stay.
  const stale = deadRunDir(h, 'stale');
  const finished = join(h, 'sockets', 'finished');
  mkdirSync(finished, { recursive: true });
  writeFileSync(join(finished, 'capsule.log'), 'program exited with status 0\n');
  // No engine on PATH: this test must not touch the machine's containers (other tests' stopped ones).
  const noEngine = testDir(t, 'jackin-no-engine-');
  const prune = () => runJackin(['prune'], { ...process.env, JACKIN_HOME: h, PATH: noEngine }, { timeoutMs: 60_000 });
  const pruned = await prune();
  assert.equal(pruned.code, 0, pruned.stderr);
  assert.equal(pruned.stdout, `removed stale (run directory ${stale})\n`);
  assert.equal(existsSync(stale), false);
  assert.ok(existsSync(finished));
  const again = await jackin(['ls', '--json'], h);
  assert.deepEqual(
    (JSON.parse(again.stdout) as Array<{ name: string; state: string }>).map((i) => [i.name, i.state]),
    [['live', 'live']],
  );
  assert.equal((await prune()).stdout, '', 'nothing more to prune');
  // A run directory a stopped container mounts (its capsule.json names a pid of another PID namespace, no
  // log): not a local capsule's leftovers, so prune keeps it for the container's next start.
  const mounted = join(h, 'sockets', 'mounted');
  mkdirSync(mounted, { recursive: true, mode: 0o700 });
  writeFileSync(join(mounted, 'jackin.sock'), '');
  writeFileSync(join(mounted, 'capsule.json'), JSON.stringify({ pid: 7, name: 'mounted', pidNamespace: 'pid:[1]' }));
  assert.equal((await prune()).stdout, '', 'prune keeps a directory a container mounts');
  assert.ok(existsSync(join(mounted, 'capsule.json')));

  // A container record whose engine does not answer: nobody can tell whether it runs, so nothing goes.
  mkdirSync(join(h, 'containers'));
  const record = join(h, 'containers', 'boxed.json');
  writeFileSync(record, JSON.stringify({ engine: 'docker', container: 'boxed', image: 'img' }));
  const unsure = await runJackin(['rm', 'boxed'], { ...process.env, JACKIN_HOME: h, PATH: noEngine }, { timeoutMs: 60_000 });
  assert.equal(unsure.code, 1);
  assert.match(unsure.stderr, /docker does not answer.*\(E_ENGINE_COMMAND\)/u);
  assert.ok(existsSync(record));
  assert.equal((await prune()).stdout, '', 'prune keeps it too');
  assert.ok(existsSync(record));

  // Once stopped, the live one is dead and rm removes it (its finished directory too).
  assert.equal((await jackin(['stop', 'live'], h)).code, 0);
  await pollUntil('the stopped capsule to leave only its log', () => !existsSync(join(h, 'sockets', 'live', 'jackin.sock')));
  const rm = await jackin(['rm', 'live', 'finished'], h);
  assert.equal(rm.code, 0, rm.stderr);
  assert.equal(rm.stdout, `removed live (run directory ${join(h, 'sockets', 'live')})\nremoved finished (run directory ${finished})\n`);
});
