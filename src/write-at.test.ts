import assert from 'node:assert/strict';
import { closeSync, fstatSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { WRITE_PIECE_BYTES, writeAllAt, writeAllAtSync } from './write-at.ts';

/** A real file handle whose write calls are recorded (position and length), optionally cut short. */
function recording(handle: FileHandle, calls: Array<[number, number]>, shortBy = 0): FileHandle {
  return new Proxy(handle, {
    get(target, prop) {
      if (prop !== 'write') return Reflect.get(target, prop, target) as unknown;
      return (buf: Uint8Array, offset: number, length: number, position: number) => {
        const n = Math.max(1, length - shortBy);
        calls.push([position, n]);
        return target.write(buf, offset, n, position);
      };
    },
  });
}

test('writeAllAt writes every byte at its position in pieces of at most WRITE_PIECE_BYTES, in order, short writes resumed', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'jackin-write-at-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const path = join(dir, 'f');
  const bytes = Buffer.alloc(3 * WRITE_PIECE_BYTES + 12345);
  for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 7) & 0xff;
  const fh = await open(path, 'wx');
  const calls: Array<[number, number]> = [];
  try {
    await writeAllAt(recording(fh, calls), bytes.subarray(0, 100), 0);
    await writeAllAt(recording(fh, calls, 1000), bytes.subarray(100), 100);
  } finally {
    await fh.close();
  }
  assert.deepEqual(readFileSync(path), bytes);
  assert.ok(
    calls.every(([, n]) => n <= WRITE_PIECE_BYTES),
    `no write over ${WRITE_PIECE_BYTES} bytes: ${JSON.stringify(calls)}`,
  );
  let expected = 0;
  for (const [at, n] of calls) {
    assert.equal(at, expected, 'each write continues where the last one ended');
    expected += n;
  }
  assert.equal(expected, bytes.length);
});

test('writeAllAt stops between pieces when beforeEach throws, having written only what came before', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'jackin-write-at-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const fh = await open(join(dir, 'f'), 'wx');
  let calls = 0;
  try {
    await assert.rejects(
      writeAllAt(fh, Buffer.alloc(4 * WRITE_PIECE_BYTES, 1), 0, () => {
        if (++calls === 3) throw new Error('stopped');
      }),
      /stopped/,
    );
    assert.equal((await fh.stat()).size, 2 * WRITE_PIECE_BYTES);
  } finally {
    await fh.close();
  }
});

test('writeAllAtSync writes every byte at its position, one piece of at most WRITE_PIECE_BYTES per beforeEach, and stops when it throws', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'jackin-write-at-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const path = join(dir, 'f');
  const bytes = Buffer.alloc(3 * WRITE_PIECE_BYTES + 12345);
  for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 13) & 0xff;
  const fd = openSync(path, 'wx');
  try {
    let pieces = 0;
    writeAllAtSync(fd, bytes.subarray(0, 100), 0, () => pieces++);
    writeAllAtSync(fd, bytes.subarray(100), 100, () => pieces++);
    assert.equal(pieces, 1 + Math.ceil((bytes.length - 100) / WRITE_PIECE_BYTES), 'one write call per piece of at most WRITE_PIECE_BYTES');
    assert.deepEqual(readFileSync(path), bytes);

    let calls = 0;
    assert.throws(
      () =>
        writeAllAtSync(fd, Buffer.alloc(4 * WRITE_PIECE_BYTES, 1), bytes.length, () => {
          if (++calls === 3) throw new Error('stopped');
        }),
      /stopped/,
    );
    assert.equal(fstatSync(fd).size, bytes.length + 2 * WRITE_PIECE_BYTES, 'only the pieces before the throw');
  } finally {
    closeSync(fd);
  }
});
