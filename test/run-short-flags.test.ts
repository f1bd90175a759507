/**
 * `jackin run --image` takes docker's short forms (`-v` volume, `-e` env, `-w` workspace, `-u` user); `-v` no
 * longer means `--verbose` anywhere, and for one release a `-v` written in that old meaning is refused with
 * what to write instead. A `--dry-run` before `--` never starts anything. The engine here is a stand-in on
 * PATH that records every call, so "started nothing" is checked, not assumed.
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runJackin, type JackinResult } from './helpers/jackin-cli.ts';
import { stopCapsules } from './helpers/capsules.ts';
import { testDir } from './helpers/test-run.ts';

interface Fixture {
  dir: string;
  /** Every call of the stand-in docker, one line each. */
  calls(): string[];
  jackin(args: string[]): Promise<JackinResult>;
}

function fixture(t: TestContext): Fixture {
  const dir = testDir(t, 'jackin-short-');
  // Registered after testDir's removal, so run before it: a `run` the refusal failed to stop (a local `run -v
  // bash` starts bash in a capsule when -v means --verbose) is stopped, not left running.
  t.after(() => stopCapsules(join(dir, 'jh')));
  const bin = join(dir, 'bin');
  mkdirSync(bin);
  mkdirSync(join(dir, 'cfg'));
  const log = join(dir, 'calls.log');
  // `image inspect` fails as for an image not pulled yet; a `run` would be recorded and fail.
  writeFileSync(join(bin, 'docker'), `#!/bin/sh\necho "$*" >> '${log}'\necho "Error: no such image" >&2\nexit 1\n`, { mode: 0o755 });
  const env = { ...process.env, PATH: `${bin}:${process.env['PATH'] ?? '/usr/bin:/bin'}`, JACKIN_HOME: join(dir, 'jh') };
  return {
    dir,
    calls: () => (existsSync(log) ? readFileSync(log, 'utf8').trim().split('\n') : []),
    jackin: (args) => runJackin(args, env, { timeoutMs: 30_000 }),
  };
}

const startedAny = (calls: string[]) => calls.filter((c) => /^(run|create|start)\b/.test(c));

test('run --image with -v, -e, -w, -u and --dry-run prints the engine command with them and starts nothing', async (t) => {
  const f = fixture(t);
  const cfg = join(f.dir, 'cfg');
  const r = await f.jackin([
    'run',
    '--image',
    'img',
    '--engine',
    'docker',
    '--name',
    'short',
    '-v',
    `${cfg}:/src:ro`,
    '-e',
    'A=1',
    '-w',
    f.dir,
    '-u',
    '1234:1234',
    '--dry-run',
    '--',
    'bash',
  ]);
  assert.equal(r.code, 0, r.stderr);
  const run = r.stdout.trim().split('\n')[1] ?? '';
  assert.match(run, new RegExp(` -v ${f.dir}:/workspace -w /workspace `));
  assert.match(run, / --user 1234:1234 /);
  assert.match(run, / -e A /);
  assert.match(run, new RegExp(` -v ${cfg}:/src:ro `));
  assert.match(run, / img .* -- bash$/);
  assert.deepEqual(startedAny(f.calls()), []);
  // The form that used to start a container: `-v` was a flag, so the mount became the program and
  // `--dry-run -- bash` its arguments.
  const old = await f.jackin(['run', '--image', 'img', '--engine', 'docker', '--name', 'short', '-v', '/tmp:/src', '--dry-run', '--', 'bash']);
  assert.equal(old.code, 0, old.stderr);
  assert.match(old.stdout, / -v \/tmp:\/src .* img .* -- bash\n$/);
  assert.deepEqual(startedAny(f.calls()), []);
  // A --dry-run after the program and before -- was jackin's: refused, nothing started.
  const late = await f.jackin(['run', '--image', 'img', '--engine', 'docker', 'prog', '--dry-run', '--', 'bash']);
  assert.equal(late.code, 2, late.stderr);
  assert.match(late.stderr, /^jackin: --dry-run comes after the program \("prog"\) and before --: .*nothing was started\n$/);
  assert.deepEqual(startedAny(f.calls()), []);
  // After the `--` that starts the program, its words are its own, --dry-run and -- included.
  const own = await f.jackin(['run', '--image', 'img', '--engine', 'docker', '--dry-run', '--', 'prog', '--dry-run', '--', 'x']);
  assert.equal(own.code, 0, own.stderr);
  assert.match(own.stdout, / img .* -- prog --dry-run -- x\n$/);
  assert.deepEqual(startedAny(f.calls()), []);
});

test('-v in its old meaning (--verbose) is refused with what to write instead, on run, attach and forward; nothing starts', async (t) => {
  const f = fixture(t);
  const runCases = [
    ['run', '-v', '--', 'bash'],
    ['run', '-v'],
    ['run', '-v', 'bash'],
    ['run', '--image', 'img', '--engine', 'docker', '-v', '--', 'bash'],
    ['run', '--image', 'img', '--engine', 'docker', '-v', '--dry-run', '--', 'bash'],
    ['run', '--image', 'img', '--engine', 'docker', '-v', '--name', 'x', '--', 'bash'],
    ['run', '--image', 'img', '--engine', 'docker', '-v', 'no-such-dir', '--', 'bash'],
  ];
  for (const args of runCases) {
    const r = await f.jackin(args);
    assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, /^jackin: -v is now --volume HOST:CONTAINER \(as docker's\), .*use --verbose; nothing was started\n$/, args.join(' '));
  }
  for (const args of [
    ['attach', 'agent', '-v'],
    ['attach', '-v', 'agent', '--via', 'docker'],
    ['forward', 'agent', '3000', '-v'],
  ]) {
    const r = await f.jackin(args);
    assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.equal(r.stderr, "jackin: -v no longer means --verbose (in jackin run it is --volume, as docker's): use --verbose\n", args.join(' '));
  }
  assert.deepEqual(f.calls(), [], 'the engine was not called');
  // The help says so.
  for (const [cmd, verbose] of [
    ['run', /^ {2}--verbose +print diagnostics/m],
    ['attach', /^ {2}--verbose +print the chosen transport/m],
    ['forward', /^ {2}--verbose +print one line per connection/m],
  ] as const) {
    const h = await f.jackin([cmd, '--help']);
    assert.match(h.stdout, verbose);
    assert.doesNotMatch(h.stdout, /-v, --verbose/);
  }
  const help = (await f.jackin(['run', '--help'])).stdout;
  for (const short of ['-v, --volume', '-e, --env', '-w, --workspace', '-u, --user']) assert.ok(help.includes(short), short);
});
