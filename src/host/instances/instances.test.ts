import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { capsuleSharesHostNetwork, listInstances, MAX_CAPSULE_JSON_BYTES } from './instances.ts';
import { stopChild } from '../../../test/helpers/stop-child.ts';

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

test('listInstances: a capsule.json a container made a FIFO, a symlink to a device or a huge file is ignored, never read whole or waited on', {
  timeout: 60_000,
}, async (t) => {
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
    [
      ['fifo', 'stale', null],
      ['huge', 'stale', null],
      ['link', 'stale', null],
      ['plain', 'stale', ['vim']],
      ['zero', 'stale', null],
    ],
  );
});

test('capsuleSharesHostNetwork: a capsule pid in this network namespace shares it; another namespace, a foreign PID namespace, a dead pid or no capsule.json does not', {
  skip: process.platform !== 'linux',
}, async (t) => {
  const home = mkdtempSync(join(tmpdir(), 'jackin-instances-'));
  t.after(() => rmSync(home, { recursive: true, force: true }));
  const runDir = (name: string, meta: unknown): string => {
    const d = join(home, 'sockets', name);
    mkdirSync(d, { recursive: true });
    if (meta !== undefined) writeFileSync(join(d, 'capsule.json'), JSON.stringify(meta));
    return d;
  };
  const pidNamespace = readlinkSync('/proc/self/ns/pid');
  assert.equal(await capsuleSharesHostNetwork(runDir('here', { pid: process.pid, pidNamespace })), true);
  assert.equal(await capsuleSharesHostNetwork(runDir('foreign-pid-ns', { pid: process.pid, pidNamespace: 'pid:[1]' })), false);
  assert.equal(await capsuleSharesHostNetwork(runDir('dead', { pid: 2 ** 22 + 7, pidNamespace })), false);
  assert.equal(await capsuleSharesHostNetwork(runDir('bad-pid', { pid: '1', pidNamespace })), false);
  assert.equal(await capsuleSharesHostNetwork(runDir('none', undefined)), false);
  // A process in a network namespace of its own (a container's), where unprivileged namespaces are allowed.
  const child = spawn('unshare', ['-rn', 'sleep', '60'], { stdio: 'ignore' });
  t.after(() => stopChild(child));
  const net = await new Promise<string | null>((resolve) => {
    const check = (n: number): void => {
      let got: string | null = null;
      try {
        got = readlinkSync(`/proc/${child.pid}/ns/net`);
      } catch {
        got = null;
      }
      if (got !== null && got !== readlinkSync('/proc/self/ns/net')) resolve(got);
      else if (child.exitCode !== null || n > 100) resolve(null);
      else setTimeout(() => check(n + 1), 20);
    };
    check(0);
  });
  if (net === null) return t.diagnostic('unshare -rn is not available here: the other-namespace case is not checked');
  assert.equal(await capsuleSharesHostNetwork(runDir('own-net', { pid: child.pid, pidNamespace })), false);
});
