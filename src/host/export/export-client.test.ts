import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import type { Socket } from 'node:net';
import { join } from 'node:path';
import { JackinError } from '../../errors.ts';
import { encodeControlMessage, encodeServerFrame, OFFERS_METHOD, type ServerFrame } from '../../protocol/index.ts';
import { connectSocket, connectSocketTransport, socketTransport } from '../../transport/socket.ts';
import type { Connect, Transport } from '../../transport/transport.ts';
import { startFakeCapsule } from '../../../test/helpers/fake-capsule.ts';
import { exportFile } from './export-client.ts';
import { controlCall } from '../../transport/control-call.ts';

/** A fake capsule (test/helpers/fake-capsule.ts): answers every control request with `script` (a reply, then frames), then closes or hangs. */
async function fakeCapsule(t: TestContext, script: (s: Socket) => void) {
  const fake = await startFakeCapsule(t, { control: (s) => script(s) });
  // As the real connects do (src/cli/export-command.ts): a socket read into the lent buffer when asked.
  const connect: Connect = (o) => connectSocketTransport(fake.socketPath, o);
  // As a relay does: the stream's own reads whatever was asked.
  const streamed: Connect = async () => socketTransport(await connectSocket(fake.socketPath), fake.socketPath);
  return { connect, streamed, dest: join(fake.dir, 'dest') };
}

const body = Buffer.from('hello export\n');
const digest = createHash('sha256').update(body).digest();
const frames = (_id: bigint, f: Array<ServerFrame>) => Buffer.concat(f.map((x) => encodeServerFrame(x)));
const start = (id: bigint, size = body.length): ServerFrame => ({
  type: 'FileExportStart',
  exportId: id,
  size,
  source: 'a.txt',
  name: 'a.txt',
  reveal: false,
  open: false,
});

function files(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

test('exportFile: reply, Start, Chunk, End in one write become a verified file', async (t) => {
  const f = await fakeCapsule(t, (s) => {
    s.end(
      Buffer.concat([
        encodeControlMessage({ ok: true, exportId: '7' }),
        frames(7n, [start(7n), { type: 'FileExportChunk', exportId: 7n, offset: 0, bytes: body }, { type: 'FileExportEnd', exportId: 7n, sha256: digest }]),
      ]),
    );
  });
  const r = await exportFile({ path: 'a.txt' }, { connect: f.connect, directory: f.dest });
  assert.deepEqual(readFileSync(r.destination), body);
  assert.equal(r.sha256, digest.toString('hex'));
});

test('exportFile: a wrong digest is E_DIGEST_MISMATCH and leaves nothing', async (t) => {
  const f = await fakeCapsule(t, (s) => {
    s.end(
      Buffer.concat([
        encodeControlMessage({ ok: true, exportId: '1' }),
        frames(1n, [
          start(1n),
          { type: 'FileExportChunk', exportId: 1n, offset: 0, bytes: body },
          { type: 'FileExportEnd', exportId: 1n, sha256: Buffer.alloc(32) },
        ]),
      ]),
    );
  });
  await assert.rejects(
    exportFile({ path: 'a.txt' }, { connect: f.connect, directory: f.dest }),
    (e: unknown) => e instanceof JackinError && e.code === 'E_DIGEST_MISMATCH',
  );
  assert.deepEqual(files(f.dest), []);
});

test('exportFile: a short stream (End before all bytes, or a close) leaves nothing', async (t) => {
  const half = body.subarray(0, 5);
  const f1 = await fakeCapsule(t, (s) => {
    s.end(
      Buffer.concat([
        encodeControlMessage({ ok: true, exportId: '2' }),
        frames(2n, [start(2n), { type: 'FileExportChunk', exportId: 2n, offset: 0, bytes: half }, { type: 'FileExportEnd', exportId: 2n, sha256: digest }]),
      ]),
    );
  });
  await assert.rejects(
    exportFile({ path: 'a.txt' }, { connect: f1.connect, directory: f1.dest }),
    (e: unknown) => e instanceof JackinError && e.code === 'E_TRANSFER_SIZE_MISMATCH',
  );
  assert.deepEqual(files(f1.dest), []);
  const f2 = await fakeCapsule(t, (s) => {
    s.end(
      Buffer.concat([
        encodeControlMessage({ ok: true, exportId: '3' }),
        frames(3n, [start(3n), { type: 'FileExportChunk', exportId: 3n, offset: 0, bytes: half }]),
      ]),
    );
  });
  await assert.rejects(
    exportFile({ path: 'a.txt' }, { connect: f2.connect, directory: f2.dest }),
    (e: unknown) => e instanceof JackinError && e.code === 'E_EXPORT_INTERRUPTED' && /after 5 of 13 bytes/.test(e.message),
  );
  assert.deepEqual(files(f2.dest), []);
});

test('exportFile: frames for another export id, and an in-stream error Notice, fail with nothing written', async (t) => {
  const f1 = await fakeCapsule(t, (s) => {
    s.end(Buffer.concat([encodeControlMessage({ ok: true, exportId: '4' }), frames(5n, [start(5n)])]));
  });
  await assert.rejects(
    exportFile({ path: 'a.txt' }, { connect: f1.connect, directory: f1.dest }),
    (e: unknown) => e instanceof JackinError && e.code === 'E_EXPORT_PROTOCOL',
  );
  const f2 = await fakeCapsule(t, (s) => {
    s.end(
      Buffer.concat([
        encodeControlMessage({ ok: true, exportId: '6' }),
        frames(6n, [start(6n), { type: 'Notice', level: 'error', text: 'E_CHANGED_WHILE_READING: a.txt changed' }]),
      ]),
    );
  });
  await assert.rejects(
    exportFile({ path: 'a.txt' }, { connect: f2.connect, directory: f2.dest }),
    (e: unknown) => e instanceof JackinError && e.code === 'E_CHANGED_WHILE_READING',
  );
  assert.deepEqual(files(f2.dest), []);
});

test('exportFile: an ok:false reply keeps its code; an abort removes the temporary file', async (t) => {
  const f1 = await fakeCapsule(t, (s) => s.end(encodeControlMessage({ ok: false, code: 'E_POLICY_DENIED', message: 'no' })));
  await assert.rejects(
    exportFile({ path: 'x' }, { connect: f1.connect, directory: f1.dest }),
    (e: unknown) => e instanceof JackinError && e.code === 'E_POLICY_DENIED',
  );
  // A capsule that sends Start and part of the data, then stalls: the operator interrupts.
  const f2 = await fakeCapsule(t, (s) => {
    s.write(
      Buffer.concat([
        encodeControlMessage({ ok: true, exportId: '8' }),
        frames(8n, [start(8n), { type: 'FileExportChunk', exportId: 8n, offset: 0, bytes: body.subarray(0, 4) }]),
      ]),
    );
  });
  const ac = new AbortController();
  const p = exportFile(
    { path: 'a.txt' },
    { connect: f2.connect, directory: f2.dest, signal: ac.signal, onProgress: (pr) => pr.bytes === 4 && setImmediate(() => ac.abort()) },
  );
  await assert.rejects(p, (e: unknown) => e instanceof JackinError && e.code === 'E_EXPORT_ABORTED');
  assert.deepEqual(files(f2.dest), []);
});

test('exportFile: an interrupt while the last frames are handled stops before the publish: nothing saved, as it says', async (t) => {
  // The last chunk and End arrive in one read; the operator interrupts as the last chunk is counted.
  const f = await fakeCapsule(t, (s) => {
    s.end(
      Buffer.concat([
        encodeControlMessage({ ok: true, exportId: '11' }),
        frames(11n, [start(11n), { type: 'FileExportChunk', exportId: 11n, offset: 0, bytes: body }, { type: 'FileExportEnd', exportId: 11n, sha256: digest }]),
      ]),
    );
  });
  const ac = new AbortController();
  const p = exportFile(
    { path: 'a.txt' },
    { connect: f.connect, directory: f.dest, signal: ac.signal, onProgress: (pr) => pr.bytes === body.length && ac.abort() },
  );
  await assert.rejects(p, (e: unknown) => e instanceof JackinError && e.code === 'E_EXPORT_ABORTED' && /nothing was saved/.test(e.message));
  assert.deepEqual(files(f.dest), [], 'the message says nothing was saved: nothing is there');
});

test('controlCall returns an ok reply as its method reads it and throws the code of a refusal', async (t) => {
  const f = await fakeCapsule(t, (s) => s.end(encodeControlMessage({ ok: true, file: '/w/out.png', url: null })));
  assert.deepEqual(await controlCall(f.connect, OFFERS_METHOD, {}), { file: '/w/out.png', url: null });
  const g = await fakeCapsule(t, (s) => s.end(encodeControlMessage({ ok: false, code: 'E_UNKNOWN_METHOD', message: 'x' })));
  await assert.rejects(controlCall(g.connect, OFFERS_METHOD, {}), (e: unknown) => e instanceof JackinError && e.code === 'E_UNKNOWN_METHOD');
});

for (const how of ['borrowed', 'streamed'] as const) {
  test(`exportFile: a multi-chunk file sent in 64 KiB slices arrives byte-identical (pooled frame buffers, ${how} reads)`, async (t) => {
    const data = randomBytes(5 * 1024 * 1024 + 12345);
    const sha = createHash('sha256').update(data).digest();
    const f = await fakeCapsule(t, (s) => {
      const parts: Buffer[] = [encodeControlMessage({ ok: true, exportId: '9' }), encodeServerFrame(start(9n, data.length))];
      for (let at = 0; at < data.length; at += 1024 * 1024) {
        parts.push(encodeServerFrame({ type: 'FileExportChunk', exportId: 9n, offset: at, bytes: data.subarray(at, at + 1024 * 1024) }));
      }
      parts.push(encodeServerFrame({ type: 'FileExportEnd', exportId: 9n, sha256: sha }));
      const all = Buffer.concat(parts);
      const send = (at: number): void => {
        if (at >= all.length) {
          s.end();
          return;
        }
        s.write(all.subarray(at, at + 64 * 1024), () => setImmediate(() => send(at + 64 * 1024)));
      };
      send(0);
    });
    let used: Transport | undefined;
    const connect: Connect = async (o) => (used = await (how === 'borrowed' ? f.connect : f.streamed)(o));
    const r = await exportFile({ path: 'big.bin' }, { connect, directory: f.dest });
    assert.ok(readFileSync(r.destination).equals(data));
    assert.equal(r.sha256, sha.toString('hex'));
    assert.equal(used?.borrowedReads !== undefined, how === 'borrowed', 'the reads went as the transport said');
  });
}

test('exportFile: a streamed export (bound in Start, exact size in FileExportLength) is verified and kept; every misuse of the length leaves nothing', async (t) => {
  const chunk: ServerFrame = { type: 'FileExportChunk', exportId: 11n, offset: 0, bytes: body };
  const end: ServerFrame = { type: 'FileExportEnd', exportId: 11n, sha256: digest };
  const length = (size: number): ServerFrame => ({ type: 'FileExportLength', exportId: 11n, size });
  const run = async (reply: Record<string, unknown>, f: ServerFrame[]) => {
    let request: Record<string, unknown> | undefined;
    const cap = await fakeCapsule(t, (s) => {
      s.end(Buffer.concat([encodeControlMessage({ ok: true, exportId: '11', ...reply }), frames(11n, f)]));
    });
    const connect = async () => {
      const tr = await cap.connect();
      const write = tr.writable.write.bind(tr.writable);
      tr.writable.write = ((b: Buffer) => {
        request = JSON.parse(b.subarray(4).toString('utf8')) as Record<string, unknown>;
        return write(b);
      }) as typeof tr.writable.write;
      return tr;
    };
    const result = exportFile({ path: 'dir' }, { connect, directory: cap.dest });
    return { result, dest: cap.dest, request: () => request };
  };
  const ok = await run({ streamed: true }, [start(11n, 4096), chunk, length(body.length), end]);
  const r = await ok.result;
  assert.deepEqual(readFileSync(r.destination), body);
  assert.equal(ok.request()?.['streamSize'], true, 'the host asks for a streamed size');

  const bad: Array<[string, Record<string, unknown>, ServerFrame[], string]> = [
    ['no FileExportLength on a streamed export', { streamed: true }, [start(11n, 4096), chunk, end], 'E_EXPORT_PROTOCOL'],
    ['a length that is not what arrived', { streamed: true }, [start(11n, 4096), chunk, length(body.length + 1), end], 'E_TRANSFER_SIZE_MISMATCH'],
    ['more bytes than the declared bound', { streamed: true }, [start(11n, 8), chunk, length(body.length), end], 'E_TRANSFER_SIZE_MISMATCH'],
    ['a length on an export of exact size', {}, [start(11n), chunk, length(body.length), end], 'E_EXPORT_PROTOCOL'],
    [
      'a chunk after the length',
      { streamed: true },
      [start(11n, 4096), chunk, length(body.length), { ...chunk, offset: body.length }, end],
      'E_EXPORT_PROTOCOL',
    ],
  ];
  for (const [why, reply, f, code] of bad) {
    const b = await run(reply, f);
    await assert.rejects(b.result, (e: unknown) => e instanceof JackinError && e.code === code, why);
    assert.deepEqual(files(b.dest), [], why);
  }
});
