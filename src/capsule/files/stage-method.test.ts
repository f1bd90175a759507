import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import type { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';
import { socketPairs } from '../../../test/helpers/socket-pairs.ts';
import { ControlMethods, type ControlOutcome } from '../session/control-methods.ts';
import { MAX_CONCURRENT_STAGES, registerStageMethod } from './stage-method.ts';
import { encodeStageClientFrame } from '../../protocol/index.ts';

test('stage slots: a finished transfer frees its slot before its connection closes, and a close frees nothing twice', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'jackin-stage-slots-'));
  const open = await socketPairs(t, dir);
  t.after(() => rmSync(dir, { recursive: true, force: true }));

  mkdirSync(join(dir, 'run'), { mode: 0o700 });
  const control = new ControlMethods();
  registerStageMethod(control, { runDir: join(dir, 'run'), maxBytes: 1024, notify: () => undefined });
  const data = Buffer.from('abc');
  const stage = async (): Promise<{ client: Socket; served: Socket; outcome: ControlOutcome }> => {
    const c = await open();
    return { ...c, outcome: await control.dispatch({ method: 'stage', name: 'f.txt', size: data.length }, c.served) };
  };

  const first: Array<Awaited<ReturnType<typeof stage>>> = [];
  for (let i = 0; i < MAX_CONCURRENT_STAGES; i++) {
    const s = await stage();
    assert.equal(s.outcome.reply.ok, true, JSON.stringify(s.outcome.reply));
    first.push(s);
  }
  const refused = await stage();
  assert.equal(refused.outcome.reply.ok === false && refused.outcome.reply.code, 'E_TOO_MANY_TRANSFERS');

  // Transfer 0 completes; its connection stays open (the server ends it a moment later).
  const done = first[0]!;
  const reply = done.outcome.reply as Record<string, unknown>;
  const id = BigInt(String(reply['transferId']));
  const streamed = done.outcome.stream!(done.served);
  done.client.write(encodeStageClientFrame({ type: 'FileStageChunk', transferId: id, offset: 0, bytes: data }));
  done.client.write(encodeStageClientFrame({ type: 'FileStageEnd', transferId: id, sha256: createHash('sha256').update(data).digest() }));
  await streamed;
  assert.equal(done.served.destroyed, false);
  const next = await stage();
  assert.equal(next.outcome.reply.ok, true, `a finished transfer still holds its slot: ${JSON.stringify(next.outcome.reply)}`);

  // Its connection now closes: the slot it already gave back is not given back again.
  const closed = once(done.served, 'close');
  done.client.destroy();
  done.served.destroy();
  await closed;
  const over = await stage();
  assert.equal(over.outcome.reply.ok === false && over.outcome.reply.code, 'E_TOO_MANY_TRANSFERS', JSON.stringify(over.outcome.reply));

  // A connection that goes mid-transfer frees its slot.
  const gone = first[1]!;
  const goneClosed = once(gone.served, 'close');
  gone.client.destroy();
  gone.served.destroy();
  await goneClosed;
  const after = await stage();
  assert.equal(after.outcome.reply.ok, true, JSON.stringify(after.outcome.reply));
});
