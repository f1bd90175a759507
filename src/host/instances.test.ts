import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { listInstances } from './instances.ts';

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
