import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { listInstances, MAX_CAPSULE_JSON_BYTES } from './instances.ts';

test('listInstances: a cleanly finished instance (only its log left) is not listed; a crashed one is stale', async (t) => {
  const home = mkdtempSync(join(tmpdir(), 'jackin-instances-'));
  t.after(() => rmSync(home, { recursive: true, force: true }));
  const dir = (name: string) => {
    const d = join(home, 'sockets', name);
    mkdirSync(d, { recursive: true });
    return d;
  };
  writeFileSync(join(dir('finished'), 'capsule.log'), 'program exited with status 0\n');
  writeFileSync(join(dir('crashed'), 'capsule.json'), JSON.stringify({ pid: 999999, name: 'crashed', program: ['vim'] }));
  writeFileSync(join(dir('crashed'), 'capsule.log'), '');
  const list = await listInstances(home);
  assert.deepEqual(
    list.map((i) => [i.name, i.state, i.program]),
    [['crashed', 'stale', ['vim']]],
  );
});

test('listInstances: a capsule.json a container made a FIFO, a symlink to a device or a huge file is ignored, never read whole or waited on', { timeout: 60_000 }, async (t) => {
  const home = mkdtempSync(join(tmpdir(), 'jackin-instances-'));
  t.after(() => rmSync(home, { recursive: true, force: true }));
  const dir = (name: string) => {
    const d = join(home, 'sockets', name);
    mkdirSync(d, { recursive: true });
    return join(d, 'capsule.json');
  };
  // Nobody ever writes to this FIFO: opening it for reading the usual way blocks for ever.
  execFileSync('mkfifo', [dir('fifo')]);
  symlinkSync('/dev/zero', dir('zero'));
  const huge = JSON.stringify({ pid: 5, program: ['x'.repeat(MAX_CAPSULE_JSON_BYTES)] });
  writeFileSync(dir('huge'), huge);
  // A symlink to a file of the operator's that happens to be JSON: not followed.
  const elsewhere = join(home, 'elsewhere.json');
  writeFileSync(elsewhere, JSON.stringify({ pid: 7, program: ['secret-from-elsewhere'] }));
  symlinkSync(elsewhere, dir('link'));
  writeFileSync(dir('plain'), JSON.stringify({ pid: 999999, program: ['vim'] }));
  const list = await listInstances(home);
  assert.deepEqual(
    list.map((i) => [i.name, i.state, i.program]),
    [['fifo', 'stale', null], ['huge', 'stale', null], ['link', 'stale', null], ['plain', 'stale', ['vim']], ['zero', 'stale', null]],
  );
});
