import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ImageTransfers, type Correlation, type TransferStep } from './image-transfers.ts';
import { ImageStaging } from '../session/staging.ts';
import { MAX_CHUNK_BYTES } from '../../protocol/limits.ts';
import { bigPng } from '../../../test/helpers/png.mjs';

const fixture = (name: string): Buffer => readFileSync(new URL(`../../../test/fixtures/images/${name}`, import.meta.url));
const sha = (b: Buffer): Buffer => createHash('sha256').update(b).digest();

/** Fake timers: the test advances time by firing what is due. */
class ManualTimers {
  now = 0;
  #next = 1;
  readonly pending = new Map<number, { at: number; fn: () => void }>();
  setTimeout = (fn: () => void, ms: number): unknown => {
    const id = this.#next++;
    this.pending.set(id, { at: this.now + ms, fn });
    return id;
  };
  clearTimeout = (h: unknown): void => {
    this.pending.delete(h as number);
  };
  advance(ms: number): void {
    this.now += ms;
    for (const [id, t] of [...this.pending]) {
      if (t.at <= this.now) {
        this.pending.delete(id);
        t.fn();
      }
    }
  }
}

function setup(opts: { maxBytes?: number; maxConcurrent?: number } = {}) {
  const run = mkdtempSync(join(tmpdir(), 'jackin-transfer-test-'));
  const staging = new ImageStaging(run);
  const timers = new ManualTimers();
  const idle: TransferStep[] = [];
  const transfers = new ImageTransfers({
    stage: (b, f) => staging.stage(b, f),
    timers,
    onIdleDrop: (s) => idle.push(s),
    ...opts,
  });
  const staged = (): string[] => (existsSync(staging.dir) ? readdirSync(staging.dir) : []);
  return { run, staging, timers, idle, transfers, staged, done: () => rmSync(run, { recursive: true, force: true }) };
}

const A: Correlation = { requestId: 7n, context: { v: 1, session_id: 's1' } };

function send(t: ImageTransfers, from: Correlation, id: bigint, data: Buffer, chunk = MAX_CHUNK_BYTES): TransferStep[] {
  const steps = [t.start(from, { transferId: id, format: 'png', size: data.length })];
  for (let off = 0; off < data.length; off += chunk) {
    steps.push(t.chunk(from, { transferId: id, offset: off, bytes: data.subarray(off, off + chunk) }));
  }
  return steps;
}

test('image transfers: a 5 MiB image in 1 MiB chunks is staged byte-identical; End answers success once under the Start id', async () => {
  const s = setup();
  try {
    const data = bigPng(5 * 1024 * 1024);
    for (const step of send(s.transfers, A, 1n, data)) assert.deepEqual(step, { responses: [], events: [] });
    const end = await s.transfers.end(A, { transferId: 1n, sha256: sha(data) });
    assert.deepEqual(end.responses, [{ requestId: 7n, result: 'success' }]);
    const ev = end.events[0];
    assert.ok(ev?.kind === 'staged');
    assert.ok(readFileSync(ev.staged.path).equals(data));
    assert.equal(s.transfers.active, 0);
    assert.equal(s.timers.pending.size, 0, 'no idle timer left');
    const again = await s.transfers.end(A, { transferId: 1n, sha256: sha(data) });
    assert.deepEqual(again.responses, [{ requestId: 7n, result: 'invalid-correlation' }], 'a second End is not answered as success');
  } finally {
    s.done();
  }
});

test('image transfers: legacy frames (no request id) work and get no responses', async () => {
  const s = setup();
  try {
    const legacy: Correlation = { requestId: null, context: null };
    const data = fixture('sample.gif');
    send(s.transfers, legacy, 9n, data, 10);
    const end = await s.transfers.end(legacy, { transferId: 9n, sha256: sha(data) });
    assert.deepEqual(end.responses, []);
    assert.equal(end.events[0]?.kind, 'staged');
  } finally {
    s.done();
  }
});

test('image transfers: a wrong offset drops the transfer, answers rejected under the Start id, leaves no file', async () => {
  const s = setup();
  try {
    const data = fixture('sample.tiff');
    s.transfers.start(A, { transferId: 2n, format: 'tiff', size: data.length });
    s.transfers.chunk(A, { transferId: 2n, offset: 0, bytes: data.subarray(0, 100) });
    const bad = s.transfers.chunk(A, { transferId: 2n, offset: 101, bytes: data.subarray(100, 200) });
    assert.deepEqual(bad.responses, [{ requestId: 7n, result: 'rejected' }]);
    assert.equal(bad.events[0]?.kind === 'rejected' && bad.events[0].error.code, 'E_TRANSFER_OFFSET');
    assert.equal(s.transfers.active, 0);
    const end = await s.transfers.end(A, { transferId: 2n, sha256: sha(data) });
    assert.deepEqual(end.responses, [{ requestId: 7n, result: 'invalid-correlation' }]);
    assert.deepEqual(s.staged(), []);
  } finally {
    s.done();
  }
});

test('image transfers: a wrong digest is E_DIGEST_MISMATCH and leaves no file', async () => {
  const s = setup();
  try {
    const data = fixture('sample.png');
    send(s.transfers, A, 3n, data);
    const end = await s.transfers.end(A, { transferId: 3n, sha256: sha(Buffer.from('other')) });
    assert.deepEqual(end.responses, [{ requestId: 7n, result: 'rejected' }]);
    assert.equal(end.events[0]?.kind === 'rejected' && end.events[0].error.code, 'E_DIGEST_MISMATCH');
    assert.deepEqual(s.staged(), []);
  } finally {
    s.done();
  }
});

test('image transfers: short data, data past the size, oversize chunks and bad signatures are rejected', async () => {
  const s = setup();
  try {
    const data = fixture('sample.png');
    s.transfers.start(A, { transferId: 4n, format: 'png', size: data.length });
    s.transfers.chunk(A, { transferId: 4n, offset: 0, bytes: data.subarray(0, 50) });
    const short = await s.transfers.end(A, { transferId: 4n, sha256: sha(data.subarray(0, 50)) });
    assert.equal(short.events[0]?.kind === 'rejected' && short.events[0].error.code, 'E_TRANSFER_SIZE_MISMATCH');

    s.transfers.start(A, { transferId: 5n, format: 'png', size: 10 });
    const past = s.transfers.chunk(A, { transferId: 5n, offset: 0, bytes: data.subarray(0, 11) });
    assert.equal(past.events[0]?.kind === 'rejected' && past.events[0].error.code, 'E_TRANSFER_SIZE_MISMATCH');

    s.transfers.start(A, { transferId: 6n, format: 'png', size: MAX_CHUNK_BYTES + 2 });
    const big = s.transfers.chunk(A, { transferId: 6n, offset: 0, bytes: Buffer.alloc(MAX_CHUNK_BYTES + 1) });
    assert.equal(big.events[0]?.kind === 'rejected' && big.events[0].error.code, 'E_TRANSFER_CHUNK_SIZE');

    const text = Buffer.from('not an image at all');
    send(s.transfers, A, 7n, text);
    const sig = await s.transfers.end(A, { transferId: 7n, sha256: sha(text) });
    assert.deepEqual(sig.responses, [{ requestId: 7n, result: 'rejected' }]);
    assert.equal(sig.events[0]?.kind === 'rejected' && sig.events[0].error.code, 'E_UNSUPPORTED_IMAGE');
    assert.deepEqual(s.staged(), []);
  } finally {
    s.done();
  }
});

test('image transfers: Start sizes outside 1..64 MiB, a reused id and too many transfers are rejected', () => {
  const s = setup({ maxConcurrent: 2 });
  try {
    const r0 = s.transfers.start(A, { transferId: 1n, format: 'png', size: 0 });
    assert.deepEqual(r0.responses, [{ requestId: 7n, result: 'rejected' }]);
    const over = s.transfers.start(A, { transferId: 1n, format: 'png', size: 64 * 1024 * 1024 + 1 });
    assert.equal(over.events[0]?.kind === 'rejected' && over.events[0].error.code, 'E_IMAGE_TOO_LARGE');
    assert.deepEqual(s.transfers.start(A, { transferId: 1n, format: 'png', size: 64 * 1024 * 1024 }).responses, []);
    const dup = s.transfers.start(A, { transferId: 1n, format: 'png', size: 10 });
    assert.equal(dup.events[0]?.kind === 'rejected' && dup.events[0].error.code, 'E_TRANSFER_ID_IN_USE');
    s.transfers.start(A, { transferId: 2n, format: 'png', size: 10 });
    const third = s.transfers.start(A, { transferId: 3n, format: 'png', size: 10 });
    assert.equal(third.events[0]?.kind === 'rejected' && third.events[0].error.code, 'E_TOO_MANY_TRANSFERS');
    assert.equal(s.transfers.active, 2);
    s.transfers.dispose();
    assert.equal(s.transfers.active, 0);
    assert.equal(s.timers.pending.size, 0);
  } finally {
    s.done();
  }
});

test('image transfers: a chunk with another request id or context drops the transfer', () => {
  const s = setup();
  try {
    const data = fixture('sample.png');
    s.transfers.start(A, { transferId: 8n, format: 'png', size: data.length });
    const other = s.transfers.chunk({ requestId: 99n, context: A.context }, { transferId: 8n, offset: 0, bytes: data.subarray(0, 10) });
    assert.deepEqual(other.responses, [
      { requestId: 7n, result: 'rejected' },
      { requestId: 99n, result: 'invalid-correlation' },
    ]);
    assert.equal(s.transfers.active, 0);

    s.transfers.start(A, { transferId: 8n, format: 'png', size: data.length });
    const ctx = s.transfers.chunk({ requestId: 7n, context: { v: 1, session_id: 's2' } }, { transferId: 8n, offset: 0, bytes: data.subarray(0, 10) });
    assert.deepEqual(ctx.responses, [{ requestId: 7n, result: 'rejected' }]);
    assert.equal(ctx.events[0]?.kind === 'rejected' && ctx.events[0].error.code, 'E_TRANSFER_CORRELATION');
  } finally {
    s.done();
  }
});

test('image transfers: idle for 5 minutes drops the transfer; activity restarts the clock', () => {
  const s = setup();
  try {
    const data = fixture('sample.png');
    s.transfers.start(A, { transferId: 10n, format: 'png', size: data.length });
    s.timers.advance(4 * 60_000);
    s.transfers.chunk(A, { transferId: 10n, offset: 0, bytes: data.subarray(0, 10) });
    s.timers.advance(4 * 60_000);
    assert.equal(s.transfers.active, 1, 'a chunk 4 minutes ago keeps it alive');
    s.timers.advance(60_000);
    assert.equal(s.transfers.active, 0);
    assert.equal(s.idle.length, 1);
    assert.deepEqual(s.idle[0]?.responses, [{ requestId: 7n, result: 'rejected' }]);
    assert.equal(s.idle[0]?.events[0]?.kind === 'rejected' && s.idle[0].events[0].error.code, 'E_TRANSFER_IDLE');
  } finally {
    s.done();
  }
});

test('image transfers: a host ClipboardImageError aborts that sender’s transfers', () => {
  const s = setup();
  try {
    s.transfers.start(A, { transferId: 11n, format: 'png', size: 100 });
    const step = s.transfers.abort(A, 'clipboard changed');
    assert.deepEqual(step.responses, [{ requestId: 7n, result: 'rejected' }]);
    assert.equal(s.transfers.active, 0);
    assert.match(String(step.events[0]?.kind === 'rejected' && step.events[0].error.message), /clipboard changed/);
  } finally {
    s.done();
  }
});
