// End-to-end exports (issue 6): a real capsule (`jackin-capsule serve`), the real `jackin export` CLI or the
// host export client over the real control channel, real files, GNU tar.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import {
  closeSync,
  constants,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  statSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exportFile } from '../src/host/export/export-client.ts';
import { JackinError } from '../src/errors.ts';
import { readActions } from '../src/host/instances/action-log.ts';
import { encodeControlMessage } from '../src/protocol/index.ts';
import { pollUntil } from './helpers/poll.ts';
import { stopChild } from './helpers/stop-child.ts';
import { startExportCapsule } from './helpers/export-capsule.ts';
import { CAPSULE_BIN } from './helpers/jackin-cli.ts';
import { socketAddress } from '../src/transport/socket-address.ts';

function sha(b: Buffer): string {
  return createHash('sha256').update(b).digest('hex');
}

function listAll(dir: string): string[] {
  try {
    return readdirSync(dir).sort();
  } catch {
    return [];
  }
}

test('jackin export --json writes a byte-identical 0600 copy; a second export makes a second file', async (t) => {
  const c = await startExportCapsule(t, 'X');
  const content = randomBytes(3 * 1024 * 1024 + 17);
  writeFileSync(join(c.workspace, 'report.txt'), content);
  const first = await c.jackin(['export', '--from', 'X', 'report.txt', '--json']);
  assert.equal(first.code, 0, first.stderr);
  const line = JSON.parse(first.stdout.trim()) as Record<string, unknown>;
  const dest = join(c.downloads, 'jackin', 'X', 'report.txt');
  assert.deepEqual(line, { ok: true, source: 'report.txt', destination: dest, bytes: content.length, sha256: sha(content) });
  assert.deepEqual(readFileSync(dest), content);
  assert.equal(statSync(dest).mode & 0o777, 0o600);
  assert.equal(statSync(join(c.downloads, 'jackin', 'X')).mode & 0o777, 0o700);
  const before = statSync(dest);

  // Without --from: exactly one instance runs.
  const second = await c.jackin(['export', 'report.txt', '--json']);
  assert.equal(second.code, 0, second.stderr);
  const line2 = JSON.parse(second.stdout.trim()) as Record<string, unknown>;
  assert.equal(line2['destination'], join(c.downloads, 'jackin', 'X', 'report-1.txt'));
  assert.deepEqual(readFileSync(join(c.downloads, 'jackin', 'X', 'report-1.txt')), content);
  const after = statSync(dest);
  assert.equal(after.ino, before.ino, 'the first file was not replaced');
  assert.equal(after.mtimeMs, before.mtimeMs, 'the first file was not touched');
  assert.deepEqual(listAll(join(c.downloads, 'jackin', 'X')), ['report-1.txt', 'report.txt'], 'no temporary file is left');
});

test('jackin export refuses each unsafe or invalid path with a stable code and writes nothing', async (t) => {
  const c = await startExportCapsule(t, 'R', { version: 1, export: { maxFileBytes: 1024, directories: { enabled: false } } });
  const ws = c.workspace;
  writeFileSync(join(ws, 'big.bin'), Buffer.alloc(2048));
  symlinkSync('/etc/hosts', join(ws, 'hosts-link'));
  symlinkSync('/etc', join(ws, 'etc-dir'));
  mkdirSync(join(ws, 'adir'));
  writeFileSync(join(ws, 'adir', 'x.txt'), 'x');
  execFileSync('mkfifo', [join(ws, 'pipe')]);
  const cases: Array<[string, string]> = [
    ['../../etc/passwd', 'E_POLICY_DENIED'],
    ['/etc/hostname', 'E_POLICY_DENIED'],
    ['hosts-link', 'E_POLICY_DENIED'],
    ['etc-dir/hosts', 'E_POLICY_DENIED'],
    ['adir', 'E_DIR_DISABLED'],
    ['pipe', 'E_NOT_REGULAR'],
    ['/dev/zero', 'E_POLICY_DENIED'],
    ['big.bin', 'E_TOO_LARGE'],
    ['missing.txt', 'E_NOT_FOUND'],
  ];
  const r = await c.jackin(['export', '--from', 'R', '--json', ...cases.map(([p]) => p)]);
  assert.equal(r.code, 1, 'non-zero exit when any path failed');
  const lines = r.stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  assert.deepEqual(
    lines.map((l) => [l['source'], l['code']]),
    cases,
  );
  for (const l of lines) {
    assert.equal(l['ok'], false);
    assert.equal(typeof l['message'], 'string');
  }
  assert.deepEqual(listAll(join(c.downloads, 'jackin', 'R')), [], 'nothing written, no temporary file');
  // A FIFO must not block: the paths after it were answered (above), and the capsule holds no reader on it,
  // not even one still waiting in open() for a writer (then a non-blocking open for writing would succeed).
  await pollUntil('the capsule to hold no reader on the FIFO', () => {
    try {
      closeSync(openSync(join(ws, 'pipe'), constants.O_WRONLY | constants.O_NONBLOCK));
      return false;
    } catch (e) {
      return (e as NodeJS.ErrnoException).code === 'ENXIO';
    }
  });
  // The host's record: what the policy or a cap said no to is refused, a missing file failed.
  const logged = (await readActions(c.home, 'R')).map((a) => [a.target, a.result]);
  assert.deepEqual(
    logged,
    cases.map(([p, code]) => [p, code === 'E_NOT_FOUND' ? 'failed' : 'refused']),
  );
});

test('symlink swap stress through the control channel: no exported byte comes from outside the roots', async (t) => {
  const c = await startExportCapsule(t, 'S');
  const outsideDir = mkdtempSync(join(tmpdir(), 'jackin-outside-'));
  t.after(() => rmSync(outsideDir, { recursive: true, force: true }));
  const secret = Buffer.from('OUTSIDE-SECRET\n'.repeat(100));
  writeFileSync(join(outsideDir, 'secret.txt'), secret);
  const allowed = Buffer.from('allowed content\n'.repeat(100));
  writeFileSync(join(c.workspace, 'allowed.txt'), allowed);
  symlinkSync('allowed.txt', join(c.workspace, 'swap'));
  // A separate process swaps the link atomically (rename over it) as fast as it can.
  const swapper = spawn(
    process.execPath,
    [
      '-e',
      `
    const fs = require('node:fs'); const ws = ${JSON.stringify(c.workspace)};
    const targets = ['allowed.txt', ${JSON.stringify(join(outsideDir, 'secret.txt'))}]; let i = 0;
    for (;;) { const tmp = ws + '/.swap-tmp'; try { fs.unlinkSync(tmp); } catch {} fs.symlinkSync(targets[i++ % 2], tmp); fs.renameSync(tmp, ws + '/swap'); }
  `,
    ],
    { stdio: 'ignore' },
  );
  const dir = join(c.downloads, 'stress');
  let ok = 0;
  let refused = 0;
  // Stopped here, not after the test: it writes in the workspace, which the capsule's cleanup removes first.
  try {
    // The race is on once the link has pointed outside at least once.
    await pollUntil('the swapper to point the link outside', () => readlinkSync(join(c.workspace, 'swap')) !== 'allowed.txt');
    // At least 60 exports, and on until both outcomes were seen: an export that ran while the link pointed
    // inside, and one refused because it pointed outside. Only one kind means the race did not happen.
    for (let i = 0; i < 60 || ((ok === 0 || refused === 0) && i < 600); i++) {
      try {
        const r = await exportFile({ path: 'swap' }, { connect: c.connect, directory: dir });
        assert.deepEqual(readFileSync(r.destination), allowed, 'an exported file holds only the allowed bytes');
        ok++;
      } catch (e) {
        assert.ok(e instanceof JackinError, String(e));
        assert.ok(['E_POLICY_DENIED', 'E_NOT_FOUND'].includes(e.code), `${e.code}: ${e.message}`);
        refused++;
      }
    }
  } finally {
    await stopChild(swapper, 'SIGKILL');
  }
  t.diagnostic(`${ok} exported, ${refused} refused`);
  assert.ok(ok > 0 && refused > 0, `both outcomes of the race: ${ok} exported, ${refused} refused`);
  const saved = listAll(dir);
  assert.equal(saved.length, ok, 'one file per export that succeeded');
  for (const f of saved) assert.deepEqual(readFileSync(join(dir, f)), allowed, f);
});

test('a directory exports as .tar.zst that GNU tar extracts identical', async (t) => {
  const c = await startExportCapsule(t, 'D');
  const root = join(c.workspace, 'tree');
  mkdirSync(join(root, 'nested', 'deeper'), { recursive: true });
  mkdirSync(join(root, 'empty'));
  writeFileSync(join(root, 'nested', 'deeper', 'a.bin'), randomBytes(3 * 1024 * 1024));
  writeFileSync(join(root, 'top.txt'), 'top\n');
  writeFileSync(join(root, 'nested', 'naïve-résumé-日本.txt'), 'non-ascii\n');
  const longDir = join(root, 'x'.repeat(60), 'y'.repeat(60));
  mkdirSync(longDir, { recursive: true });
  writeFileSync(join(longDir, 'long-name-file.txt'), 'long path\n');
  symlinkSync('../top.txt', join(root, 'nested', 'link-to-top'));
  execFileSync('mkfifo', [join(root, 'fifo-skipped')]);

  const r = await c.jackin(['export', '--from', 'D', 'tree', '--json']);
  assert.equal(r.code, 0, r.stderr);
  const line = JSON.parse(r.stdout.trim()) as { destination: string };
  assert.equal(line.destination, join(c.downloads, 'jackin', 'D', 'tree.tar.zst'));
  const out = mkdtempSync(join(tmpdir(), 'jackin-extract-'));
  t.after(() => rmSync(out, { recursive: true, force: true }));
  execFileSync('tar', ['--zstd', '-xf', line.destination, '-C', out]);
  assert.deepEqual(readdirSync(out), ['tree'], 'one top-level folder');
  unlinkSync(join(root, 'fifo-skipped')); // special files are skipped by design
  execFileSync('diff', ['-r', '--no-dereference', root, join(out, 'tree')]);
});

test('killing the capsule mid-transfer leaves no temporary and no final file', async (t) => {
  const c = await startExportCapsule(t, 'K');
  writeFileSync(join(c.workspace, 'huge.bin'), '');
  execFileSync('truncate', ['-s', '2G', join(c.workspace, 'huge.bin')]);
  const dir = join(c.downloads, 'killed');
  let killed = false;
  await assert.rejects(
    exportFile(
      { path: 'huge.bin' },
      {
        connect: c.connect,
        directory: dir,
        onProgress: (p) => {
          if (!killed && p.bytes > 8 * 1024 * 1024) {
            killed = true;
            c.child.kill('SIGKILL');
          }
        },
      },
    ),
    (e: unknown) => e instanceof JackinError && e.code === 'E_EXPORT_INTERRUPTED' && /nothing was saved/.test(e.message),
  );
  assert.ok(killed);
  assert.deepEqual(listAll(dir), []);
});

test('a full disk (small tmpfs) fails the export cleanly, before and during the transfer', async (t) => {
  const c = await startExportCapsule(t, 'F');
  const mnt = mkdtempSync(join(tmpdir(), 'jackin-tmpfs-'));
  execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=8m', 'tmpfs', mnt]);
  t.after(() => {
    execFileSync('umount', ['-l', mnt]);
    rmSync(mnt, { recursive: true, force: true });
  });
  writeFileSync(join(c.workspace, 'twenty.bin'), randomBytes(20 * 1024 * 1024));
  writeFileSync(join(c.workspace, 'four.bin'), randomBytes(4 * 1024 * 1024));
  // Up front: the free-space check refuses what cannot fit.
  const r = await c.jackin(['export', '--from', 'F', 'twenty.bin', '--to', join(mnt, 'a'), '--json']);
  assert.equal(r.code, 1);
  assert.equal((JSON.parse(r.stdout.trim()) as { code: string }).code, 'E_NO_SPACE');
  assert.deepEqual(listAll(join(mnt, 'a')), []);
  // During: something else fills the disk once the transfer began; the write fails with ENOSPC.
  const dir = join(mnt, 'b');
  let filled = false;
  await assert.rejects(
    exportFile(
      { path: 'four.bin' },
      {
        connect: c.connect,
        directory: dir,
        freeSpaceMargin: 0,
        onProgress: (p) => {
          if (filled || p.bytes !== 0) return;
          filled = true;
          try {
            writeFileSync(join(mnt, 'filler'), Buffer.alloc(8 * 1024 * 1024));
          } catch {
            // ENOSPC: the disk is now full, which is the point
          }
        },
      },
    ),
    (e: unknown) => e instanceof JackinError && e.code === 'E_NO_SPACE',
  );
  assert.deepEqual(listAll(dir), []);
});

test('jackin-capsule offer records an offer and writes nothing until jackin export --offered pulls it', async (t) => {
  const c = await startExportCapsule(t, 'O');
  const png = randomBytes(5000);
  writeFileSync(join(c.workspace, 'out.png'), png);
  execFileSync(process.execPath, [CAPSULE_BIN, 'offer', 'out.png'], { cwd: c.workspace, env: { ...c.env, JACKIN_RUN_DIR: c.runDir } });
  assert.deepEqual(listAll(join(c.downloads, 'jackin', 'O')), [], 'an offer writes nothing on its own');
  const r = await c.jackin(['export', '--from', 'O', '--offered', '--json']);
  assert.equal(r.code, 0, r.stderr);
  const line = JSON.parse(r.stdout.trim()) as { destination: string; sha256: string };
  assert.deepEqual(readFileSync(line.destination), png);
  assert.equal(line.sha256, sha(png));
});

test('a capsule that fails to load its policy names the key and does not start', (t) => {
  const base = mkdtempSync(join(tmpdir(), 'jackin-badpolicy-'));
  t.after(() => rmSync(base, { recursive: true, force: true }));
  const p = join(base, 'p.json');
  writeFileSync(p, JSON.stringify({ version: 1, export: { maxFileBytes: 'lots' } }));
  let stderr = '';
  try {
    execFileSync(process.execPath, [CAPSULE_BIN, 'serve', '--run-dir', join(base, 'run'), '--policy', p, '--', 'true'], { stdio: 'pipe' });
    assert.fail('serve started with an invalid policy');
  } catch (e) {
    stderr = String((e as { stderr?: Buffer }).stderr ?? '');
  }
  assert.match(stderr, /E_POLICY_INVALID/);
  assert.match(stderr, /export\.maxFileBytes/);
});

test('a file that changes while it streams fails with E_CHANGED_WHILE_READING and writes nothing', async (t) => {
  const c = await startExportCapsule(t, 'C');
  const file = join(c.workspace, 'growing.bin');
  writeFileSync(file, randomBytes(64 * 1024 * 1024));
  const dir = join(c.downloads, 'changed');
  let appended = false;
  await assert.rejects(
    exportFile(
      { path: 'growing.bin' },
      {
        connect: c.connect,
        directory: dir,
        onProgress: (p) => {
          if (!appended && p.bytes > 0) {
            appended = true;
            writeFileSync(file, 'more', { flag: 'a' });
          }
        },
      },
    ),
    (e: unknown) => e instanceof JackinError && e.code === 'E_CHANGED_WHILE_READING',
  );
  assert.deepEqual(listAll(dir), []);
});

test('concurrent exports from one capsule each arrive with the right digest (chunk buffers are shared)', async (t) => {
  const c = await startExportCapsule(t, 'C');
  const files = ['a.bin', 'b.bin', 'c.bin'].map((name) => {
    const content = randomBytes(24 * 1024 * 1024 + 7);
    writeFileSync(join(c.workspace, name), content);
    return { name, content };
  });
  const results = await Promise.all(files.map((f) => c.jackin(['export', '--from', 'C', f.name, '--json'])));
  for (const [i, r] of results.entries()) {
    assert.equal(r.code, 0, `${files[i]!.name}: ${r.stdout} ${r.stderr}`);
    const line = JSON.parse(r.stdout.trim()) as Record<string, unknown>;
    assert.equal(line['sha256'], sha(files[i]!.content));
    assert.deepEqual(readFileSync(line['destination'] as string), files[i]!.content);
  }
});

test('a host that leaves while its directory is archived (no streamSize) leaves no descriptor open in the capsule', async (t) => {
  const c = await startExportCapsule(t, 'L');
  const tree = join(c.workspace, 'tree');
  mkdirSync(tree);
  for (let i = 0; i < 40; i++) writeFileSync(join(tree, `f${i}.bin`), randomBytes(1024 * 1024));
  const pid = c.child.pid!;
  const archives = (): string[] =>
    readdirSync(`/proc/${pid}/fd`).flatMap((fd) => {
      try {
        const target = readlinkSync(`/proc/${pid}/fd/${fd}`);
        return target.includes('.archive-') ? [target] : [];
      } catch {
        return [];
      }
    });
  const address = socketAddress(c.socket);
  const sock = connect(address.address);
  await new Promise<void>((resolve, reject) => sock.once('connect', resolve).once('error', reject)).finally(address.release);
  // An older host's request (no streamSize): the capsule archives the whole tree before it replies.
  sock.write(encodeControlMessage({ method: 'export', path: 'tree' }));
  await pollUntil('the capsule to start archiving', () => archives().length > 0, { timeoutMs: 10_000 });
  sock.destroy();
  await pollUntil('the archive descriptor to be closed', () => archives().length === 0, { timeoutMs: 10_000, last: archives });
});
