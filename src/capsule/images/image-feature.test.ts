import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ControlResult, NoticeLevel } from '../../protocol/index.ts';
import { ImageFeature, pasteBytes } from './image-feature.ts';
import type { ImageReplies } from '../connection/image-sink.ts';

const fixture = (name: string): Buffer => readFileSync(new URL(`../../../test/fixtures/images/${name}`, import.meta.url));
const sha = (b: Buffer): Buffer => createHash('sha256').update(b).digest();
const ctx = { v: 1 as const };

function setup(t: { after: (fn: () => void) => void }, { bracketed = false, imageStaged = true } = {}) {
  const runDir = mkdtempSync(join(tmpdir(), 'jackin-image-feature-'));
  t.after(() => rmSync(runDir, { recursive: true, force: true }));
  const typed: Buffer[] = [];
  const session = { write: (b: Buffer) => (typed.push(b), true), modes: { bracketedPaste: bracketed } };
  const feature = new ImageFeature({ runDir, session });
  const log: Array<
    | { kind: 'respond'; requestId: bigint; result: ControlResult }
    | { kind: 'notify'; level: NoticeLevel; text: string }
    | { kind: 'staged'; requestId: bigint; bytes: number; pasted: boolean; path: string }
  > = [];
  const replies: ImageReplies = {
    respond: (requestId, result) => log.push({ kind: 'respond', requestId, result }),
    notify: (level, text) => log.push({ kind: 'notify', level, text }),
    imageStaged: (requestId, bytes, pasted, path) => {
      if (!imageStaged) return false;
      log.push({ kind: 'staged', requestId, bytes, pasted, path });
      return true;
    },
  };
  const files = () => (existsSync(feature.staging.dir) ? readdirSync(feature.staging.dir) : []);
  return { runDir, feature, replies, log, typed, files };
}

test('a whole image is staged 0600 in a 0700 dir, its path typed plainly, ImageStaged before success', async (t) => {
  const { feature, replies, log, typed, files } = setup(t);
  const png = fixture('sample.png');
  await feature.handle({ op: { kind: 'whole', format: 'png', bytes: png }, requestId: 7n, context: ctx }, replies);
  assert.deepEqual(files().length, 1);
  const path = join(feature.staging.dir, files()[0]!);
  assert.match(path, /\/clipboard\/clip-\d{8}-\d{6}-[0-9a-f]{16}\.png$/);
  assert.deepEqual(readFileSync(path), png);
  assert.equal(statSync(path).mode & 0o777, 0o600);
  assert.equal(statSync(feature.staging.dir).mode & 0o777, 0o700);
  assert.equal(Buffer.concat(typed).toString(), path, 'the path, without Enter');
  assert.deepEqual(log, [
    { kind: 'staged', requestId: 7n, bytes: png.length, pasted: true, path },
    { kind: 'respond', requestId: 7n, result: 'success' },
  ]);
});

test('bracketed paste mode wraps the path in paste markers', async (t) => {
  const { feature, replies, typed } = setup(t, { bracketed: true });
  await feature.handle({ op: { kind: 'whole', format: 'gif', bytes: fixture('sample.gif') }, requestId: 1n, context: ctx }, replies);
  assert.match(Buffer.concat(typed).toString(), /^\x1b\[200~\/.*\.gif\x1b\[201~$/);
  assert.deepEqual(pasteBytes('/a', false), Buffer.from('/a'));
});

test('StageOnly: staged, nothing typed, ImageStaged says not pasted', async (t) => {
  const { feature, replies, log, typed, files } = setup(t);
  feature.stageOnly(9n);
  await feature.handle({ op: { kind: 'whole', format: 'png', bytes: fixture('sample.png') }, requestId: 9n, context: ctx }, replies);
  assert.equal(typed.length, 0);
  assert.equal(files().length, 1);
  assert.equal(log[0]?.kind === 'staged' && log[0].pasted, false);
  assert.equal(feature.lastPasted, null, 'a stage-only image is not what the clipboard shims read');
  // The mark is used once: the next request with another id is pasted.
  await feature.handle({ op: { kind: 'whole', format: 'png', bytes: fixture('sample.png') }, requestId: 10n, context: ctx }, replies);
  assert.equal(typed.length, 1);
  assert.equal((feature.lastPasted as { path: string } | null)?.path, Buffer.concat(typed).toString(), 'the clipboard shims read the image last pasted');
});

test('without image-staged (an upstream host) the capsule tells the operator; legacy frames get no response', async (t) => {
  const { feature, replies, log, typed } = setup(t, { imageStaged: false });
  await feature.handle({ op: { kind: 'whole', format: 'jpeg', bytes: fixture('sample.jpg') }, requestId: null, context: null }, replies);
  assert.equal(typed.length, 1);
  assert.equal(log.length, 1);
  assert.equal(log[0]?.kind, 'notify');
  assert.match(log[0]?.kind === 'notify' ? log[0].text : '', /^Image staged: \/.*\.jpg \(/);
});

test('an svg or text is rejected with a notice, nothing staged or typed', async (t) => {
  const { feature, replies, log, typed, files } = setup(t);
  await feature.handle({ op: { kind: 'whole', format: 'png', bytes: fixture('sample.svg') }, requestId: 3n, context: ctx }, replies);
  assert.deepEqual(files(), []);
  assert.equal(typed.length, 0);
  assert.equal(log[0]?.kind, 'notify');
  assert.match(log[0]?.kind === 'notify' ? log[0].text : '', /Image rejected: .*SVG/);
  assert.deepEqual(log[1], { kind: 'respond', requestId: 3n, result: 'rejected' });
});

function chunkedPng(size: number): Buffer {
  // A PNG with a big ancillary chunk: valid structure, any size.
  const png = fixture('sample.png');
  const data = randomBytes(size);
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write('teXt', 4, 'latin1');
  return Buffer.concat([png.subarray(0, 33), head, data, Buffer.alloc(4), png.subarray(33)]);
}

test('chunked transfer: staged once under the Start id; wrong offset and wrong digest leave no file', async (t) => {
  const { feature, replies, log, typed, files } = setup(t);
  const img = chunkedPng(2.5 * 1024 * 1024);
  const req = (op: Parameters<ImageFeature['handle']>[0]['op']) => feature.handle({ op, requestId: 20n, context: ctx }, replies);
  await req({ kind: 'start', transferId: 1n, format: 'png', size: img.length });
  for (let off = 0; off < img.length; off += 1024 * 1024) {
    await req({ kind: 'chunk', transferId: 1n, offset: off, bytes: img.subarray(off, off + 1024 * 1024) });
  }
  await req({ kind: 'end', transferId: 1n, sha256: sha(img) });
  assert.equal(files().length, 1);
  assert.deepEqual(readFileSync(join(feature.staging.dir, files()[0]!)), img);
  assert.deepEqual(
    log.map((l) => l.kind),
    ['staged', 'respond'],
  );
  assert.equal(typed.length, 1);

  log.length = 0;
  await req({ kind: 'start', transferId: 2n, format: 'png', size: img.length });
  await req({ kind: 'chunk', transferId: 2n, offset: 5, bytes: img.subarray(0, 100) });
  assert.deepEqual(
    log.map((l) => l.kind),
    ['notify', 'respond'],
  );
  assert.match(log[0]?.kind === 'notify' ? log[0].text : '', /offset 5, expected 0/);
  assert.deepEqual(log[1], { kind: 'respond', requestId: 20n, result: 'rejected' });

  log.length = 0;
  await req({ kind: 'start', transferId: 3n, format: 'png', size: img.length });
  for (let off = 0; off < img.length; off += 1024 * 1024) {
    await req({ kind: 'chunk', transferId: 3n, offset: off, bytes: img.subarray(off, off + 1024 * 1024) });
  }
  await req({ kind: 'end', transferId: 3n, sha256: sha(Buffer.from('other')) });
  assert.deepEqual(
    log.map((l) => l.kind),
    ['notify', 'respond'],
  );
  assert.match(log[0]?.kind === 'notify' ? log[0].text : '', /SHA-256/);
  assert.equal(files().length, 1, 'only the first image');
  assert.equal(typed.length, 1);
  assert.equal(feature.activeTransfers, 0);
});

test('dispose removes the staging directory', async (t) => {
  const { feature, replies, files } = setup(t);
  await feature.handle({ op: { kind: 'whole', format: 'webp', bytes: fixture('sample.webp') }, requestId: 1n, context: ctx }, replies);
  assert.equal(files().length, 1);
  await feature.dispose();
  assert.equal(existsSync(feature.staging.dir), false);
});
