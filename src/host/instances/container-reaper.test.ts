import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { reaperArgv } from './container-reaper.ts';
import { CONTAINER_LABEL } from './container-run-argv.ts';

/** A stand-in engine: `wait` returns at once, `inspect` prints $FAKE_LABEL, every call is appended to calls.log. */
function fakeEngine(dir: string): string {
  const bin = join(dir, 'bin');
  writeFileSync(join(dir, 'calls.log'), '');
  const script = `#!/bin/sh
printf '%s\\n' "$*" >> "${join(dir, 'calls.log')}"
case "$1" in
  inspect) printf '%s\\n' "$FAKE_LABEL" ;;
esac
exit 0
`;
  mkdirSync(bin, { recursive: true });
  writeFileSync(join(bin, 'podman'), script);
  chmodSync(join(bin, 'podman'), 0o755);
  return bin;
}

test('container reaper: waits for the container, then removes it and its record only when the label names it', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'jackin-reaper-'));
  try {
    const bin = fakeEngine(dir);
    const record = join(dir, 'agent.json');
    const run = async (label: string) => {
      writeFileSync(record, '{}');
      writeFileSync(join(dir, 'calls.log'), '');
      const [cmd, ...args] = reaperArgv('podman', 'agent', record);
      await promisify(execFile)(cmd!, args, { env: { ...process.env, PATH: `${bin}:${process.env['PATH']}`, FAKE_LABEL: label } });
      return readFileSync(join(dir, 'calls.log'), 'utf8').trim().split('\n');
    };
    const ours = await run('agent');
    assert.deepEqual(ours, ['wait agent', `inspect --type container --format {{index .Config.Labels "${CONTAINER_LABEL}"}} agent`, 'rm agent']);
    assert.equal(existsSync(record), false, 'the record goes with the container');
    // A container of that name jackin did not start (or started for another name) is left alone.
    const foreign = await run('other');
    assert.equal(foreign.length, 2);
    assert.ok(foreign[1]!.startsWith('inspect'));
    assert.equal(existsSync(record), true);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
