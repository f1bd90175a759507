import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hasCode, JackinError } from '../errors.ts';
import { runDirSocketPath } from './instance-paths.ts';
import { waitForSocket } from './socket-wait.ts';

function tempDir(t: TestContext): string {
  const dir = mkdtempSync(join(tmpdir(), 'jackin-socket-wait-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

const never = (): Error => new Error('the wait timed out');

test('waitForSocket: tries until the socket accepts, checking between refused tries', async (t) => {
  const path = runDirSocketPath(tempDir(t));
  const server = createServer((s) => s.end());
  t.after(() => server.close());
  const refusals: string[] = [];
  let checks = 0;
  const sock = await waitForSocket(path, {
    timeoutMs: 60_000,
    pollMs: 1,
    refused: (e) => refusals.push(e.code),
    // The capsule opens its socket while the third refusal is checked.
    check: async () => {
      if (++checks === 3) await new Promise<void>((r) => server.listen(path, r));
    },
    timedOut: never,
  });
  sock.destroy();
  assert.equal(checks, 3);
  assert.deepEqual(refusals, ['E_SOCKET_UNAVAILABLE', 'E_SOCKET_UNAVAILABLE', 'E_SOCKET_UNAVAILABLE']);
});

test('waitForSocket: a check that throws (the capsule ended) stops the wait with its error', async (t) => {
  const path = runDirSocketPath(tempDir(t));
  let tries = 0;
  await assert.rejects(
    waitForSocket(path, {
      timeoutMs: 60_000,
      pollMs: 1,
      refused: () => void tries++,
      check: () => {
        throw new JackinError('E_CAPSULE_START', 'capsule exited before its socket was ready');
      },
      timedOut: never,
    }),
    (e) => hasCode(e, 'E_CAPSULE_START'),
  );
  assert.equal(tries, 1);
});

test('waitForSocket: a refusal that time does not mend stops the wait before any check', async (t) => {
  const path = runDirSocketPath(tempDir(t));
  let checks = 0;
  await assert.rejects(
    waitForSocket(path, {
      timeoutMs: 60_000,
      pollMs: 1,
      refused: (e) => {
        throw new JackinError('E_SOCKET_PERMISSION', e.message, { cause: e });
      },
      check: () => void checks++,
      timedOut: never,
    }),
    (e) => hasCode(e, 'E_SOCKET_PERMISSION') && /no socket at/.test((e as Error).message),
  );
  assert.equal(checks, 0);
});

test('waitForSocket: past its time it throws what timedOut makes of the last refusal', async (t) => {
  const path = runDirSocketPath(tempDir(t));
  let checks = 0;
  await assert.rejects(
    waitForSocket(path, {
      timeoutMs: 20,
      pollMs: 1,
      check: () => void checks++,
      timedOut: (last) => new JackinError('E_CAPSULE_START', `did not open the socket (${last.code}: ${last.message})`),
    }),
    (e) => hasCode(e, 'E_CAPSULE_START') && (e as Error).message.includes(`E_SOCKET_UNAVAILABLE: no socket at ${path}`),
  );
  assert.ok(checks >= 1, 'each refused try is checked');
});
