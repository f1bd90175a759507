import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ExportSink } from './export-sink.ts';
import { JackinError } from '../../errors.ts';

let base = '';
let n = 0;
function freshDir(): string {
  return join(base, `d${n++}`, 'jackin', 'box');
}

const sha = (b: Uint8Array): Buffer => createHash('sha256').update(b).digest();

async function send(sink: ExportSink, data: Buffer, chunk = 64 * 1024): Promise<void> {
  for (let at = 0; at < data.length; at += chunk) await sink.write(at, data.subarray(at, at + chunk));
}

async function rejectsWith(p: Promise<unknown>, code: string): Promise<void> {
  await assert.rejects(p, (e: unknown) => {
    assert.ok(e instanceof JackinError, String(e));
    assert.equal(e.code, code, e.message);
    return true;
  });
}

before(() => {
  base = mkdtempSync(join(tmpdir(), 'jk-sink-'));
});
after(() => rmSync(base, { recursive: true, force: true }));

for (const inlineWrites of [false, true]) {
  test(`a verified export is published 0600 in a 0700 directory, byte-identical, with no temp left (writes ${inlineWrites ? 'on the event loop' : 'in the pool'})`, async () => {
    const dir = freshDir();
    const data = randomBytes(3 * 1024 * 1024 + 5);
    const sink = new ExportSink({ directory: dir, inlineWrites });
    assert.equal(await sink.begin('report.txt', data.length), 'report.txt');
    await send(sink, data);
    const r = await sink.finish(sha(data));
    assert.equal(r.destination, join(dir, 'report.txt'));
    assert.equal(r.bytes, data.length);
    assert.equal(r.sha256hex, sha(data).toString('hex'));
    assert.deepEqual(readFileSync(r.destination), data);
    assert.equal(statSync(r.destination).mode & 0o777, 0o600);
    assert.equal(statSync(dir).mode & 0o777, 0o700);
    assert.deepEqual(readdirSync(dir), ['report.txt']);
  });
}

test('an existing name is never replaced: the next export goes to name-1, name-2', async () => {
  const dir = freshDir();
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'out.tar.zst'), 'original');
  const results: string[] = [];
  for (const body of ['one', 'two']) {
    const data = Buffer.from(body);
    const sink = new ExportSink({ directory: dir });
    await sink.begin('out.tar.zst', data.length);
    await sink.write(0, data);
    results.push((await sink.finish(sha(data).toString('hex'))).destination);
  }
  assert.deepEqual(results, [join(dir, 'out-1.tar.zst'), join(dir, 'out-2.tar.zst')]);
  assert.equal(readFileSync(join(dir, 'out.tar.zst'), 'utf8'), 'original');
  assert.equal(readFileSync(join(dir, 'out-1.tar.zst'), 'utf8'), 'one');
  assert.deepEqual(readdirSync(dir).sort(), ['out-1.tar.zst', 'out-2.tar.zst', 'out.tar.zst']);
});

test('the capsule name is sanitised before anything is created', async () => {
  const dir = freshDir();
  const sink = new ExportSink({ directory: dir });
  assert.equal(await sink.begin('../../.bashrc', 1), 'bashrc');
  await sink.write(0, Buffer.from('x'));
  assert.equal((await sink.finish(sha(Buffer.from('x')))).destination, join(dir, 'bashrc'));
});

test('failures leave no temporary and no final file', async (t) => {
  const data = Buffer.from('hello world');
  const cases: Array<[string, string, (s: ExportSink) => Promise<unknown>]> = [
    [
      'digest mismatch',
      'E_DIGEST_MISMATCH',
      async (s) => {
        await s.write(0, data);
        return s.finish(sha(Buffer.from('other')));
      },
    ],
    [
      'short stream',
      'E_TRANSFER_SIZE_MISMATCH',
      async (s) => {
        await s.write(0, data.subarray(0, 5));
        return s.finish(sha(data));
      },
    ],
    [
      'overlong stream',
      'E_TRANSFER_SIZE_MISMATCH',
      async (s) => {
        await s.write(0, data);
        return s.write(data.length, Buffer.from('!'));
      },
    ],
    [
      'offset gap',
      'E_TRANSFER_OFFSET',
      async (s) => {
        await s.write(0, data.subarray(0, 5));
        return s.write(6, data.subarray(6));
      },
    ],
    [
      'offset replay',
      'E_TRANSFER_OFFSET',
      async (s) => {
        await s.write(0, data.subarray(0, 5));
        return s.write(0, data.subarray(0, 5));
      },
    ],
    [
      'abort',
      'E_EXPORT_ABORTED',
      async (s) => {
        await s.write(0, data.subarray(0, 5));
        await s.abort('capsule went away');
        return s.finish(sha(data));
      },
    ],
  ];
  for (const [label, code, run] of cases) {
    await t.test(label, async () => {
      const dir = freshDir();
      const sink = new ExportSink({ directory: dir });
      await sink.begin('file.txt', data.length);
      assert.equal(readdirSync(dir).length, 1, 'a temporary file exists while writing');
      assert.match(readdirSync(dir)[0] ?? '', /^\.file\.txt\.jackin-partial-\d+-[0-9a-f]{8}$/);
      await rejectsWith(run(sink), code);
      await sink.abort();
      assert.deepEqual(readdirSync(dir), []);
    });
  }
});

test('the host cap applies whatever the capsule declares', async () => {
  const dir = freshDir();
  await rejectsWith(new ExportSink({ directory: dir, maxBytes: 10 }).begin('big.bin', 11), 'E_TOO_LARGE');
  assert.equal(existsSync(dir), false, 'nothing is created for a refused export');
});

for (const inlineWrites of [false, true]) {
  test(`full disk: a small tmpfs refuses up front, and a disk that fills mid-write leaves nothing (writes ${inlineWrites ? 'on the event loop' : 'in the pool'})`, async () => {
    const mnt = mkdtempSync(join(tmpdir(), 'jk-tmpfs-'));
    const m = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', mnt], { encoding: 'utf8' });
    assert.equal(m.status, 0, `mount -t tmpfs failed (the test needs root): ${m.stderr}`);
    try {
      const dir = join(mnt, 'jackin', 'box');
      // Declared larger than the filesystem: refused before a byte is written.
      await rejectsWith(new ExportSink({ directory: dir }).begin('huge.bin', 2 * 1024 * 1024), 'E_NO_SPACE');
      assert.deepEqual(readdirSync(dir), []);

      // The check passes, then something else fills the disk: the write fails and the temp file goes.
      const sink = new ExportSink({ directory: dir, freeSpaceMargin: 0, inlineWrites });
      const data = randomBytes(600 * 1024);
      await sink.begin('fits.bin', data.length);
      const filler = spawnSync('dd', ['if=/dev/zero', `of=${join(mnt, 'filler')}`, 'bs=64k'], { encoding: 'utf8' });
      assert.notEqual(filler.status, 0, 'dd should stop at a full disk');
      await rejectsWith(send(sink, data), 'E_NO_SPACE');
      await rejectsWith(sink.finish(sha(data)), 'E_NO_SPACE');
      assert.deepEqual(readdirSync(dir), []);
    } finally {
      const u = spawnSync('umount', [mnt], { encoding: 'utf8' });
      assert.equal(u.status, 0, u.stderr);
      rmSync(mnt, { recursive: true, force: true });
    }
  });
}
