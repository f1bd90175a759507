/**
 * The archiver reads each file straight into the compressor's block (tar-zstd.ts): a file that grows,
 * shrinks or is rewritten while it is being read fails the archive with E_CHANGED_WHILE_READING, each by
 * its own check (the byte past the end that the last read asks for, a read that comes back empty, the
 * mtime at the end). The change is made from the sink, at the archive's first output, while the file is
 * still being read; and every file size around the tar and block boundaries comes back whole from GNU tar.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync, writeSync, openSync, closeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { JackinError } from '../../errors.ts';
import { DEFAULT_POLICY } from '../../policy/schema.ts';
import { listDirectory } from './directory-listing.ts';
import { writeDirectoryArchive } from './tar-zstd.ts';
import { ZSTD_BLOCK_BYTES } from './zstd-compressor.ts';

const caps = DEFAULT_POLICY.export.directories;

/** Archives `root`, calling `change` once, at the first compressed output; resolves with the archive. */
async function archive(root: string, change: () => void = () => undefined): Promise<Buffer> {
  const listing = await listDirectory(root, 'tree', caps);
  const out: Uint8Array[] = [];
  let changed = false;
  await writeDirectoryArchive(
    listing,
    async (bytes) => {
      out.push(Buffer.from(bytes));
      if (!changed) {
        changed = true;
        change();
      }
    },
    'tree',
  );
  return Buffer.concat(out);
}

/** A tree holding one large file (16 compressor blocks), read long after the archive's first output. */
function treeWithBigFile(t: { after: (fn: () => void) => void }): { root: string; big: string } {
  const root = mkdtempSync(join(tmpdir(), 'jackin-tar-zstd-'));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  const big = join(root, 'big.bin');
  writeFileSync(big, randomBytes(16 * ZSTD_BLOCK_BYTES));
  return { root, big };
}

const changedWith = (what: RegExp) => (e: unknown) => e instanceof JackinError && e.code === 'E_CHANGED_WHILE_READING' && what.test(e.message);

test('archive: a file that grows while it is read fails with E_CHANGED_WHILE_READING (the byte past its end)', async (t) => {
  const { root, big } = treeWithBigFile(t);
  await assert.rejects(
    archive(root, () => appendFileSync(big, 'x')),
    changedWith(/grew past/),
  );
});

test('archive: a file that shrinks while it is read fails with E_CHANGED_WHILE_READING', async (t) => {
  const { root, big } = treeWithBigFile(t);
  await assert.rejects(
    archive(root, () => truncateSync(big, 2 * ZSTD_BLOCK_BYTES)),
    changedWith(/shrank/),
  );
});

test('archive: a file rewritten in place while it is read (same size) fails with E_CHANGED_WHILE_READING', async (t) => {
  const { root, big } = treeWithBigFile(t);
  await assert.rejects(
    archive(root, () => {
      const fd = openSync(big, 'r+');
      try {
        writeSync(fd, Buffer.from('rewritten'), 0, 9, 15 * ZSTD_BLOCK_BYTES);
      } finally {
        closeSync(fd);
      }
    }),
    changedWith(/modified/),
  );
});

test('archive: files of every size around the tar block and the compressor block come back whole from GNU tar', async (t) => {
  const root = mkdtempSync(join(tmpdir(), 'jackin-tar-zstd-'));
  const out = mkdtempSync(join(tmpdir(), 'jackin-tar-zstd-out-'));
  t.after(() => {
    rmSync(root, { recursive: true, force: true });
    rmSync(out, { recursive: true, force: true });
  });
  const sizes = [0, 1, 511, 512, 513, ZSTD_BLOCK_BYTES - 1, ZSTD_BLOCK_BYTES, ZSTD_BLOCK_BYTES + 1, 2 * ZSTD_BLOCK_BYTES + 700];
  mkdirSync(join(root, 'd'));
  const files = sizes.map((n, i) => {
    const bytes = randomBytes(n);
    writeFileSync(join(root, 'd', `f${i}`), bytes);
    return { name: `f${i}`, bytes };
  });
  const packed = await archive(root);
  const x = spawnSync('tar', ['--zstd', '-xf', '-', '-C', out], { input: packed, encoding: 'utf8' });
  assert.equal(x.status, 0, x.stderr);
  for (const f of files) assert.deepEqual(readFileSync(join(out, 'tree', 'd', f.name)), f.bytes, f.name);
});
