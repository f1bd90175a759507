/**
 * `jackin completion bash|zsh|fish` against the real command tree: every command and option is in each
 * script, bash and fish complete with it for real (instance names from `jackin ls --names`), zsh parses
 * it and completes with compsys's functions stubbed. bash, zsh and fish are installed by .ci/run: a missing
 * shell fails the test.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Help } from 'commander';
import { buildProgram } from '../src/cli/jackin.ts';
import { JACKIN_BIN } from './helpers/jackin-cli.ts';
import { testDir } from './helpers/test-run.ts';

/** A PATH whose `jackin` is this checkout's, and a JACKIN_HOME with instances agent and box (and a name no shell should see). */
function setUp(t: { after: (fn: () => void) => void }): NodeJS.ProcessEnv {
  const dir = testDir(t, 'jackin-completion-');
  const bin = join(dir, 'bin');
  mkdirSync(bin);
  writeFileSync(join(bin, 'jackin'), `#!/bin/sh\nexec '${process.execPath}' '${JACKIN_BIN}' "$@"\n`);
  chmodSync(join(bin, 'jackin'), 0o755);
  const home = join(dir, 'home');
  for (const name of ['agent', 'box', 'bad name', '-x']) mkdirSync(join(home, 'sockets', name), { recursive: true });
  return { ...process.env, PATH: `${bin}:${process.env['PATH']}`, JACKIN_HOME: home, JACKIN_CONFIG: 'none' };
}

function script(shell: string, env: NodeJS.ProcessEnv): string {
  const r = spawnSync(process.execPath, [JACKIN_BIN, 'completion', shell], { env, encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  return r.stdout;
}

/** The visible commands of the real tree and their visible options. */
function tree(): Array<{ name: string; options: Array<{ short?: string | undefined; long?: string | undefined }> }> {
  const program = buildProgram(() => {});
  const help = new Help();
  return [
    { name: '', options: help.visibleOptions(program) },
    ...help.visibleCommands(program).map((c) => ({ name: c.name(), options: help.visibleOptions(c) })),
  ];
}

test('every command and every option of the real tree is in each script', (t) => {
  const env = setUp(t);
  const commands = tree();
  assert.ok(commands.length >= 11 && commands.some((c) => c.name === 'completion'));
  for (const shell of ['bash', 'zsh', 'fish']) {
    const text = script(shell, env);
    const tokens = new Set(text.split(/[\s'|()]+/u));
    for (const c of commands) {
      if (c.name !== '') assert.ok(shell === 'fish' ? text.includes(`-a '${c.name}'`) : tokens.has(c.name), `${shell}: command ${c.name}`);
      for (const o of c.options) {
        for (const flag of [o.short, o.long]) {
          if (flag === undefined) continue;
          const found = shell === 'fish' ? text.includes(flag.startsWith('--') ? ` -l ${flag.slice(2)} ` : ` -s ${flag.slice(1)} `) : tokens.has(flag);
          assert.ok(found, `${shell}: ${c.name} ${flag}`);
        }
      }
    }
  }
});

test('bash completes commands, options, choices and instance names with the script', (t) => {
  const env = setUp(t);
  const file = join(testDir(t, 'jackin-completion-bash-'), 'jackin.bash');
  writeFileSync(file, script('bash', env));
  const complete = (...words: string[]): string[] => {
    const run = 'source "$1" && shift && COMP_WORDS=("$@") && COMP_CWORD=$(($# - 1)) && { _jackin; printf \'%s\\n\' "${COMPREPLY[@]}"; }';
    const r = spawnSync('bash', ['-c', run, 'bash', file, 'jackin', ...words], { env, encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stderr, '');
    return r.stdout.split('\n').filter((l) => l !== '');
  };
  assert.deepEqual(complete('ex'), ['export']);
  assert.deepEqual(complete('st'), ['stop', 'stage']);
  assert.deepEqual(complete('attach', ''), ['agent', 'box']);
  assert.deepEqual(complete('attach', 'b'), ['box']);
  assert.deepEqual(complete('attach', '--via', 'p'), ['podman']);
  assert.deepEqual(complete('attach', '--na'), ['--name', '--namespace']);
  assert.deepEqual(complete('attach', '-n', 'dev', ''), ['agent', 'box']);
  assert.deepEqual(complete('export', '--name', ''), ['agent', 'box']);
  assert.deepEqual(complete('forward', 'agent', ''), [], 'the port is not an instance');
  assert.deepEqual(complete('completion', ''), ['bash', 'zsh', 'fish']);
  assert.deepEqual(complete('ls', '--'), ['--json', '--ssh', '--help']);
  assert.deepEqual(complete('runtime', ''), ['ls', 'fetch', 'rm']);
  assert.deepEqual(complete('runtime', 'fetch', '--arch', ''), ['x64', 'arm64']);
});

test('fish completes with its script; zsh and fish parse theirs', (t) => {
  const env = setUp(t);
  const fish = (line: string): string[] => {
    const r = spawnSync('fish', ['-c', `jackin completion fish | source; complete -C '${line}'`], { env, encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stderr, '');
    return r.stdout
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => l.split('\t')[0]!);
  };
  assert.deepEqual(fish('jackin ex'), ['export']);
  assert.deepEqual(fish('jackin attach --via '), ['docker', 'kubectl', 'podman']);
  assert.deepEqual(fish('jackin attach '), ['agent', 'box']);
  assert.deepEqual(fish('jackin stage --name '), ['agent', 'box']);
  assert.deepEqual(fish('jackin runtime '), ['fetch', 'ls', 'rm']);
  const dir = testDir(t, 'jackin-completion-scripts-');
  for (const [shell, args] of [
    ['zsh', ['-n']],
    ['fish', ['--no-execute']],
  ] as const) {
    const file = join(dir, `jackin.${shell}`);
    writeFileSync(file, script(shell, env));
    const r = spawnSync(shell, [...args, file], { env, encoding: 'utf8' });
    assert.equal(r.error, undefined, `${shell} is installed`);
    assert.equal(r.status, 0, `${shell}: ${r.stderr}`);
  }
  assert.match(script('zsh', env), /^#compdef jackin\n/u);
});

test('zsh: the script completes with compsys stubbed (compadd prints its words, _files says FILES)', (t) => {
  const env = setUp(t);
  const file = join(testDir(t, 'jackin-completion-zsh-'), 'jackin.zsh');
  writeFileSync(file, script('zsh', env));
  const stubs = 'compdef() { :; }; compadd() { [[ $1 == -- ]] && shift; print -l -- "$@"; }; _files() { print FILES; }';
  const complete = (...words: string[]): string[] => {
    const r = spawnSync('zsh', ['-c', `${stubs}; source "$1"; shift; words=(jackin "$@"); CURRENT=$#words; _jackin`, 'zsh', file, ...words], {
      env,
      encoding: 'utf8',
    });
    assert.equal(r.error, undefined, 'zsh is installed');
    assert.equal(r.stderr, '');
    return r.stdout.split('\n').filter((l) => l !== '');
  };
  assert.ok(complete('').includes('export'));
  assert.deepEqual(complete('attach', '--via', ''), ['docker', 'podman', 'kubectl']);
  assert.deepEqual(complete('attach', ''), ['agent', 'box']);
  assert.deepEqual(complete('forward', 'agent', ''), []);
  assert.deepEqual(complete('stage', '--to', 'agent', ''), ['FILES']);
  assert.deepEqual(complete('completion', ''), ['bash', 'zsh', 'fish']);
});

test('jackin ls --names prints plain instance names only, and --help says how to install the scripts', (t) => {
  const env = setUp(t);
  const r = spawnSync(process.execPath, [JACKIN_BIN, 'ls', '--names'], { env, encoding: 'utf8' });
  assert.equal(r.stdout, 'agent\nbox\n');
  const help = spawnSync(process.execPath, [JACKIN_BIN, 'completion', '--help'], { env: { ...env, COLUMNS: '200' }, encoding: 'utf8' });
  assert.match(help.stdout, /jackin completion bash > ~\/\.local\/share\/bash-completion\/completions\/jackin/u);
  const bad = spawnSync(process.execPath, [JACKIN_BIN, 'completion', 'tcsh'], { env, encoding: 'utf8' });
  assert.equal(bad.status, 2);
});
