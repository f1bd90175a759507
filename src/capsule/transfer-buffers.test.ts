import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { socketPairs } from '../../test/helpers/socket-pairs.ts';
import { DEFAULT_POLICY } from '../policy/schema.ts';
import { createServerFrameDecoder, createStageServerDecoder, encodeStageClientFrame, MAX_CHUNK_BYTES } from '../protocol/index.ts';
import { registerExportMethods } from './export/export-methods.ts';
import { ZSTD_BLOCK_BYTES, ZSTD_COMPRESSORS, ZSTD_LEVEL, zstdImplementation } from './export/zstd-compressor.ts';
import { registerStageMethod } from './files/stage-method.ts';
import { ControlMethods } from './session/control-methods.ts';
import { TRANSFER_BUFFER_BYTES, transferBuffers } from './session/transfer-buffers.ts';

const MiB = 1024 * 1024;

/** Records the pooled buffers (their memory) the capsule's transfers take while `run` runs. */
async function taken(run: () => Promise<void>): Promise<ArrayBufferLike[]> {
  const allocate = transferBuffers.allocate;
  const got: ArrayBufferLike[] = [];
  transferBuffers.allocate = (n: number) => {
    const b = allocate(n);
    if (b.buffer.byteLength === TRANSFER_BUFFER_BYTES) got.push(b.buffer);
    return b;
  };
  try {
    await run();
  } finally {
    transferBuffers.allocate = allocate;
  }
  return got;
}

test("the directory export's compressor takes its blocks and output slabs from the capsule's pool, and gives them back when released", async () => {
  let out = 0;
  const got = await taken(async () => {
    const c = ZSTD_COMPRESSORS[zstdImplementation()](ZSTD_LEVEL, ZSTD_BLOCK_BYTES);
    await c.ready();
    for (const o of await c.push(randomBytes(4 * MiB))) out += o.byteLength;
    for (const o of await c.end()) out += o.byteLength;
    c.release();
  });
  assert.ok(out > 4 * MiB, `random content is stored: ${out} bytes`);
  if (zstdImplementation() === 'node:zlib') {
    // A slab for each MiB of output (filled one after another), and the blocks: at least the first two.
    const slabs = Math.ceil(out / MiB);
    assert.ok(got.length >= slabs + 2, `${got.length} buffers from the pool, for ${slabs} slabs and the blocks`);
  } else assert.equal(got.length, 0, 'the WebAssembly compressor takes nothing from the pool');
  assert.equal(transferBuffers.pooled, transferBuffers.made, 'every buffer is back');
});

test('a stage, a file export and a directory export take their 1 MiB buffers from one pool, and give every one back', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'jackin-transfer-buffers-'));
  const open = await socketPairs(t, dir);
  t.after(() => rmSync(dir, { recursive: true, force: true }));

  const ws = join(dir, 'ws');
  const runDir = join(dir, 'run');
  mkdirSync(join(ws, 'tree', 'sub'), { recursive: true });
  mkdirSync(runDir, { mode: 0o700 });
  // Random content: the archive is as large as the tree, so the directory export takes a chunk per MiB.
  writeFileSync(join(ws, 'big.bin'), randomBytes(6 * MiB));
  writeFileSync(join(ws, 'tree', 'a.bin'), randomBytes(3 * MiB));
  writeFileSync(join(ws, 'tree', 'sub', 'b.bin'), randomBytes(3 * MiB));
  const control = new ControlMethods();
  registerStageMethod(control, { runDir, maxBytes: 64 * MiB, notify: () => undefined });
  registerExportMethods(control, { policy: { version: 1, export: DEFAULT_POLICY.export }, workspace: ws, runDir, notify: () => undefined });

  /** Stages `data`; returns the path the capsule staged it at. */
  const stage = async (data: Buffer): Promise<string> => {
    const c = await open();
    const decoder = createStageServerDecoder();
    let path = '';
    c.client.on('data', (d: Buffer) => {
      for (const item of decoder.push(d)) if (item.ok && item.frame.type === 'FileStaged') path = item.frame.path;
    });
    const outcome = await control.dispatch({ method: 'stage', name: 'f.bin', size: data.length, notify: false }, c.served);
    assert.equal(outcome.reply.ok, true, JSON.stringify(outcome.reply));
    const id = BigInt(String((outcome.reply as Record<string, unknown>)['transferId']));
    const streamed = outcome.stream!(c.served);
    for (let at = 0; at < data.length; at += MAX_CHUNK_BYTES) {
      c.client.write(encodeStageClientFrame({ type: 'FileStageChunk', transferId: id, offset: at, bytes: data.subarray(at, at + MAX_CHUNK_BYTES) }));
    }
    c.client.write(encodeStageClientFrame({ type: 'FileStageEnd', transferId: id, sha256: createHash('sha256').update(data).digest() }));
    await streamed;
    const ended = once(c.client, 'end');
    c.served.end();
    await ended;
    assert.notEqual(path, '', 'the capsule said where it staged the file');
    return path;
  };
  /** Exports `path` and returns what the export's chunks carried, put together by offset. */
  const exportOf = async (path: string): Promise<Buffer> => {
    const c = await open();
    const decoder = createServerFrameDecoder();
    const parts: Array<{ offset: number; bytes: Buffer }> = [];
    let sha256 = '';
    c.client.on('data', (d: Buffer) => {
      for (const item of decoder.push(d)) {
        assert.ok(item.ok, String(!item.ok && item.error));
        if (item.frame.type === 'FileExportChunk') parts.push({ offset: item.frame.offset, bytes: Buffer.from(item.frame.bytes) });
        if (item.frame.type === 'FileExportEnd') sha256 = item.frame.sha256.toString('hex');
      }
    });
    const outcome = await control.dispatch({ method: 'export', path, reveal: false, open: false, confirmOutside: false, streamSize: true }, c.served);
    assert.equal(outcome.reply.ok, true, JSON.stringify(outcome.reply));
    await outcome.stream!(c.served);
    // The last chunk's buffer goes back once the socket has written it, which may come after the stream's end:
    // everything is written once the client has all of it.
    const ended = once(c.client, 'end');
    c.served.end();
    await ended;
    let at = 0;
    for (const p of parts) {
      assert.equal(p.offset, at, 'chunks come in order, with no gap');
      at += p.bytes.length;
    }
    const bytes = Buffer.concat(parts.map((p) => p.bytes));
    assert.equal(createHash('sha256').update(bytes).digest('hex'), sha256, `the SHA-256 the capsule sent for ${path} is that of what it sent`);
    return bytes;
  };

  const staged = await taken(async () => {
    await stage(randomBytes(8 * MiB));
  });
  assert.ok(staged.length >= 8, `the stage's chunk frames came from the pool (${staged.length} of 8)`);
  assert.equal(transferBuffers.pooled, transferBuffers.made, 'the stage gave every buffer back');

  let sent: Buffer = Buffer.alloc(0);
  const file = await taken(async () => {
    sent = await exportOf('big.bin');
  });
  assert.ok(sent.equals(readFileSync(join(ws, 'big.bin'))), 'the file export sent the file');
  assert.ok(file.length >= 6, `the file export's chunks came from the pool (${file.length} of 6)`);
  assert.ok(staged.includes(file[0]!), "the file export's first chunk is a buffer the stage gave back");
  assert.equal(transferBuffers.pooled, transferBuffers.made, 'the file export gave every buffer back');

  const tree = await taken(async () => {
    sent = await exportOf('tree');
  });
  assert.ok(sent.length > 6 * MiB, `the directory export sent the archive (${sent.length} bytes)`);
  const before = new Set([...staged, ...file]);
  assert.ok(before.has(tree[0]!), 'the directory export starts on a buffer an earlier transfer gave back');
  // On Node's own zstd the compressor's blocks and output slabs come from the pool too: more than a buffer
  // per MiB of archive. The WebAssembly compressor's memory is its own, and only the chunks come from it.
  if (zstdImplementation() === 'node:zlib') assert.ok(tree.length > 9, `the compressor's blocks and slabs came from the pool (${tree.length} buffers)`);
  else assert.ok(tree.length >= 6 && tree.length <= 8, `one buffer per MiB of archive (${tree.length} buffers)`);
  assert.equal(transferBuffers.pooled, transferBuffers.made, 'the directory export gave every buffer back');
  assert.ok(transferBuffers.made <= 16, `the three transfers, one after another, needed ${transferBuffers.made} buffers in all`);

  // Two stages and three exports at once: each gets buffers of its own, and every byte arrives as it was.
  const data = randomBytes(8 * MiB);
  const [stagedAt, fileBytes, archive] = await Promise.all([stage(data), exportOf('big.bin'), exportOf('tree'), stage(randomBytes(5 * MiB)), exportOf('tree')]);
  assert.ok(readFileSync(stagedAt).equals(data), 'the staged file is what was sent');
  assert.ok(fileBytes.equals(readFileSync(join(ws, 'big.bin'))), 'the file export is the file');
  const unpacked = join(dir, 'unpacked');
  mkdirSync(unpacked);
  writeFileSync(join(dir, 'tree.tar.zst'), archive);
  const tar = spawnSync('tar', ['--zstd', '-xf', join(dir, 'tree.tar.zst'), '-C', unpacked], { encoding: 'utf8' });
  assert.equal(tar.status, 0, tar.stderr);
  for (const f of ['a.bin', 'sub/b.bin']) assert.ok(readFileSync(join(unpacked, 'tree', f)).equals(readFileSync(join(ws, 'tree', f))), `the archive's ${f}`);
  assert.equal(transferBuffers.pooled, Math.min(transferBuffers.made, 16), "every buffer came back, up to the pool's keep");
});
