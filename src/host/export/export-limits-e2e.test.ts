/**
 * The host's limits on an export, against a capsule that lies or stalls: the published name's extension
 * comes from the requested path, a trickling export aborts, the host cap applies before any byte is
 * written, and the partial files of interrupted exports (even of a `kill -9`ed jackin) are removed by the
 * next export into the same directory.
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { pollUntil } from '../../../test/helpers/poll.ts';
import { hasCode } from '../../errors.ts';
import { ControlMessageDecoder, encodeControlMessage, encodeServerFrame } from '../../protocol/index.ts';
import { connectSocket, socketTransport } from '../../transport/socket.ts';
import { socketAddress } from '../../transport/socket-address.ts';
import { exportFile } from './export-client.ts';
import { DEFAULT_HOST_EXPORT_CAP, hostExportCap, removeStalePartials, STALE_PARTIAL_AGE_MS } from './export-sink.ts';
import { JACKIN_BIN } from '../../../test/helpers/jackin-cli.ts';

const body = Buffer.from('hello export\n');
const digest = createHash('sha256').update(body).digest();

type Script = (s: Socket, request: { path: string }) => void;

/** A capsule on a real socket at `<home>/sockets/<name>/jackin.sock` running `script` for each export request. */
async function fakeCapsule(t: TestContext, script: Script) {
  const base = mkdtempSync(join(tmpdir(), 'jackin-export-limits-'));
  const home = join(base, 'home');
  const runDir = join(home, 'sockets', 'fake');
  mkdirSync(runDir, { recursive: true, mode: 0o700 });
  const path = join(runDir, 'jackin.sock');
  const sockets = new Set<Socket>();
  const server = createServer((s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    s.on('error', () => undefined);
    const d = new ControlMessageDecoder();
    s.on('data', (chunk) => {
      for (const m of d.push(chunk)) script(s, m as { path: string });
    });
  });
  // Through its directory when the path is longer than a socket address holds (a long TMPDIR).
  const address = socketAddress(path);
  await new Promise<void>((r) => server.listen(address.address, r)).finally(address.release);
  t.after(() => {
    for (const s of sockets) s.destroy();
    server.close();
    rmSync(base, { recursive: true, force: true });
  });
  const dest = join(base, 'dest');
  return { home, dest, connect: async () => socketTransport(await connectSocket(path), path) };
}

/** Answers with a whole, valid export of `body`, but suggests `name` for it. */
const answerAs =
  (name: string, kind: 'file' | 'directory' = 'file'): Script =>
  (s, req) => {
    s.end(
      Buffer.concat([
        encodeControlMessage({ ok: true, exportId: '9', name, size: body.length, kind }),
        encodeServerFrame({ type: 'FileExportStart', exportId: 9n, size: body.length, source: req.path, name, reveal: false, open: true }),
        encodeServerFrame({ type: 'FileExportChunk', exportId: 9n, offset: 0, bytes: body }),
        encodeServerFrame({ type: 'FileExportEnd', exportId: 9n, sha256: digest }),
      ]),
    );
  };

/** Sends the reply and the start of a big export, then one byte every 20 ms for ever. */
const trickle: Script = (s, req) => {
  s.write(encodeControlMessage({ ok: true, exportId: '3', name: 'big.bin', size: 1_000_000, kind: 'file' }));
  s.write(encodeServerFrame({ type: 'FileExportStart', exportId: 3n, size: 1_000_000, source: req.path, name: 'big.bin', reveal: false, open: false }));
  let offset = 0;
  const timer = setInterval(() => {
    if (s.destroyed) return clearInterval(timer);
    s.write(encodeServerFrame({ type: 'FileExportChunk', exportId: 3n, offset: offset++, bytes: Buffer.from('x') }));
  }, 20);
  s.on('close', () => clearInterval(timer));
};

test("the published name keeps the requested path's extension, whatever name the capsule suggests", async (t) => {
  const f1 = await fakeCapsule(t, answerAs('invoicetxt.exe'));
  const r1 = await exportFile({ path: 'docs/invoice.txt', mode: 'open' }, { connect: f1.connect, directory: f1.dest });
  assert.equal(basename(r1.destination), 'invoice.txt');
  const f2 = await fakeCapsule(t, answerAs('x.desktop', 'directory'));
  const r2 = await exportFile({ path: 'out/' }, { connect: f2.connect, directory: f2.dest });
  assert.equal(basename(r2.destination), 'out.tar.zst');
  // For `.` the capsule names the directory; the archive extension is still the host's.
  const f3 = await fakeCapsule(t, answerAs('project.desktop', 'directory'));
  const r3 = await exportFile({ path: '.' }, { connect: f3.connect, directory: f3.dest });
  assert.equal(basename(r3.destination), 'project.desktop.tar.zst');
});

test('an export that trickles fails with E_EXPORT_STALLED and publishes nothing', async (t) => {
  const f = await fakeCapsule(t, trickle);
  await assert.rejects(
    exportFile({ path: 'big.bin' }, { connect: f.connect, directory: f.dest, minProgress: { bytes: 4096, windowMs: 400 } }),
    (e: unknown) => hasCode(e, 'E_EXPORT_STALLED') && /less than 4096 bytes arrived in 0.4 s/u.test((e as Error).message),
  );
  assert.deepEqual(readdirSync(f.dest), []);
});

test('JACKIN_EXPORT_MAX_BYTES caps an export before any byte is written', async (t) => {
  assert.equal(hostExportCap({}), DEFAULT_HOST_EXPORT_CAP);
  assert.equal(hostExportCap({ JACKIN_EXPORT_MAX_BYTES: '1000' }), 1000);
  assert.equal(hostExportCap({ JACKIN_EXPORT_MAX_BYTES: '8 GiB' }), 8 * 1024 ** 3);
  assert.throws(
    () => hostExportCap({ JACKIN_EXPORT_MAX_BYTES: 'lots' }),
    (e: unknown) => hasCode(e, 'E_EXPORT_CONFIG'),
  );
  const f = await fakeCapsule(t, answerAs('a.txt'));
  const saved = process.env['JACKIN_EXPORT_MAX_BYTES'];
  process.env['JACKIN_EXPORT_MAX_BYTES'] = String(body.length - 1);
  try {
    await assert.rejects(exportFile({ path: 'a.txt' }, { connect: f.connect, directory: f.dest }), (e: unknown) => hasCode(e, 'E_TOO_LARGE'));
    // Refused before the destination was even created.
    assert.equal(existsSync(f.dest), false);
    process.env['JACKIN_EXPORT_MAX_BYTES'] = String(body.length);
    assert.equal(basename((await exportFile({ path: 'a.txt' }, { connect: f.connect, directory: f.dest })).destination), 'a.txt');
  } finally {
    if (saved === undefined) delete process.env['JACKIN_EXPORT_MAX_BYTES'];
    else process.env['JACKIN_EXPORT_MAX_BYTES'] = saved;
  }
});

test('removeStalePartials removes only our own leftovers whose writer is gone or long idle', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'jackin-partials-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const dead = spawnSync('true').pid ?? 0;
  const names = {
    dead: `.a.txt.jackin-partial-${dead}-0123abcd`,
    ours: `.b.txt.jackin-partial-${process.pid}-0123abcd`,
    live: `.c.txt.jackin-partial-${process.ppid}-0123abcd`,
    liveIdle: `.d.txt.jackin-partial-${process.ppid}-4567abcd`,
    legacyOld: '.e.txt.jackin-partial-89abcdef',
    legacyNew: '.f.txt.jackin-partial-89abcdef',
    other: 'g.txt.jackin-partial-0123abcd',
    link: `.h.txt.jackin-partial-${dead}-0123abcd`,
    dir: `.i.txt.jackin-partial-${dead}-0123abcd`,
  };
  for (const [k, n] of Object.entries(names)) {
    if (k === 'link') symlinkSync(join(dir, names.ours), join(dir, n));
    else if (k === 'dir') mkdirSync(join(dir, n));
    else writeFileSync(join(dir, n), 'partial');
  }
  const old = (Date.now() - STALE_PARTIAL_AGE_MS - 60_000) / 1000;
  utimesSync(join(dir, names.legacyOld), old, old);
  utimesSync(join(dir, names.liveIdle), old, old);
  return removeStalePartials(dir).then((removed) => {
    assert.equal(removed, 3);
    assert.deepEqual(readdirSync(dir).sort(), [names.dir, names.link, names.ours, names.live, names.legacyNew, names.other].sort());
  });
});

test('after kill -9 of jackin export, the next export into the directory removes its partial file', async (t) => {
  let slow = true;
  const f = await fakeCapsule(t, (s, req) => (slow ? trickle(s, req) : answerAs('a.txt')(s, req)));
  const env = { ...process.env, JACKIN_HOME: f.home };
  const child = spawn(process.execPath, [JACKIN_BIN, 'export', '--from', 'fake', '--to', f.dest, 'big.bin'], { env, stdio: 'ignore' });
  t.after(() => child.kill('SIGKILL'));
  const partial = await pollUntil(
    'jackin export to create its partial file',
    () => {
      if (child.exitCode !== null) throw new Error(`jackin export exited with ${child.exitCode} before writing`);
      try {
        return readdirSync(f.dest).find((n) => n.includes('.jackin-partial-'));
      } catch {
        return undefined;
      }
    },
    { timeoutMs: 20_000 },
  );
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGKILL');
  await exited;
  assert.ok(readdirSync(f.dest).includes(partial));
  slow = false;
  await exportFile({ path: 'a.txt' }, { connect: f.connect, directory: f.dest });
  assert.deepEqual(readdirSync(f.dest), ['a.txt']);
});
