/**
 * The CLI's output contract for errors: one line on stderr, or one JSON object when the command that ran
 * was given --json, decided from the options commander parsed (not from the raw argv).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT } from './helpers/jackin-cli.ts';

const JACKIN = join(REPO_ROOT, 'bin', 'jackin.js');

function jackin(args: string[]) {
  const home = mkdtempSync(join(tmpdir(), 'jackin-cli-'));
  try {
    return spawnSync(process.execPath, [JACKIN, ...args], { env: { ...process.env, JACKIN_HOME: home }, encoding: 'utf8' });
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}

test('a --json after `jackin run --` belongs to the program: the error stays one plain line', () => {
  const missing = join(tmpdir(), 'jackin-cli-no-such-workspace');
  const r = jackin(['run', '--workspace', missing, '--', 'tool', '--json']);
  assert.equal(r.status, 2);
  assert.equal(r.stderr, `jackin: workspace ${missing} is not a directory: pass an existing --workspace\n`);
});

test('a command given --json reports its error as one JSON object', () => {
  const r = jackin(['export', '--json']);
  assert.equal(r.status, 2);
  assert.deepEqual(JSON.parse(r.stderr), { error: { code: 'E_USAGE', message: 'name at least one container path, or pass --offered' } });
  assert.equal(r.stderr.split('\n').length, 2, 'one line');
  // The same error without --json is one plain line.
  const plain = jackin(['export']);
  assert.equal(plain.status, 2);
  assert.equal(plain.stderr, 'jackin: name at least one container path, or pass --offered\n');
});

test('every command is registered, in the documented order', () => {
  const r = jackin(['--help']);
  assert.equal(r.status, 0, r.stderr);
  const commands = [...r.stdout.matchAll(/^ {2}(\w[\w-]*)(?= )/gm)].map((m) => m[1]);
  assert.deepEqual(commands.slice(0, 9), ['attach', 'run', 'ls', 'doctor', 'export', 'stop', 'stage', 'log', 'help']);
});
