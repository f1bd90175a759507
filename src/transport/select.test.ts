import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hasCode } from '../errors.ts';
import { planTransport, selectTransport } from './select.ts';

const home = '/home/op/.jackin';

test('planTransport: explicit flags win, with their reason', () => {
  assert.deepEqual(planTransport({ instance: 'x', jackinHome: home, socket: '/s' }), { kind: 'socket', path: '/s', reason: '--socket was given' });
  assert.deepEqual(planTransport({ instance: 'x', jackinHome: home, via: 'podman' }), {
    kind: 'relay',
    spec: { kind: 'podman', target: 'x' },
    reason: '--via podman was given',
  });
  assert.deepEqual(planTransport({ instance: 'p', jackinHome: home, via: 'kubectl', namespace: 'n', container: 'c' }), {
    kind: 'relay',
    spec: { kind: 'kubectl', pod: 'p', namespace: 'n', container: 'c' },
    reason: '--via kubectl was given',
  });
  assert.deepEqual(planTransport({ instance: 'x', jackinHome: home, exec: 'relay x' }), {
    kind: 'relay',
    spec: { kind: 'custom', command: 'relay x' },
    reason: '--exec was given',
  });
});

test('planTransport: without flags, the instance socket under JACKIN_HOME with docker exec as fallback', () => {
  assert.deepEqual(planTransport({ instance: 'x', jackinHome: home }), {
    kind: 'auto',
    path: '/home/op/.jackin/sockets/x/jackin.sock',
    fallback: { kind: 'docker', target: 'x' },
  });
});

test('planTransport: conflicting flags, kubectl-only flags elsewhere and path-like instance names are refused', () => {
  assert.throws(
    () => planTransport({ instance: 'x', jackinHome: home, socket: '/s', via: 'docker' }),
    (e) => hasCode(e, 'E_USAGE'),
  );
  assert.throws(
    () => planTransport({ instance: 'x', jackinHome: home, via: 'docker', namespace: 'n' }),
    (e) => hasCode(e, 'E_USAGE'),
  );
  assert.throws(
    () => planTransport({ instance: '../etc', jackinHome: home }),
    (e) => hasCode(e, 'E_BAD_INSTANCE_NAME'),
  );
});

function listen(path: string): Promise<Server> {
  return new Promise((resolve) => {
    const s = createServer((c) => c.end());
    s.listen(path, () => resolve(s));
  });
}

test('selectTransport: picks the socket when it accepts a connection', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'jackin-select-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  mkdirSync(join(dir, 'sockets', 'live'), { recursive: true });
  const server = await listen(join(dir, 'sockets', 'live', 'jackin.sock'));
  t.after(() => server.close());
  const sel = await selectTransport({ instance: 'live', jackinHome: dir });
  sel.transport.close();
  assert.equal(sel.choice, 'socket');
  assert.match(sel.reason, /accepted a connection/);
});

test('selectTransport: falls back to docker exec when the socket does not answer, and says why', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'jackin-select-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const bin = join(dir, 'bin');
  mkdirSync(bin);
  const log = join(dir, 'argv');
  writeFileSync(join(bin, 'docker'), `#!/bin/sh\nprintf '%s\\n' "$@" > '${log}'\n`);
  chmodSync(join(bin, 'docker'), 0o755);
  const oldPath = process.env['PATH'];
  process.env['PATH'] = `${bin}:${oldPath}`;
  t.after(() => (process.env['PATH'] = oldPath));
  const sel = await selectTransport({ instance: 'ghost', jackinHome: dir });
  assert.equal(sel.choice, 'docker');
  assert.match(sel.reason, /no socket at .*ghost\/jackin.sock; falling back to docker exec/);
  assert.equal(await sel.transport.failureDetail(), 'relay exited with status 0');
  assert.equal(readFileSync(log, 'utf8'), 'exec\n-i\nghost\njackin-capsule\nattach-proxy\n');
});

test('selectTransport: no socket and no docker is one error naming both causes', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'jackin-select-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const oldPath = process.env['PATH'];
  process.env['PATH'] = join(dir, 'empty');
  t.after(() => (process.env['PATH'] = oldPath));
  await assert.rejects(selectTransport({ instance: 'ghost', jackinHome: dir }), (e) => {
    assert.ok(hasCode(e, 'E_INSTANCE_UNREACHABLE'));
    assert.match((e as Error).message, /no socket at .*neither docker nor podman is installed/);
    return true;
  });
});
