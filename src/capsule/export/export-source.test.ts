import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import {
  appendFileSync,
  chmodSync,
  closeSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { openExportSource, EXPORT_CHUNK_BYTES, type ExportContext, type ExportSource } from './export-source.ts';
import { listDirectory, openListedDirectory } from './directory-listing.ts';
import { openEntrySync } from './safe-open.ts';
import { writeDirectoryArchive } from './tar-zstd.ts';
import { DEFAULT_POLICY, type Policy } from '../../policy/schema.ts';
import { JackinError } from '../../errors.ts';
import { pollUntil } from '../../../test/helpers/poll.ts';

const INSIDE = 'inside-bytes\n';
const OUTSIDE = 'OUTSIDE-SECRET\n';

// The workspace sits directly under /tmp so that `../../etc/passwd` from it is exactly /etc/passwd.
let ws = '';
let run = '';
let out = '';
let scratch = '';

function policy(patch: Partial<Policy['export']> = {}): Policy {
  return { version: 1, export: { ...DEFAULT_POLICY.export, ...patch } };
}

function ctx(p: Policy = policy(), extra: Partial<ExportContext> = {}): ExportContext {
  return { policy: p, workspace: ws, runDir: run, ...extra };
}

async function readAll(src: ExportSource): Promise<Buffer> {
  const parts: Buffer[] = [];
  let expected = 0;
  try {
    for await (const c of src.chunks()) {
      assert.equal(c.offset, expected);
      assert.ok(c.bytes.length > 0 && c.bytes.length <= EXPORT_CHUNK_BYTES);
      expected += c.bytes.length;
      parts.push(c.bytes);
    }
  } finally {
    await src.close();
  }
  const all = Buffer.concat(parts);
  // A streamed archive declares an upper bound; everything else its exact size.
  if (src.streamed) assert.ok(all.length <= src.size);
  else assert.equal(all.length, src.size);
  assert.equal(src.digest().bytes, all.length);
  assert.deepEqual(src.digest().sha256, createHash('sha256').update(all).digest());
  return all;
}

async function refused(path: string, code: string, c: ExportContext = ctx()): Promise<void> {
  await assert.rejects(openExportSource(path, c), (e: unknown) => {
    assert.ok(e instanceof JackinError, String(e));
    assert.equal(e.code, code, `${path}: ${e.message}`);
    return true;
  });
}

before(() => {
  ws = mkdtempSync(join(tmpdir(), 'jk-ws-'));
  run = mkdtempSync(join(tmpdir(), 'jk-run-'));
  out = mkdtempSync(join(tmpdir(), 'jk-out-'));
  scratch = mkdtempSync(join(tmpdir(), 'jk-scratch-'));
  mkdirSync(join(run, 'clipboard'));
  mkdirSync(join(run, 'uploads'));
  writeFileSync(join(out, 'secret.txt'), OUTSIDE);
  writeFileSync(join(ws, 'report.txt'), INSIDE);
  mkdirSync(join(ws, 'sub'));
  writeFileSync(join(ws, 'sub', 'x.txt'), INSIDE);
  symlinkSync('/etc/hosts', join(ws, 'link-hosts'));
  symlinkSync('report.txt', join(ws, 'link-in'));
  symlinkSync(out, join(ws, 'dir-link'));
  writeFileSync(join(ws, 'big.bin'), Buffer.alloc(4096, 1));
  assert.equal(spawnSync('mkfifo', [join(ws, 'fifo')]).status, 0, 'mkfifo failed');
  writeFileSync(join(run, 'clipboard', 'shot.png'), INSIDE);
});

after(() => {
  for (const d of [ws, run, out, scratch]) rmSync(d, { recursive: true, force: true });
});

test('a file in the workspace exports byte-identical with its SHA-256, relative or absolute', async () => {
  for (const p of ['report.txt', join(ws, 'report.txt'), 'sub/../report.txt']) {
    const src = await openExportSource(p, ctx());
    assert.equal(src.kind, 'file');
    assert.equal(src.name, 'report.txt');
    assert.equal((await readAll(src)).toString(), INSIDE);
  }
  assert.equal((await readAll(await openExportSource(join(run, 'clipboard', 'shot.png'), ctx()))).toString(), INSIDE);
});

test('a symlink that stays inside the roots exports its target', async () => {
  const src = await openExportSource('link-in', ctx());
  assert.equal(src.name, 'link-in');
  assert.equal(src.realPath, join(ws, 'report.txt'));
  assert.equal((await readAll(src)).toString(), INSIDE);
});

test('a multi-chunk file streams in 1 MiB chunks', async () => {
  const data = randomBytes(2 * EXPORT_CHUNK_BYTES + 123);
  writeFileSync(join(ws, 'multi.bin'), data);
  const src = await openExportSource('multi.bin', ctx());
  assert.deepEqual(await readAll(src), data);
  rmSync(join(ws, 'multi.bin'));
});

test('refusals carry stable codes', async () => {
  // As many `..` as it takes to climb from the workspace to /.
  await refused(`${'../'.repeat(ws.split('/').length - 1)}etc/passwd`, 'E_POLICY_DENIED');
  await refused('/etc/hosts', 'E_POLICY_DENIED');
  await refused('link-hosts', 'E_POLICY_DENIED');
  await refused('dir-link/secret.txt', 'E_POLICY_DENIED');
  await refused('/dev/zero', 'E_POLICY_DENIED');
  await refused('nope.txt', 'E_NOT_FOUND');
  await refused('/etc/no-such-file-here', 'E_POLICY_DENIED');
  await refused('sub', 'E_DIR_DISABLED', ctx(policy({ directories: { ...DEFAULT_POLICY.export.directories, enabled: false } })));
  await refused('big.bin', 'E_TOO_LARGE', ctx(policy({ maxFileBytes: 4095 })));
  await refused('', 'E_BAD_PATH');
});

test('a FIFO is refused at once, without waiting for a writer', { timeout: 5000 }, async () => {
  await refused('fifo', 'E_NOT_REGULAR');
});

test('a device inside an allowed root is refused as not regular', { timeout: 5000 }, async () => {
  await refused('/dev/zero', 'E_NOT_REGULAR', ctx(policy({ roots: ['${workspace}', '/dev'] })));
});

test('outsideRoots=confirm asks first, then exports the confirmed file', async () => {
  const p = policy({ outsideRoots: 'confirm' });
  await refused(join(out, 'secret.txt'), 'E_NEEDS_CONFIRMATION', ctx(p));
  const src = await openExportSource(join(out, 'secret.txt'), ctx(p, { confirmedOutside: true }));
  assert.equal((await readAll(src)).toString(), OUTSIDE);
});

test('a file that grows, shrinks or is rewritten while streaming is refused', async () => {
  const path = join(ws, 'changing.bin');
  const cases: Array<[string, () => void]> = [
    ['grow', () => appendFileSync(path, 'more')],
    ['shrink', () => truncateSync(path, 10)],
    ['rewrite', () => writeFileSync(path, Buffer.alloc(3 * EXPORT_CHUNK_BYTES, 7))],
  ];
  for (const [label, change] of cases) {
    writeFileSync(path, Buffer.alloc(3 * EXPORT_CHUNK_BYTES, 1));
    const src = await openExportSource('changing.bin', ctx());
    let n = 0;
    await assert.rejects(
      (async () => {
        for await (const _c of src.chunks()) {
          if (n++ === 0) {
            change();
            // Make sure a same-size rewrite gets a new mtime even on a coarse clock.
            if (label === 'rewrite') spawnSync('touch', ['-d', '2001-01-01', path]);
          }
        }
      })(),
      (e: unknown) => e instanceof JackinError && e.code === 'E_CHANGED_WHILE_READING',
      label,
    );
    await src.close();
  }
  rmSync(path);
});

/** A child process that keeps swapping `link` between the inside file and the outside file, and swapping
 * the real directory `swapdir` for a symlink to the outside directory. */
function startSwapper(): ChildProcess {
  const script = `
    const fs = require('fs'); const p = require('path');
    const [ws, out] = process.argv.slice(1);
    const link = p.join(ws, 'link'), tmp = p.join(ws, 'link.tmp');
    const dir = p.join(ws, 'swapdir'), bak = p.join(ws, 'swapdir.bak'), dlink = p.join(ws, 'swapdir.link');
    fs.symlinkSync(out, dlink);
    for (;;) {
      for (const t of ['report.txt', p.join(out, 'secret.txt')]) {
        try { fs.unlinkSync(tmp); } catch {}
        fs.symlinkSync(t, tmp); fs.renameSync(tmp, link);
      }
      fs.renameSync(dir, bak); fs.renameSync(dlink, dir);
      fs.renameSync(dir, dlink); fs.renameSync(bak, dir);
    }`;
  return spawn(process.execPath, ['-e', script, ws, out], { stdio: 'ignore' });
}

test('stress: swapping symlinks and directories during exports never yields an outside byte', { timeout: 120_000 }, async () => {
  mkdirSync(join(ws, 'swapdir'));
  writeFileSync(join(ws, 'swapdir', 'secret.txt'), INSIDE);
  const swapper = startSwapper();
  const seen = { ok: 0, refused: 0 };
  try {
    for (let i = 0; i < 3000; i++) {
      for (const p of ['link', 'swapdir/secret.txt']) {
        let src: ExportSource;
        try {
          src = await openExportSource(p, ctx());
        } catch (e) {
          assert.ok(e instanceof JackinError, String(e));
          assert.ok(['E_POLICY_DENIED', 'E_NOT_FOUND'].includes(e.code), e.code);
          seen.refused++;
          continue;
        }
        const bytes = await readAll(src);
        assert.equal(bytes.toString(), INSIDE, `${p} exported outside bytes from ${src.realPath}`);
        assert.ok(src.realPath.startsWith(`${ws}/`), src.realPath);
        seen.ok++;
      }
    }
  } finally {
    swapper.kill('SIGKILL');
    await new Promise((r) => swapper.once('exit', r));
    for (const n of ['link', 'link.tmp', 'swapdir.link']) rmSync(join(ws, n), { force: true });
    rmSync(join(ws, 'swapdir'), { recursive: true, force: true });
    rmSync(join(ws, 'swapdir.bak'), { recursive: true, force: true });
  }
  // Both outcomes must have happened, or the race was never exercised.
  assert.ok(seen.ok > 0 && seen.refused > 0, JSON.stringify(seen));
});

test("stress: swapping a tree's file and subdirectory for outside symlinks while it is archived never archives an outside byte or name", {
  timeout: 120_000,
}, async () => {
  // The tree's entries are opened from their checked directory (openEntrySync): same guarantee. The
  // outside directory the swapped-in subdirectory symlink points to holds only a directory and a symlink:
  // entries archived without being opened, so only the listing itself can keep their names out (an outside
  // regular file would fail the export when opened).
  const root = join(ws, 'swaptree');
  mkdirSync(join(root, 'sub'), { recursive: true });
  writeFileSync(join(root, 'file.txt'), INSIDE);
  writeFileSync(join(root, 'sub', 'secret.txt'), INSIDE);
  const outTree = mkdtempSync(join(tmpdir(), 'jk-outtree-'));
  mkdirSync(join(outTree, 'outside-only-dir'));
  symlinkSync('/etc/outside-only-target', join(outTree, 'outside-only-link'));
  const script = `
    const fs = require('fs'); const p = require('path');
    const [root, out] = process.argv.slice(1);
    const f = p.join(root, 'file.txt'), fbak = p.join(root, 'file.bak'), flink = p.join(root, 'file.link');
    const d = p.join(root, 'sub'), dbak = p.join(root, 'sub.bak'), dlink = p.join(root, 'sub.link');
    fs.symlinkSync(p.join(out, 'secret.txt'), flink); fs.symlinkSync(process.argv[3], dlink);
    for (;;) {
      fs.renameSync(f, fbak); fs.renameSync(flink, f); fs.renameSync(f, flink); fs.renameSync(fbak, f);
      fs.renameSync(d, dbak); fs.renameSync(dlink, d); fs.renameSync(d, dlink); fs.renameSync(dbak, d);
    }`;
  const swapper = spawn(process.execPath, ['-e', script, root, out, outTree], { stdio: 'ignore' });
  const seen = { ok: 0, failed: 0 };
  try {
    for (let i = 0; i < 150; i++) {
      for (const streamSize of [true, false]) {
        let bytes: Buffer;
        try {
          bytes = await readAll(await openExportSource('swaptree', ctx(policy(), { streamSize })));
        } catch (e) {
          assert.ok(e instanceof JackinError, String(e));
          seen.failed++;
          continue;
        }
        seen.ok++;
        const archive = join(scratch, 'swap.tar.zst');
        writeFileSync(archive, bytes);
        // Every byte GNU tar can extract from the archive: regular files' contents only (links stay links).
        const dump = spawnSync('tar', ['--zstd', '-xOf', archive], { maxBuffer: 1 << 24 });
        assert.equal(dump.status, 0, String(dump.stderr));
        assert.ok(!dump.stdout.toString('latin1').includes(OUTSIDE.trim()), 'an outside file was archived');
        const names = spawnSync('tar', ['--zstd', '-tvf', archive], { maxBuffer: 1 << 24 });
        assert.equal(names.status, 0, String(names.stderr));
        assert.doesNotMatch(names.stdout.toString(), /outside-only/, 'an outside name was archived');
      }
    }
  } finally {
    swapper.kill('SIGKILL');
    await new Promise((r) => swapper.once('exit', r));
    rmSync(root, { recursive: true, force: true });
    rmSync(outTree, { recursive: true, force: true });
  }
  assert.ok(seen.ok > 0, JSON.stringify(seen));
});

test('property: random paths through `..`, `.`, empty segments and symlinks never export outside bytes', async () => {
  const seg = fc.constantFrom(
    '..',
    '.',
    '',
    'sub',
    'x.txt',
    'report.txt',
    'link-in',
    'link-hosts',
    'dir-link',
    'secret.txt',
    'etc',
    'hosts',
    'tmp',
    ws.slice(5),
    out.slice(5),
  );
  const off = policy({ directories: { ...DEFAULT_POLICY.export.directories, enabled: false } });
  await fc.assert(
    fc.asyncProperty(fc.array(seg, { minLength: 1, maxLength: 8 }), fc.boolean(), async (segs, absolute) => {
      const p = (absolute ? '/' : '') + segs.join('/');
      fc.pre(p.length > 0);
      let src: ExportSource;
      try {
        src = await openExportSource(p, ctx(off));
      } catch (e) {
        assert.ok(e instanceof JackinError, String(e));
        assert.ok(['E_POLICY_DENIED', 'E_NOT_FOUND', 'E_DIR_DISABLED', 'E_NOT_REGULAR', 'E_BAD_PATH'].includes(e.code), `${p}: ${e.code}`);
        return;
      }
      const bytes = await readAll(src);
      assert.ok(src.realPath.startsWith(`${ws}/`) || src.realPath.startsWith(`${run}/`), `${p} -> ${src.realPath}`);
      assert.ok(!bytes.toString().includes('OUTSIDE'), p);
    }),
    { numRuns: 400 },
  );
});

function tree(root: string): void {
  mkdirSync(join(root, 'a', 'b'), { recursive: true });
  writeFileSync(join(root, 'top.txt'), 'top\n');
  writeFileSync(join(root, 'a', 'b', 'deep.txt'), 'deep\n');
  writeFileSync(join(root, 'a', 'random.bin'), randomBytes(5 * 1024 * 1024 + 7));
  writeFileSync(join(root, 'run.sh'), '#!/bin/sh\n');
  chmodSync(join(root, 'run.sh'), 0o755);
  mkdirSync(join(root, 'empty'));
  writeFileSync(join(root, 'résumé-日本語.txt'), 'non-ascii\n');
  const long = join(root, 'l'.repeat(60), 'o'.repeat(60), `${'n'.repeat(90)}.txt`);
  mkdirSync(join(long, '..'), { recursive: true });
  writeFileSync(long, 'long path\n');
  symlinkSync('a/b/deep.txt', join(root, 'link-rel'));
  symlinkSync('/etc/hosts', join(root, 'link-abs'));
  symlinkSync('does-not-exist', join(root, 'link-dangling'));
  symlinkSync('../a', join(root, 'a', 'b', 'link-dir'));
  assert.equal(spawnSync('mkfifo', [join(root, 'pipe')]).status, 0);
}

for (const streamSize of [false, true]) {
  test(`a directory exports as tar.zst that GNU tar extracts identical (${streamSize ? 'archived while it streams' : 'archived first'})`, {
    timeout: 60_000,
  }, async () => {
    const root = join(ws, 'tree');
    tree(root);
    const src = await openExportSource('tree', ctx(policy(), { streamSize }));
    assert.equal(src.kind, 'directory');
    assert.equal(src.name, 'tree.tar.zst');
    assert.equal(src.streamed, streamSize);
    assert.deepEqual(src.skipped, ['pipe']);
    const archive = join(scratch, 'tree.tar.zst');
    const bytes = await readAll(src);
    writeFileSync(archive, bytes);
    assert.equal(src.digest().bytes, bytes.length);
    assert.deepEqual(src.digest().sha256, createHash('sha256').update(bytes).digest());
    if (streamSize) assert.ok(src.size >= bytes.length, `declared bound ${src.size} < ${bytes.length}`);
    else assert.equal(src.size, bytes.length);
    assert.deepEqual(existsSync(join(run, 'exports')) ? readdirSync(join(run, 'exports')) : [], [], 'no temporary archive outlives the export');

    const dest = join(scratch, 'extracted');
    mkdirSync(dest);
    const x = spawnSync('tar', ['--zstd', '-xf', archive, '-C', dest], { encoding: 'utf8' });
    assert.equal(x.status, 0, x.stderr);
    // One top-level folder named after the directory: extracting never spills files into the destination.
    assert.deepEqual(readdirSync(dest), ['tree']);
    rmSync(join(root, 'pipe'));
    const d = spawnSync('diff', ['-r', '--no-dereference', root, join(dest, 'tree')], { encoding: 'utf8' });
    assert.equal(d.status, 0, d.stdout + d.stderr);
    assert.equal(statSync(join(dest, 'tree', 'run.sh')).mode & 0o777, 0o755);
    const names = spawnSync('tar', ['--zstd', '-tf', archive], { encoding: 'utf8' })
      .stdout.split('\n')
      .filter((l) => l !== '');
    assert.ok(
      names.every((n) => n === 'tree' || n === 'tree/' || n.startsWith('tree/')),
      names.join('\n'),
    );
    assert.ok(names.includes('tree/empty') || names.includes('tree/empty/'), names.join('\n'));
    assert.ok(!names.some((l) => l.startsWith('/') || l.split('/').includes('..')), names.join('\n'));
    rmSync(root, { recursive: true });
    rmSync(dest, { recursive: true });
  });
}

test('a streamed directory archive stays within its declared bound, even for incompressible content and long names', { timeout: 60_000 }, async () => {
  const root = join(ws, 'bound');
  mkdirSync(join(root, 'n'.repeat(120), 'é'.repeat(60)), { recursive: true });
  for (let i = 0; i < 40; i++) writeFileSync(join(root, 'n'.repeat(120), 'é'.repeat(60), `r${i}`), randomBytes(i * 997));
  writeFileSync(join(root, 'big'), randomBytes(3 * 1024 * 1024 + 5));
  symlinkSync('t'.repeat(200), join(root, 'l'.repeat(150)));
  const src = await openExportSource('bound', ctx(policy(), { streamSize: true }));
  const bytes = await readAll(src);
  assert.ok(bytes.length <= src.size, `${bytes.length} > bound ${src.size}`);
  // Tight enough to be an honest free-space estimate: random content barely compresses.
  assert.ok(src.size < bytes.length * 1.1, `bound ${src.size} is far over ${bytes.length}`);
  rmSync(root, { recursive: true });
});

test('directory caps are enforced before anything is archived', async () => {
  const root = join(ws, 'capped');
  mkdirSync(root);
  for (let i = 0; i < 5; i++) writeFileSync(join(root, `f${i}`), 'x'.repeat(100));
  const dirs = DEFAULT_POLICY.export.directories;
  await refused('capped', 'E_DIR_CAP', ctx(policy({ directories: { ...dirs, maxEntries: 4 } })));
  await refused('capped', 'E_DIR_CAP', ctx(policy({ directories: { ...dirs, maxTotalBytes: 499 } })));
  await readAll(await openExportSource('capped', ctx(policy({ directories: { ...dirs, maxEntries: 5, maxTotalBytes: 500 } }))));
  rmSync(root, { recursive: true });
});

test('a symlinked directory inside the tree is stored as a link, never walked', async () => {
  const root = join(ws, 'withlink');
  mkdirSync(root);
  symlinkSync(out, join(root, 'escape'));
  const src = await openExportSource('withlink', ctx());
  const archive = join(scratch, 'withlink.tar.zst');
  writeFileSync(archive, await readAll(src));
  const listing = spawnSync('tar', ['--zstd', '-tvf', archive], { encoding: 'utf8' });
  assert.equal(listing.status, 0, listing.stderr);
  assert.match(listing.stdout, /^l.* withlink\/escape -> /m);
  assert.ok(!listing.stdout.includes('secret'), listing.stdout);
  const raw = spawnSync('zstd', ['-dc', archive]);
  assert.ok(!raw.stdout.toString().includes('OUTSIDE'));
  rmSync(root, { recursive: true });
});

test('a file that changes after a streamed directory was listed fails the stream with E_CHANGED_WHILE_READING', async () => {
  const root = join(ws, 'changing');
  mkdirSync(root);
  writeFileSync(join(root, 'a'), 'x'.repeat(5000));
  writeFileSync(join(root, 'b'), randomBytes(2 * 1024 * 1024));
  const src = await openExportSource('changing', ctx(policy(), { streamSize: true }));
  truncateSync(join(root, 'b'), 10);
  await assert.rejects(readAll(src), (e: unknown) => e instanceof JackinError && e.code === 'E_CHANGED_WHILE_READING');
  rmSync(root, { recursive: true });
});

test('a streamed directory whose reader stops early (the host went away) stops its archiver and leaves nothing open', { timeout: 20_000 }, async () => {
  const root = join(ws, 'abandoned');
  mkdirSync(root);
  for (let i = 0; i < 12; i++) writeFileSync(join(root, `r${i}`), randomBytes(1024 * 1024));
  const fdsBefore = readdirSync('/proc/self/fd').length;
  const src = await openExportSource('abandoned', ctx(policy(), { streamSize: true }));
  let got = 0;
  for await (const c of src.chunks()) {
    got += c.bytes.length;
    break; // as streamExport does when the socket closes
  }
  await src.close();
  assert.ok(got > 0);
  assert.throws(() => src.digest(), /before chunks\(\) completed/);
  // Every file the archiver opened is closed again (the archiver was stopped, not left waiting).
  await pollUntil('descriptors to be closed', () => readdirSync('/proc/self/fd').length <= fdsBefore, {
    timeoutMs: 5000,
    last: () => readdirSync('/proc/self/fd').length,
  });
  rmSync(root, { recursive: true });
});

test('the archiver waits for a stalled reader even when the tree is only symlinks (headers count against its queue)', { timeout: 30_000 }, async () => {
  // 20,000 symlinks with 4,000-byte targets: about 100 MiB of tar headers and no file content at all.
  const target = 't'.repeat(4000);
  const entries = Array.from({ length: 20_000 }, (_, i) => ({ type: 'symlink' as const, rel: `link-${i}`, mode: 0o777, mtime: new Date(0), target }));
  let taken = 0;
  const counted = {
    *[Symbol.iterator]() {
      for (const e of entries) {
        taken++;
        yield e;
      }
    },
  };
  const listing = { root: ws, shown: 'links', listed: counted as unknown as typeof entries, skipped: [] };
  // A host that stopped reading: the first write never completes.
  const archiving = writeDirectoryArchive(listing, () => new Promise<void>(() => undefined));
  archiving.catch(() => undefined);
  let last = -1;
  await pollUntil(
    'the archiver to stop taking entries',
    () => {
      const still = taken === last;
      last = taken;
      return still && taken > 0;
    },
    { timeoutMs: 20_000, intervalMs: 300, last: () => taken },
  );
  assert.ok(taken < entries.length / 4, `the archiver took ${taken} of ${entries.length} entries for a reader that never read`);
});

test('a directory swapped for a symlink after it was checked is refused, never listed through the link', async () => {
  // listDirectory gets the directory's checked real path; by the time it lists, the agent may have swapped
  // that directory (or one above it) for a symlink to somewhere else. Nothing from there may be listed.
  const elsewhere = mkdtempSync(join(tmpdir(), 'jk-elsewhere-'));
  mkdirSync(join(elsewhere, 'inner'));
  symlinkSync('/etc/outside-only-target', join(elsewhere, 'inner', 'outside-only-link'));
  symlinkSync('/etc/outside-only-target', join(elsewhere, 'outside-only-link'));
  const caps = DEFAULT_POLICY.export.directories;
  try {
    // The directory itself is now a symlink.
    symlinkSync(elsewhere, join(ws, 'swapped-dir'));
    await assert.rejects(
      listDirectory(join(ws, 'swapped-dir'), 'swapped-dir', caps),
      (e: unknown) => e instanceof JackinError && e.code === 'E_CHANGED_WHILE_READING',
    );
    // A directory above it is now a symlink: the last name is a real directory, somewhere else.
    symlinkSync(elsewhere, join(ws, 'swapped-parent'));
    await assert.rejects(
      listDirectory(join(ws, 'swapped-parent', 'inner'), 'swapped-parent/inner', caps),
      (e: unknown) => e instanceof JackinError && e.code === 'E_CHANGED_WHILE_READING',
    );
    // The same directory, not swapped, lists normally.
    const listing = await listDirectory(join(elsewhere, 'inner'), 'inner', caps);
    assert.deepEqual(
      listing.listed.map((e) => e.rel),
      ['outside-only-link'],
    );
  } finally {
    rmSync(join(ws, 'swapped-dir'), { force: true });
    rmSync(join(ws, 'swapped-parent'), { force: true });
    rmSync(elsewhere, { recursive: true, force: true });
  }
});

test("a tree file is opened from its checked directory's descriptor: a path swapped meanwhile reads nothing else, and a directory moved out of the roots is refused", () => {
  const dir = join(ws, 'pinned');
  mkdirSync(dir);
  writeFileSync(join(dir, 'a.txt'), INSIDE);
  symlinkSync(join(out, 'secret.txt'), join(dir, 'link.txt'));
  const inRoot = { realRoots: [ws], outside: 'deny', confirmedOutside: false } as const;
  const fd = openListedDirectory(ws, 'pinned', 'pinned');
  try {
    // The path now leads outside; opening by path would read the outside file, opening from the descriptor cannot.
    renameSync(dir, `${dir}.moved`);
    mkdirSync(dir);
    symlinkSync(join(out, 'secret.txt'), join(dir, 'a.txt'));
    const opened = openEntrySync(fd, 'a.txt', 'pinned/a.txt', inRoot);
    try {
      assert.equal(opened.realPath, join(`${dir}.moved`, 'a.txt'));
      const b = Buffer.alloc(64);
      assert.equal(b.subarray(0, readSync(opened.fd, b, 0, 64, 0)).toString(), INSIDE);
    } finally {
      closeSync(opened.fd);
    }
    // The last name is never followed.
    assert.throws(
      () => openEntrySync(fd, 'link.txt', 'pinned/link.txt', inRoot),
      (e: unknown) => e instanceof JackinError && e.code === 'E_POLICY_DENIED',
    );
    // One name only.
    assert.throws(() => openEntrySync(fd, '../pinned/a.txt', 'x', inRoot), TypeError);
    assert.throws(() => openEntrySync(fd, '..', 'x', inRoot), TypeError);
    // The checked directory moved out of the roots: its files are outside now, and refused.
    renameSync(`${dir}.moved`, join(out, 'pinned.moved'));
    assert.throws(
      () => openEntrySync(fd, 'a.txt', 'pinned/a.txt', inRoot),
      (e: unknown) => e instanceof JackinError && e.code === 'E_POLICY_DENIED',
    );
  } finally {
    closeSync(fd);
    rmSync(dir, { recursive: true, force: true });
    rmSync(`${dir}.moved`, { recursive: true, force: true });
    rmSync(join(out, 'pinned.moved'), { recursive: true, force: true });
  }
});
