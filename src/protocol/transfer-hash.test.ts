import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { TransferHash, TRANSFER_HASH_SLICE_BYTES } from './transfer-hash.ts';
import { encodeExportChunkHeader, encodeServerFrame, EXPORT_CHUNK_HEADER_BYTES } from './encode.ts';

test('TransferHash gives the SHA-256 of the chunks in order, whatever their sizes', async () => {
  const chunks = [randomBytes(3 * TRANSFER_HASH_SLICE_BYTES + 17), randomBytes(1), randomBytes(0), randomBytes(TRANSFER_HASH_SLICE_BYTES)];
  const h = new TransferHash();
  await Promise.all(chunks.map((c) => h.update(c)));
  assert.deepEqual(await h.digest(), createHash('sha256').update(Buffer.concat(chunks)).digest());
  assert.equal(
    h.bytes,
    chunks.reduce((n, c) => n + c.length, 0),
  );
  await assert.rejects(h.update(Buffer.alloc(1)), /after digest/);
});

test('encodeExportChunkHeader plus the data is byte for byte the encoded FileExportChunk frame', () => {
  fc.assert(
    fc.property(
      fc.bigUint64Array({ minLength: 1, maxLength: 1 }),
      fc.integer({ min: 0, max: 2 ** 40 }),
      fc.uint8Array({ minLength: 1, maxLength: 2048 }),
      (id, offset, data) => {
        const exportId = id[0]!;
        const header = encodeExportChunkHeader(exportId, offset, data.length);
        assert.equal(header.length, EXPORT_CHUNK_HEADER_BYTES);
        const whole = encodeServerFrame({ type: 'FileExportChunk', exportId, offset, bytes: Buffer.from(data) });
        assert.deepEqual(Buffer.concat([header, Buffer.from(data)]), whole);
      },
    ),
  );
  assert.throws(() => encodeExportChunkHeader(1n, 0, 0), RangeError);
  assert.throws(() => encodeExportChunkHeader(1n, 0, 1024 * 1024 + 1), RangeError);
});
