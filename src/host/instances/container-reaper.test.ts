import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { reaperArgv } from './container-reaper.ts';
import { CONTAINER_LABEL } from './container-run-argv.ts';

/**
 * A stand-in engine: `wait` returns at once, `inspect` prints the next of $FAKE_STATES for the state (one
 * per call) and $FAKE_LABEL for the label; every call is appended to calls.log.
 */
function fakeEngine(dir: string): string {
  const bin = join(dir, 'bin');
  writeFileSync(join(dir, 'calls.log'), '');
  const script = `#!/bin/sh
printf '%s\\n' "$*" >> "${join(dir, 'calls.log')}"
n=$(grep -c '^inspect.*State.Status' "${join(dir, 'calls.log')}")
case "$*" in
  *State.Pid*) printf '%s\\n' "$FAKE_PID" ;;
  *State.Status*) printf '%s\\n' "$FAKE_STATES" | cut -d' ' -f"$n" ;;
  inspect*) printf '%s\\n' "$FAKE_LABEL" ;;
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
    const run = async (label: string, states: string) => {
      writeFileSync(record, '{}');
      writeFileSync(join(dir, 'calls.log'), '');
      const [cmd, ...args] = reaperArgv('podman', 'agent', record, 0);
      // A pid of this PID namespace (not a container's): the reaper goes straight to the engine's wait.
      const env = { ...process.env, PATH: `${bin}:${process.env['PATH']}`, FAKE_LABEL: label, FAKE_STATES: states, FAKE_PID: String(process.pid) };
      await promisify(execFile)(cmd!, args, { env });
      return readFileSync(join(dir, 'calls.log'), 'utf8').trim().split('\n');
    };
    const pid = 'inspect --type container --format {{.State.Pid}} agent';
    const wait = 'wait agent';
    const state = 'inspect --type container --format {{.State.Status}} agent';
    const label = `inspect --type container --format {{index .Config.Labels "${CONTAINER_LABEL}"}} agent`;
    assert.deepEqual(await run('agent', 'exited'), [pid, wait, state, label, 'rm agent']);
    assert.equal(existsSync(record), false, 'the record goes with the container');
    // `wait` returned with the container still running (a daemon restart): it waits again.
    assert.deepEqual(await run('agent', 'running exited'), [pid, wait, state, pid, wait, state, label, 'rm agent']);
    // A container of that name jackin did not start (or started for another name) is left alone.
    assert.deepEqual(await run('other', 'exited'), [pid, wait, state, label]);
    assert.equal(existsSync(record), true);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
