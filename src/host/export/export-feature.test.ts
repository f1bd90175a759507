import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeFeatureSession } from '../../../test/helpers/fake-feature-session.ts';
import { pollUntil } from '../../../test/helpers/poll.ts';
import type { Transport } from '../../transport/transport.ts';
import { installExportFeature } from './export-feature.ts';

function setup(t: { after: (f: () => void) => void }, features: Record<string, number> | null = { resolve: 1, repaint: 1 }) {
  const dir = mkdtempSync(join(tmpdir(), 'jackin-export-feature-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const s = new FakeFeatureSession(features);
  let connects = 0;
  const connect = async (): Promise<Transport> => {
    connects++;
    throw new Error('no capsule in this test');
  };
  const feature = installExportFeature(s, { instance: 'x', connect, directory: dir });
  t.after(() => feature.dispose());
  return { s, feature, dir, connects: () => connects };
}

test("export feature: a click that exports waits for the operator's confirmation; cancelled, nothing is fetched", async (t) => {
  const { s, feature, connects } = setup(t);
  s.confirmAnswer = false;
  feature.exportFromClick('/work/../../etc/shadow');
  await pollUntil('the cancel', () => s.log.length === 1, { last: () => s.log });
  assert.deepEqual(s.confirms, [{ kind: 'export', target: '/work/../../etc/shadow', verb: 'export' }]);
  assert.deepEqual(s.log, [{ action: 'export', target: '/work/../../etc/shadow', result: 'cancelled' }]);
  assert.equal(connects(), 0, 'nothing was asked of the capsule before the confirmation');
  // Confirmed: the export is attempted (and its failure logged).
  s.confirmAnswer = true;
  feature.exportFromClick('/work/report.pdf');
  await pollUntil('the attempt', () => s.log.length === 2, { last: () => s.log });
  assert.equal(connects(), 1);
  assert.equal(s.log[1]?.result, 'failed');
});

test("export feature: an upstream capsule's pushed export is written only when allowed, once per gesture, and logged", async (t) => {
  const { s, dir } = setup(t, null);
  const payload = Buffer.from('exported\n');
  const push = (id: bigint): void => {
    s.emitFrame({ type: 'FileExportStart', exportId: id, size: payload.length, source: '/w/a.txt', name: 'a.exe', reveal: false, open: false });
    s.emitFrame({ type: 'FileExportChunk', exportId: id, offset: 0, bytes: payload });
    s.emitFrame({ type: 'FileExportEnd', exportId: id, sha256: createHash('sha256').update(payload).digest() });
  };
  s.gesture('palette-key');
  push(1n);
  assert.deepEqual(
    s.log.map((r) => r.result),
    ['refused'],
    'not allowed: refused even after a gesture',
  );
  s.allowUpstream = true;
  s.gesture('palette-key');
  push(2n);
  push(3n);
  await pollUntil('the one export to be saved', () => s.log.some((r) => r.result === 'ok'), { last: () => s.log });
  // The published name follows the transfer's path (a.txt), not the suggested a.exe.
  assert.deepEqual(readdirSync(join(dir)), ['a.txt']);
  assert.deepEqual(
    s.log.map((r) => [r.action, r.result]),
    [
      ['export', 'refused'],
      ['export', 'refused'],
      ['export', 'ok'],
    ],
  );
});
