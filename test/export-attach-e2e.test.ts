// A real `jackin attach` in tmux against a fake capsule that sends FileExport* frames (issue 6, point 8):
// unrequested frames write nothing; an upstream capsule's export right after the operator's palette key is
// accepted (with --allow-upstream-requests) and verified.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ClientFrame, Features } from '../src/protocol/index.ts';
import { OUR_FEATURES, startFakeCapsule, welcomeFrame, type FakeConnection } from './helpers/fake-capsule.ts';
import { JACKIN, paneFor } from './helpers/jackin-cli.ts';
import { pollUntil } from './helpers/poll.ts';

const payload = Buffer.from('exported by the capsule\n');
const digest = createHash('sha256').update(payload).digest();

function sendExport(c: FakeConnection, id: bigint, name: string): void {
  c.send({ type: 'FileExportStart', exportId: id, size: payload.length, source: `/w/${name}`, name, reveal: false, open: false });
  c.send({ type: 'FileExportChunk', exportId: id, offset: 0, bytes: payload });
  c.send({ type: 'FileExportEnd', exportId: id, sha256: digest });
}

/**
 * A pane whose download directory is removed with the test, and instance `name` under its JACKIN_HOME
 * (test/helpers/fake-capsule.ts): right after its Welcome it sends an export nobody asked for, and one more
 * when the palette key arrives.
 */
async function attachToFake(t: TestContext, name: string, features: Features | null) {
  const downloads = mkdtempSync(join(tmpdir(), 'jackin-fake-dl-'));
  t.after(() => rmSync(downloads, { recursive: true, force: true }));
  const pane = await paneFor(t, { env: { JACKIN_DOWNLOAD_DIR: downloads } });
  const fake = await startFakeCapsule(t, { home: pane.jackinHome, name, welcome: () => welcomeFrame(features) });
  await pane.typeLine(`${JACKIN} attach ${name} --allow-upstream-requests; echo "jackin-rc=$?"`);
  const c = await fake.connection(0);
  // Unrequested: nobody pressed anything.
  sendExport(c, 1n, 'unrequested.txt');
  c.onInput((bytes) => {
    if (bytes.includes(0x1c)) sendExport(c, 2n, 'requested.txt');
  });
  // The session is up once the fake's first line or the host's notice is drawn: the notice (two rows at the
  // top) can cover that line, whose row depends on how long the typed command line was.
  await pane.waitForText(/FAKE-READY-0|Refused/, { timeoutMs: 20_000 });
  return { pane, downloads, received: c.received };
}

function noticeTexts(received: ClientFrame[]): string[] {
  return received.flatMap((f) => (f.type === 'HostNotice' ? [f.text] : []));
}

test("jackin attach: an upstream capsule's unrequested export writes nothing; one right after the palette key is saved", async (t) => {
  const { pane, downloads, received } = await attachToFake(t, 'fake', null);
  // Drawn by the host itself; nothing is sent back to the capsule.
  await pane.waitForText(/Refused a request from the capsule \(export \/w\/unrequested\.txt\)/, { timeoutMs: 10_000 });
  const dest = join(downloads, 'jackin', 'fake');
  const listing = (): string[] => {
    try {
      return readdirSync(dest);
    } catch {
      return [];
    }
  };
  assert.deepEqual(listing(), [], 'nothing written for the unrequested export');

  // The palette key goes to the upstream capsule (its palette); its export answer is accepted.
  await pane.sendBytes([0x1c]);
  const saved = await pollUntil('requested.txt to be saved', () => listing().includes('requested.txt') && listing(), { timeoutMs: 10_000, last: listing });
  assert.deepEqual(saved, ['requested.txt']);
  assert.deepEqual(readFileSync(join(dest, 'requested.txt')), payload);
  assert.deepEqual(noticeTexts(received), [], 'no notice (no host path) went to the capsule');
});

test('jackin attach: a jackin capsule (extensions negotiated) never gets an export written from the session', async (t) => {
  const { pane, downloads } = await attachToFake(t, 'ours', OUR_FEATURES);
  // The host draws its own notices for such a capsule.
  await pane.waitForText(/Refused a file export/, { timeoutMs: 10_000 });
  assert.deepEqual(readdirSync(downloads), []);
});
