// A real `jackin attach` in tmux against a fake capsule that sends FileExport* frames (issue 6, point 8):
// unrequested frames write nothing; an upstream capsule's export right after the operator's palette key is
// accepted (with --allow-upstream-requests) and verified.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClientFrameDecoder, encodeServerFrame, type ClientFrame, type Features } from '../src/protocol/index.ts';
import { JACKIN, paneFor } from './helpers/jackin-cli.ts';
import { pollUntil } from './helpers/poll.ts';

const payload = Buffer.from('exported by the capsule\n');
const digest = createHash('sha256').update(payload).digest();

function sendExport(s: Socket, id: bigint, name: string): void {
  s.write(encodeServerFrame({ type: 'FileExportStart', exportId: id, size: payload.length, source: `/w/${name}`, name, reveal: false, open: false }));
  s.write(encodeServerFrame({ type: 'FileExportChunk', exportId: id, offset: 0, bytes: payload }));
  s.write(encodeServerFrame({ type: 'FileExportEnd', exportId: id, sha256: digest }));
}

/** Listens as instance `name` under `home`; records the client frames it receives. */
async function fakeCapsule(home: string, name: string, features: Features | null, t: { after: (f: () => void) => void }) {
  const dir = join(home, 'sockets', name);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const received: ClientFrame[] = [];
  const server = createServer((s) => {
    const dec = createClientFrameDecoder();
    s.on('error', () => undefined);
    s.on('data', (chunk: Buffer) => {
      for (const item of dec.push(chunk)) {
        if (!item.ok) continue;
        const f = item.frame;
        received.push(f);
        if (f.type === 'Hello') {
          s.write(encodeServerFrame({ type: 'Welcome', sessions: 1, features }));
          s.write(encodeServerFrame({ type: 'Output', bytes: Buffer.from('FAKE-READY\r\n') }));
          // Unrequested: nobody pressed anything.
          sendExport(s, 1n, 'unrequested.txt');
        }
        if (f.type === 'Input' && f.bytes.includes(0x1c)) sendExport(s, 2n, 'requested.txt');
      }
    });
  });
  await new Promise<void>((r) => server.listen(join(dir, 'jackin.sock'), r));
  t.after(() => server.close());
  return received;
}

function noticeTexts(received: ClientFrame[]): string[] {
  return received.flatMap((f) => (f.type === 'HostNotice' ? [f.text] : []));
}

test('jackin attach: an upstream capsule\'s unrequested export writes nothing; one right after the palette key is saved', async (t) => {
  const home = mkdtempSync(join(tmpdir(), 'jackin-fake-home-'));
  const downloads = mkdtempSync(join(tmpdir(), 'jackin-fake-dl-'));
  const received = await fakeCapsule(home, 'fake', null, t);
  const pane = await paneFor(t, { env: { JACKIN_HOME: home, JACKIN_DOWNLOAD_DIR: downloads } });
  await pane.typeLine(`${JACKIN} attach fake --allow-upstream-requests; echo "jackin-rc=$?"`);
  await pane.waitForText('FAKE-READY', { timeoutMs: 20_000 });
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
  const home = mkdtempSync(join(tmpdir(), 'jackin-fake-home-'));
  const downloads = mkdtempSync(join(tmpdir(), 'jackin-fake-dl-'));
  await fakeCapsule(home, 'ours', { 'exit-status': 1, notice: 1, repaint: 1 }, t);
  const pane = await paneFor(t, { env: { JACKIN_HOME: home, JACKIN_DOWNLOAD_DIR: downloads } });
  await pane.typeLine(`${JACKIN} attach ours; echo "jackin-rc=$?"`);
  await pane.waitForText('FAKE-READY', { timeoutMs: 20_000 });
  // The host draws its own notices for such a capsule.
  await pane.waitForText(/Refused a file export/, { timeoutMs: 10_000 });
  assert.deepEqual(readdirSync(downloads), []);
});
