import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { hasCode } from '../../errors.ts';
import { checkStagedName, FileStaging } from './file-staging.ts';

function runDir(t: { after: (fn: () => void) => void }): string {
  const d = mkdtempSync(join(tmpdir(), 'jackin-file-staging-'));
  t.after(() => rmSync(d, { recursive: true, force: true }));
  return d;
}

const sha = (b: Buffer): Buffer => createHash('sha256').update(b).digest();

/** Everything under <run>/files, as relative names. */
function tree(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, encoding: 'utf8' }).sort();
}

test('file staging: chunks in order, verified, land at files/<16 hex>/<name> (0600 in 0700), the partial name gone', async (t) => {
  const run = runDir(t);
  const staging = new FileStaging(run, { maxBytes: 1 << 20, freeSpaceMargin: 0 });
  const data = Buffer.from('a,b\n1,2\n'.repeat(100));
  const tr = await staging.begin('data set.csv', data.length);
  assert.deepEqual(tree(staging.dir).filter((n) => n.startsWith('.partial-')).length, 1);
  await tr.write(0, data.subarray(0, 300));
  await tr.write(300, data.subarray(300));
  const staged = await tr.finish(sha(data));
  assert.match(staged.path, new RegExp(`^${staging.dir}/[0-9a-f]{16}/data set\\.csv$`));
  assert.deepEqual(readFileSync(staged.path), data);
  assert.equal(staged.sha256, sha(data).toString('hex'));
  assert.equal(statSync(staged.path).mode & 0o777, 0o600);
  assert.equal(statSync(join(staged.path, '..')).mode & 0o777, 0o700);
  assert.equal(statSync(staging.dir).mode & 0o777, 0o700);
  assert.equal(tree(staging.dir).filter((n) => n.startsWith('.partial-')).length, 0);
  // An empty file is End alone.
  const empty = await (await staging.begin('empty', 0)).finish(sha(Buffer.alloc(0)));
  assert.equal(readFileSync(empty.path).length, 0);
  await staging.cleanup();
  assert.equal(existsSync(staging.dir), false);
});

test('file staging: a wrong digest, a short transfer, a bad offset or an overlong chunk publishes nothing and leaves no partial file', async (t) => {
  const run = runDir(t);
  const staging = new FileStaging(run, { maxBytes: 1 << 20, freeSpaceMargin: 0 });
  const data = Buffer.from('0123456789');
  let tr = await staging.begin('x.bin', 10);
  await tr.write(0, data);
  await assert.rejects(tr.finish(sha(Buffer.from('other'))), (e) => hasCode(e, 'E_DIGEST_MISMATCH'));
  tr = await staging.begin('x.bin', 10);
  await tr.write(0, data.subarray(0, 4));
  await assert.rejects(tr.finish(sha(data)), (e) => hasCode(e, 'E_TRANSFER_SIZE_MISMATCH'));
  tr = await staging.begin('x.bin', 10);
  await assert.rejects(tr.write(3, data.subarray(0, 3)), (e) => hasCode(e, 'E_TRANSFER_OFFSET'));
  await assert.rejects(tr.write(0, Buffer.alloc(11)), (e) => hasCode(e, 'E_TRANSFER_SIZE_MISMATCH'));
  await tr.abort();
  assert.deepEqual(tree(staging.dir), []);
});

test('file staging: the capsule re-checks the size against its cap and the free space, and the name', async (t) => {
  const run = runDir(t);
  const staging = new FileStaging(run, { maxBytes: 100, freeSpaceMargin: 0 });
  await assert.rejects(staging.begin('a', 101), (e) => hasCode(e, 'E_STAGE_TOO_LARGE'));
  await assert.rejects(staging.begin('a', -1), (e) => hasCode(e, 'E_BAD_REQUEST'));
  await assert.rejects(staging.begin('a', 1.5), (e) => hasCode(e, 'E_BAD_REQUEST'));
  await assert.rejects(staging.begin('../a', 1), (e) => hasCode(e, 'E_BAD_STAGE_NAME'));
  const huge = new FileStaging(run, { maxBytes: Number.MAX_SAFE_INTEGER, freeSpaceMargin: 0 });
  await assert.rejects(huge.begin('a', 2 ** 52), (e) => hasCode(e, 'E_NO_SPACE'));
  assert.deepEqual(tree(staging.dir), []);
});

test('file staging: a symlink in place of the files directory is refused', async (t) => {
  const run = runDir(t);
  mkdirSync(join(run, 'elsewhere'));
  symlinkSync(join(run, 'elsewhere'), join(run, 'files'));
  const staging = new FileStaging(run, { maxBytes: 100, freeSpaceMargin: 0 });
  await assert.rejects(staging.begin('a', 1), (e) => hasCode(e, 'E_STAGING_UNSAFE'));
  assert.deepEqual(readdirSync(join(run, 'elsewhere')), []);
});

test('staged names property: one component without control characters is kept verbatim; anything else is E_BAD_STAGE_NAME', () => {
  const bad = fc.oneof(
    fc.constantFrom('', '.', '..', 'a/b', '/', 'x\n', 'tab\there', '\x7f', '.partial-0011', 'a'.repeat(256)),
    fc.tuple(fc.string(), fc.constantFrom('/', '\x00', '\x1b', '\r'), fc.string()).map(([a, c, b]) => a + c + b),
  );
  fc.assert(
    fc.property(bad, (name) =>
      assert.throws(
        () => checkStagedName(name),
        (e) => hasCode(e, 'E_BAD_STAGE_NAME'),
      ),
    ),
  );
  const good = fc
    .string({ unit: 'grapheme', minLength: 1, maxLength: 60 })
    .filter((s) => !/[/\x00-\x1f\x7f]/.test(s) && s !== '.' && s !== '..' && !s.startsWith('.partial-') && Buffer.byteLength(s) <= 255);
  fc.assert(fc.property(good, (name) => assert.equal(checkStagedName(name), name)));
});
