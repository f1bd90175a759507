/**
 * Export on a system without /proc (macOS, for a local `jackin run`), run on Linux: descriptor-location.ts
 * is the only place that looks at /proc/self/fd, and simulateNoProcFd makes it answer as it does there. The
 * directory walk and the opener then take their fallback (dev/inode and realpath of the checked path), and
 * GNU tar checks the archive.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  closeSync,
  constants,
  existsSync,
  fstatSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { JackinError } from '../../errors.ts';
import { DEFAULT_POLICY, type Policy } from '../../policy/schema.ts';
import { descriptorLocationSync, procFdPath, simulateNoProcFd } from './descriptor-location.ts';
import { listDirectory } from './directory-listing.ts';
import { openExportSource, type ExportContext, type ExportSource } from './export-source.ts';

const policy: Policy = { version: 1, export: { ...DEFAULT_POLICY.export } };

/** A workspace and run directory, removed when the test ends, with /proc hidden meanwhile. */
function setup(t: { after(fn: () => void): void }): { ws: string; scratch: string; ctx: (extra?: Partial<ExportContext>) => ExportContext } {
  const base = realpathSync(mkdtempSync(join(tmpdir(), 'jk-noproc-')));
  const ws = join(base, 'ws');
  const run = join(base, 'run');
  const scratch = join(base, 'scratch');
  for (const d of [ws, run, scratch]) mkdirSync(d);
  const restore = simulateNoProcFd();
  t.after(() => {
    restore();
    rmSync(base, { recursive: true, force: true });
  });
  return { ws, scratch, ctx: (extra = {}) => ({ policy, workspace: ws, runDir: run, ...extra }) };
}

async function readAll(src: ExportSource): Promise<Buffer> {
  const parts: Buffer[] = [];
  try {
    for await (const c of src.chunks()) parts.push(Buffer.from(c.bytes));
  } finally {
    await src.close();
  }
  return Buffer.concat(parts);
}

function isRefusal(code: string): (e: unknown) => boolean {
  return (e) => e instanceof JackinError && e.code === code;
}

test('simulateNoProcFd hides /proc/self/fd: a descriptor is located by the path it was opened by', (t) => {
  const { ws } = setup(t);
  mkdirSync(join(ws, 'a'));
  mkdirSync(join(ws, 'b'));
  const fd = openSync(join(ws, 'a'), constants.O_RDONLY | constants.O_DIRECTORY);
  try {
    const st = fstatSync(fd, { bigint: true });
    assert.equal(procFdPath(fd), null);
    assert.equal(descriptorLocationSync(fd, join(ws, 'a'), st), join(ws, 'a'));
    assert.equal(descriptorLocationSync(fd, join(ws, 'b'), st), `(a different file than ${join(ws, 'b')})`);
    // The last name a symlink: lstat sees the link, a different file. A symlink above it: same file, refused too.
    symlinkSync(join(ws, 'a'), join(ws, 'link'));
    assert.equal(descriptorLocationSync(fd, join(ws, 'link'), st), `(a different file than ${join(ws, 'link')})`);
    symlinkSync(ws, join(ws, 'up'));
    assert.equal(descriptorLocationSync(fd, join(ws, 'up', 'a'), st), `(${join(ws, 'up', 'a')}, reached through a symlink to ${join(ws, 'a')})`);
    assert.match(descriptorLocationSync(fd, join(ws, 'gone'), st), /is gone: ENOENT/);
  } finally {
    closeSync(fd);
  }
});

// Host-only code (host/, transport/) is not scanned: transport/socket.ts connects to a checked socket through
// /proc/self/fd on a Linux host, which is no descriptor check of the capsule and has its own fallback.
test('in the capsule only descriptor-location.ts reads /proc/self/fd, so the simulation covers every descriptor check', () => {
  const src = fileURLToPath(new URL('../..', import.meta.url));
  const readers = readdirSync(src, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts') && !f.startsWith(`host${sep}`) && !f.startsWith(`transport${sep}`))
    .filter((f) => /\/proc\/self\/fd/.test(readFileSync(join(src, f), 'utf8').replace(/^\s*(\/\/|\/?\*).*$/gm, '')));
  assert.deepEqual(
    readers.map((f) => relative('.', f)),
    [join('capsule', 'export', 'descriptor-location.ts')],
  );
});

for (const streamSize of [false, true]) {
  test(`without /proc a directory exports as tar.zst that GNU tar lists and extracts identical (${streamSize ? 'streamed' : 'archived first'})`, {
    timeout: 60_000,
  }, async (t) => {
    const { ws, scratch, ctx } = setup(t);
    const root = join(ws, 'tree');
    mkdirSync(join(root, 'a', 'b'), { recursive: true });
    mkdirSync(join(root, 'empty'));
    writeFileSync(join(root, 'a', 'b', 'c.txt'), 'deep\n');
    writeFileSync(join(root, 'big.bin'), randomBytes(2 * 1024 * 1024 + 7)); // over one read: streamed entry
    writeFileSync(join(root, 'run.sh'), '#!/bin/sh\n');
    chmodSync(join(root, 'run.sh'), 0o755);
    symlinkSync('a/b/c.txt', join(root, 'link'));
    assert.equal(spawnSync('mkfifo', [join(root, 'pipe')]).status, 0);

    const src = await openExportSource('tree', ctx({ streamSize }));
    assert.equal(src.kind, 'directory');
    assert.deepEqual(src.skipped, ['pipe']);
    const archive = join(scratch, 'tree.tar.zst');
    writeFileSync(archive, await readAll(src));

    const listing = spawnSync('tar', ['--zstd', '-tvf', archive], { encoding: 'utf8' });
    assert.equal(listing.status, 0, listing.stderr);
    assert.match(listing.stdout, /^-rwxr-xr-x .*run\.sh$/m);
    assert.match(listing.stdout, /^l.* tree\/link -> a\/b\/c\.txt$/m);
    assert.match(listing.stdout, /^d.* (\S+\/)?empty\/?$/m);
    assert.doesNotMatch(listing.stdout, /pipe/);

    const dest = join(scratch, 'out');
    mkdirSync(dest);
    const x = spawnSync('tar', ['--zstd', '-xf', archive, '-C', dest], { encoding: 'utf8' });
    assert.equal(x.status, 0, x.stderr);
    rmSync(join(root, 'pipe'));
    // The archive's entries may sit under one top-level folder named after the directory.
    const top = readdirSync(dest);
    const extracted = top.length === 1 && top[0] === 'tree' ? join(dest, 'tree') : dest;
    const d = spawnSync('diff', ['-r', '--no-dereference', root, extracted], { encoding: 'utf8' });
    assert.equal(d.status, 0, d.stdout + d.stderr);
  });
}

test('without /proc a directory (or one above it) swapped for a symlink is refused, never listed through the link', async (t) => {
  const { ws } = setup(t);
  const elsewhere = join(ws, '..', 'scratch', 'elsewhere');
  mkdirSync(join(elsewhere, 'inner'), { recursive: true });
  symlinkSync('/etc/outside-only-target', join(elsewhere, 'inner', 'outside-only-link'));
  const caps = DEFAULT_POLICY.export.directories;
  symlinkSync(elsewhere, join(ws, 'swapped-dir'));
  await assert.rejects(listDirectory(join(ws, 'swapped-dir'), 'swapped-dir', caps), isRefusal('E_CHANGED_WHILE_READING'));
  symlinkSync(elsewhere, join(ws, 'swapped-parent'));
  await assert.rejects(listDirectory(join(ws, 'swapped-parent', 'inner'), 'swapped-parent/inner', caps), isRefusal('E_CHANGED_WHILE_READING'));
  // Not swapped, the same directory lists.
  const listing = await listDirectory(join(elsewhere, 'inner'), 'inner', caps);
  assert.deepEqual(
    listing.listed.map((e) => e.rel),
    ['outside-only-link'],
  );
});

test('without /proc a file export still refuses what resolves outside the roots and exports what stays inside', async (t) => {
  const { ws, scratch, ctx } = setup(t);
  writeFileSync(join(scratch, 'secret.txt'), 'OUTSIDE\n');
  writeFileSync(join(ws, 'report.txt'), 'inside\n');
  symlinkSync(join(scratch, 'secret.txt'), join(ws, 'escape'));
  symlinkSync('report.txt', join(ws, 'link-in'));
  await assert.rejects(openExportSource('escape', ctx()), isRefusal('E_POLICY_DENIED'));
  assert.equal((await readAll(await openExportSource('link-in', ctx()))).toString(), 'inside\n');
  assert.ok(!existsSync(join(ws, 'exports')));
});
