import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { discardPrelaunchedRelay, offerPrelaunchedRelay, relayTransport, spawnRelay } from './exec-relay.ts';
import { launchRelay } from './relay-launch.ts';

/** Reads a stream to its end. */
async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  let text = '';
  stream.on('data', (b: Buffer) => (text += b.toString('utf8')));
  await new Promise((resolve) => stream.once('end', resolve));
  return text;
}

test('a relay that writes and exits before anyone reads it loses neither its bytes nor its end', async () => {
  const exec = await spawnRelay(['sh', '-c', 'printf hello; echo gone >&2; exit 3']);
  // Node resumes an unread child stdout once the child exits (it would drop the bytes); wait well past that.
  for (let i = 0; i < 100 && exec.stdout.readableLength === 0; i++) await sleep(10);
  await sleep(100);
  const transport = relayTransport(exec);
  assert.equal(await readAll(transport.readable), 'hello');
  assert.equal(await transport.failureDetail(), 'relay exited with status 3: gone');
});

test('the relay started early is adopted by the first spawn of the same argv, and only by that', async () => {
  const argv = ['sh', '-c', 'printf early'];
  const early = launchRelay(argv);
  offerPrelaunchedRelay(early);
  const other = await spawnRelay(['sh', '-c', 'printf other']);
  assert.equal(await readAll(other.stdout), 'other');
  const adopted = await spawnRelay(argv);
  assert.equal(adopted.stdout, early.child.stdout, 'the same process');
  assert.equal(await readAll(adopted.stdout), 'early');
  const again = await spawnRelay(argv);
  assert.notEqual(again.stdout, early.child.stdout, 'claimed once');
  assert.equal(await readAll(again.stdout), 'early');
  discardPrelaunchedRelay(); // nothing left to stop
});

test('an early relay nothing claimed is stopped', async () => {
  const early = launchRelay(['sleep', '30']);
  offerPrelaunchedRelay(early);
  assert.equal(await early.started, null);
  discardPrelaunchedRelay();
  assert.deepEqual(await early.exited, { code: null, signal: 'SIGTERM' });
  const fresh = await spawnRelay(['sleep', '30']);
  assert.notEqual(fresh.stdout, early.child.stdout);
  fresh.terminate();
  await fresh.exited;
});

test('an early relay whose program is missing fails the spawn that adopts it with E_RELAY_SPAWN', async () => {
  const argv = ['jackin-no-such-engine', 'exec', '-i', 'x'];
  offerPrelaunchedRelay(launchRelay(argv));
  await assert.rejects(
    spawnRelay(argv),
    (e: Error & { code?: string }) => e.code === 'E_RELAY_SPAWN' && /jackin-no-such-engine is not installed/.test(e.message),
  );
});
