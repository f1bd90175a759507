/**
 * The one property of chunked transfers, held by every receiver (src/protocol/verified-transfer.ts and the
 * three that use it: the host's export sink, the capsule's file staging and its image transfers): any split
 * of any payload into in-order chunks verifies and publishes exactly the payload; a chunk at a wrong offset,
 * an empty chunk, data past the declared size, a short end or a wrong SHA-256 is refused with one code, the
 * same for every receiver, and nothing is published (no file, no partial file left, nothing staged).
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import fc from 'fast-check';
import { JackinError, type ErrorCode } from '../src/errors.ts';
import { VerifiedTransfer } from '../src/protocol/verified-transfer.ts';
import { ExportSink } from '../src/host/export/export-sink.ts';
import { FileStaging } from '../src/capsule/files/file-staging.ts';
import { ImageTransfers, type Correlation } from '../src/capsule/images/image-transfers.ts';
import type { StagedImage, StagedPath } from '../src/capsule/session/staging.ts';

interface Chunk {
  readonly offset: number;
  readonly bytes: Buffer;
}

/** What a receiver made of one transfer: the code it refused it with, and what it published. */
interface Outcome {
  readonly code: ErrorCode | undefined;
  readonly published: Buffer | undefined;
  /** Anything left behind (partial files), besides what was published. */
  readonly leftovers: string[];
}

type Receiver = (size: number, chunks: readonly Chunk[], sha256: Buffer) => Promise<Outcome>;

const sha = (b: Uint8Array): Buffer => createHash('sha256').update(b).digest();

const codeOf = (e: unknown): ErrorCode => {
  assert.ok(e instanceof JackinError, `not a JackinError: ${String(e)}`);
  return e.code;
};

let base = '';
let n = 0;
const fresh = (): string => join(base, `r${n++}`);
before(() => {
  base = mkdtempSync(join(tmpdir(), 'jackin-verified-transfer-'));
});
after(() => rmSync(base, { recursive: true, force: true }));

const list = (dir: string): string[] => (existsSync(dir) ? readdirSync(dir, { recursive: true, encoding: 'utf8' }).sort() : []);

const exportSink: Receiver = async (size, chunks, sha256) => {
  const dir = fresh();
  const sink = new ExportSink({ directory: dir, freeSpaceMargin: 0 });
  try {
    await sink.begin('payload.bin', size);
    for (const c of chunks) await sink.write(c.offset, c.bytes);
    const r = await sink.finish(sha256);
    return { code: undefined, published: readFileSync(r.destination), leftovers: list(dir).filter((f) => f !== 'payload.bin') };
  } catch (e) {
    await sink.abort();
    return { code: codeOf(e), published: undefined, leftovers: list(dir) };
  }
};

const fileStaging: Receiver = async (size, chunks, sha256) => {
  const run = fresh();
  mkdirSync(run);
  const staging = new FileStaging(run, { maxBytes: 1 << 20, freeSpaceMargin: 0 });
  const tr = await staging.begin('payload.bin', size);
  try {
    for (const c of chunks) await tr.write(c.offset, c.bytes);
    const staged = await tr.finish(sha256);
    const file = relative(staging.dir, staged.path);
    return { code: undefined, published: readFileSync(staged.path), leftovers: list(staging.dir).filter((f) => f !== file && f !== dirname(file)) };
  } catch (e) {
    await tr.abort();
    return { code: codeOf(e), published: undefined, leftovers: list(staging.dir) };
  }
};

const noTimers = { setTimeout: (): unknown => undefined, clearTimeout: (): void => undefined };
const owner: Correlation = { requestId: 1n, context: null };

const imageTransfers: Receiver = async (size, chunks, sha256) => {
  const staged: Buffer[] = [];
  const transfers = new ImageTransfers({
    timers: noTimers,
    // The transfer's checks are what is under test; the image's own (its signature) are ImageStaging's.
    stage: async (bytes, format): Promise<StagedImage> => {
      staged.push(bytes);
      return { path: '/staged/payload.png' as StagedPath, name: 'payload.png', format, bytes: bytes.length };
    },
  });
  const refused = (events: ReturnType<ImageTransfers['chunk']>['events']): ErrorCode | undefined => {
    const ev = events.find((e) => e.kind === 'rejected');
    return ev?.kind === 'rejected' ? ev.error.code : undefined;
  };
  try {
    const start = transfers.start(owner, { transferId: 5n, format: 'png', size });
    assert.equal(refused(start.events), undefined, 'the start is accepted');
    for (const c of chunks) {
      const code = refused(transfers.chunk(owner, { transferId: 5n, offset: c.offset, bytes: c.bytes }).events);
      if (code !== undefined) return { code, published: staged[0], leftovers: staged.slice(1).map(String) };
    }
    const end = await transfers.end(owner, { transferId: 5n, sha256 });
    return { code: refused(end.events), published: staged[0], leftovers: staged.slice(1).map(String) };
  } finally {
    transfers.dispose();
  }
};

/** Every receiver; images take only 1 byte or more (a Start of 0 bytes is E_IMAGE_TOO_LARGE, before any transfer). */
const receivers: ReadonlyArray<readonly [string, Receiver, number]> = [
  ['export sink', exportSink, 0],
  ['file staging', fileStaging, 0],
  ['image transfers', imageTransfers, 1],
];

/** The payload cut at `cuts` (positions taken modulo its length) into in-order chunks. */
function split(payload: Buffer, cuts: readonly number[]): Chunk[] {
  if (payload.length === 0) return [];
  const at = [...new Set(cuts.map((c) => c % payload.length).filter((c) => c > 0))].sort((a, b) => a - b);
  return [0, ...at].map((offset, i) => ({ offset, bytes: payload.subarray(offset, at[i] ?? payload.length) }));
}

const payloads = (minLength: number) => fc.uint8Array({ minLength, maxLength: 3000 }).map((a) => Buffer.from(a));
const cuts = fc.array(fc.nat(), { maxLength: 12 });

test('verified transfer property: any split of any payload into in-order chunks verifies and publishes the payload, on every receiver', async () => {
  await fc.assert(
    fc.asyncProperty(payloads(0), cuts, async (payload, at) => {
      const chunks = split(payload, at);
      for (const [name, receive, minSize] of receivers) {
        if (payload.length < minSize) continue;
        const r = await receive(payload.length, chunks, sha(payload));
        assert.equal(r.code, undefined, name);
        assert.ok(r.published?.equals(payload), `${name}: the published bytes are the payload`);
        assert.deepEqual(r.leftovers, [], `${name}: nothing else is left`);
      }
      // The checks alone, without a destination: the digest is the payload's.
      const v = new VerifiedTransfer({ size: payload.length, label: 'x' });
      await Promise.all(chunks.map((c) => v.accept(c.offset, c.bytes)));
      assert.ok((await v.verify(sha(payload))).equals(sha(payload)));
    }),
    { numRuns: 40 },
  );
});

/** One fault in an otherwise good transfer, and the one code every receiver refuses it with. */
type Fault = { readonly code: ErrorCode; readonly size: number; readonly chunks: Chunk[]; readonly sha256: Buffer; readonly what: string };

const faults = (payload: Buffer, chunks: Chunk[]): fc.Arbitrary<Fault> => {
  const good = { size: payload.length, chunks, sha256: sha(payload) };
  const index = fc.nat({ max: chunks.length - 1 });
  return fc.oneof(
    // A chunk at another offset than the end of the previous one (a gap, a replay, an overlap).
    fc
      .tuple(index, fc.integer({ min: 0, max: payload.length + 64 }))
      .filter(([i, o]) => o !== chunks[i]!.offset)
      .map(
        ([i, o]): Fault => ({
          ...good,
          what: `chunk ${i} at ${o} instead of ${chunks[i]!.offset}`,
          code: 'E_TRANSFER_OFFSET',
          chunks: chunks.map((c, j) => (j === i ? { ...c, offset: o } : c)),
        }),
      ),
    // An empty chunk.
    fc.nat({ max: chunks.length }).map(
      (i): Fault => ({
        ...good,
        what: `an empty chunk before chunk ${i}`,
        code: 'E_TRANSFER_CHUNK_SIZE',
        chunks: [...chunks.slice(0, i), { offset: chunks[i]?.offset ?? payload.length, bytes: Buffer.alloc(0) }, ...chunks.slice(i)],
      }),
    ),
    // Data past the declared size (the declaration is short of the payload, but at least 1 byte).
    fc
      .integer({ min: 1, max: payload.length - 1 })
      .map((size): Fault => ({ ...good, what: `declared ${size} of ${payload.length}`, code: 'E_TRANSFER_SIZE_MISMATCH', size })),
    // An end before every declared byte arrived.
    fc
      .integer({ min: 1, max: 4096 })
      .map((more): Fault => ({ ...good, what: `declared ${more} more bytes than sent`, code: 'E_TRANSFER_SIZE_MISMATCH', size: payload.length + more })),
    // A wrong SHA-256 (one bit of the right one flipped, or none at all).
    fc.tuple(fc.nat({ max: 255 }), fc.constantFrom(1, 2, 4, 8, 16, 32, 64, 128)).map(([byte, bit]): Fault => {
      const wrong = Buffer.from(good.sha256);
      wrong[byte % wrong.length]! ^= bit;
      return { ...good, what: `a wrong digest`, code: 'E_DIGEST_MISMATCH', sha256: wrong };
    }),
    fc.constant<Fault>({ ...good, what: 'an empty digest', code: 'E_DIGEST_MISMATCH', sha256: Buffer.alloc(0) }),
  );
};

test('verified transfer property: an out-of-order offset, an empty chunk, an overlong or short transfer or a wrong hash is refused with its one code by every receiver, and nothing is published', async () => {
  await fc.assert(
    fc.asyncProperty(
      payloads(2).chain((payload) => fc.tuple(fc.constant(payload), cuts).chain(([p, at]) => faults(p, split(p, at)))),
      async (fault) => {
        for (const [name, receive] of receivers) {
          const r = await receive(fault.size, fault.chunks, fault.sha256);
          assert.equal(r.code, fault.code, `${name}: ${fault.what}`);
          assert.equal(r.published, undefined, `${name}: ${fault.what}: nothing is published`);
          assert.deepEqual(r.leftovers, [], `${name}: ${fault.what}: nothing is left behind`);
        }
      },
    ),
    { numRuns: 150 },
  );
});
