import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { appendFileSync, mkdtempSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hasCode, type ErrorCode } from '../../errors.ts';
import { ControlMessageDecoder, createStageClientDecoder, encodeControlMessage, encodeStageServerFrame, type StageServerFrame } from '../../protocol/index.ts';
import { connectSocket, socketTransport } from '../../transport/socket.ts';
import { stageFile } from './stage-client.ts';
import { openStageSource } from './stage-source.ts';

/**
 * A hostile capsule on a real Unix socket: replies ok to `stage`, reads the host's frames until
 * FileStageEnd, then answers `answer(transferId)`.
 */
async function hostileCapsule(t: { after: (fn: () => void) => void }, answer: (id: bigint, bytes: number) => StageServerFrame | Buffer): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'jackin-stage-client-'));
  const path = join(dir, 'capsule.sock');
  const sockets = new Set<Socket>();
  const server = createServer((s) => {
    sockets.add(s);
    const control = new ControlMessageDecoder();
    const frames = createStageClientDecoder();
    let replied = false;
    let bytes = 0;
    s.on('data', (chunk: Buffer) => {
      if (!replied) {
        if (control.push(chunk).length === 0) return;
        replied = true;
        s.write(encodeControlMessage({ ok: true, transferId: '42', chunkBytes: 1048576 }));
        chunk = control.takeRest();
      }
      for (const item of frames.push(chunk)) {
        if (!item.ok) continue;
        if (item.frame.type === 'FileStageChunk') bytes += item.frame.bytes.length;
        else {
          const a = answer(42n, bytes);
          s.end(Buffer.isBuffer(a) ? a : encodeStageServerFrame(a));
        }
      }
    });
    s.on('error', () => undefined);
  });
  await new Promise<void>((r) => server.listen(path, r));
  t.after(() => {
    for (const s of sockets) s.destroy();
    server.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return path;
}

async function stageThrough(t: { after: (fn: () => void) => void }, sock: string): Promise<unknown> {
  const dir = mkdtempSync(join(tmpdir(), 'jackin-stage-src-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'a.txt'), 'hello');
  const src = await openStageSource(join(dir, 'a.txt'), 1 << 20);
  try {
    return await stageFile(src, { connect: async () => socketTransport(await connectSocket(sock), sock) });
  } finally {
    await src.handle.close();
  }
}

test('stage client: a capsule that answers a plain path for the bytes sent is believed', async (t) => {
  const sock = await hostileCapsule(t, (id, bytes) => ({ type: 'FileStaged', transferId: id, bytes, path: '/jackin/run/files/0011223344556677/a.txt' }));
  const r = (await stageThrough(t, sock)) as { destination: string; bytes: number; sha256: string };
  assert.equal(r.destination, '/jackin/run/files/0011223344556677/a.txt');
  assert.equal(r.bytes, 5);
  assert.equal(r.sha256, '2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824');
});

test('stage client: a hostile capsule answer (escape sequences, a relative path, another id or size, silence) is refused', async (t) => {
  const cases: Array<[string, (id: bigint, bytes: number) => StageServerFrame | Buffer, ErrorCode]> = [
    ['escape sequence', (id, bytes) => ({ type: 'FileStaged', transferId: id, bytes, path: '/x/\x1b]52;c;aGk=\x07a.txt' }), 'E_TRANSFER_PROTOCOL'],
    ['relative path', (id, bytes) => ({ type: 'FileStaged', transferId: id, bytes, path: 'files/a.txt' }), 'E_TRANSFER_PROTOCOL'],
    ['another transfer', (id, bytes) => ({ type: 'FileStaged', transferId: id + 1n, bytes, path: '/x/a.txt' }), 'E_TRANSFER_PROTOCOL'],
    ['another size', (id) => ({ type: 'FileStaged', transferId: id, bytes: 4, path: '/x/a.txt' }), 'E_TRANSFER_PROTOCOL'],
    ['a failure notice', () => ({ type: 'Notice', level: 'error', text: 'E_NO_SPACE: full' }), 'E_NO_SPACE'],
    ['nothing', () => Buffer.alloc(0), 'E_TRANSFER_INTERRUPTED'],
  ];
  for (const [what, answer, code] of cases) {
    const sock = await hostileCapsule(t, answer);
    await assert.rejects(stageThrough(t, sock), (e) => hasCode(e, code), what);
  }
});

test('stage client: the file is sent whole, and one that grew or shrank since it was opened is refused with its code', async (t) => {
  const sock = await hostileCapsule(t, (id, bytes) => ({ type: 'FileStaged', transferId: id, bytes, path: '/jackin/run/files/0011223344556677/f.bin' }));
  const dir = mkdtempSync(join(tmpdir(), 'jackin-stage-src-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const data = randomBytes(3 * (1 << 20) + 7);
  const stage = async (change: (path: string) => void): Promise<unknown> => {
    const path = join(dir, 'f.bin');
    writeFileSync(path, data);
    const src = await openStageSource(path, 1 << 30);
    try {
      change(path);
      return await stageFile(src, { connect: async () => socketTransport(await connectSocket(sock), sock) });
    } finally {
      await src.handle.close();
    }
  };
  const r = (await stage(() => undefined)) as { bytes: number; sha256: string };
  assert.equal(r.bytes, data.length);
  assert.equal(r.sha256, createHash('sha256').update(data).digest('hex'));
  await assert.rejects(
    stage((p) => appendFileSync(p, 'x')),
    (e: unknown) => hasCode(e, 'E_CHANGED_WHILE_READING') && /grew past/.test(String(e)),
  );
  await assert.rejects(
    stage((p) => truncateSync(p, 1 << 20)),
    (e: unknown) => hasCode(e, 'E_CHANGED_WHILE_READING') && /shrank/.test(String(e)),
  );
});
