import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import {
  capForTag,
  createClientFrameDecoder,
  createServerFrameDecoder,
  createStageClientDecoder,
  createStageServerDecoder,
  encodeStageChunkHeader,
  encodeStageClientFrame,
  encodeStageServerFrame,
  FILE_STAGE_TAGS,
  ProtocolError,
  type DecodeItem,
  type StageClientFrame,
  type StageServerFrame,
} from './index.ts';

const repoRoot = new URL('../../', import.meta.url);
interface Vector {
  name: string;
  direction: 'client' | 'server';
  hex: string;
  meaning: Record<string, unknown>;
}
interface Invalid {
  direction: 'client' | 'server';
  tag: string;
  hex: string;
  code: string;
  kind: 'payload' | 'framing';
  why: string;
}
const file = JSON.parse(readFileSync(new URL('test/vectors/file-stage-v1.json', repoRoot), 'utf8')) as {
  caps: Record<string, number>;
  frames: Vector[];
  invalid: Invalid[];
};

/** A frame as the vectors write it: u64 ids as decimal strings, bytes as hex. */
function meaningOf(f: StageClientFrame | StageServerFrame): Record<string, unknown> {
  return JSON.parse(
    JSON.stringify(f, (_k, v: unknown) =>
      typeof v === 'bigint' ? v.toString() : v && (v as { type?: string }).type === 'Buffer' ? Buffer.from((v as { data: number[] }).data).toString('hex') : v,
    ),
  ) as Record<string, unknown>;
}

function decodeAll<F>(decoder: { push(b: Buffer): Array<DecodeItem<F>>; end(): void }, bytes: Buffer, cuts: number[]): Array<DecodeItem<F>> {
  const out: Array<DecodeItem<F>> = [];
  let at = 0;
  for (const c of [...cuts.filter((x) => x > 0 && x < bytes.length)].sort((a, b) => a - b).concat(bytes.length)) {
    out.push(...decoder.push(bytes.subarray(at, c)));
    at = c;
  }
  decoder.end();
  return out;
}

for (const v of file.frames) {
  test(`file-stage vector ${v.name}: decodes to its meaning under any slicing and encodes back to its bytes`, () => {
    const bytes = Buffer.from(v.hex, 'hex');
    fc.assert(
      fc.property(fc.array(fc.nat(bytes.length), { maxLength: 6 }), (cuts) => {
        const items = v.direction === 'client' ? decodeAll(createStageClientDecoder(), bytes, cuts) : decodeAll(createStageServerDecoder(), bytes, cuts);
        assert.equal(items.length, 1);
        const item = items[0]!;
        assert.ok(item.ok, item.ok ? '' : item.error.message);
        assert.deepEqual(meaningOf(item.frame), v.meaning);
        const again =
          v.direction === 'client' ? encodeStageClientFrame(item.frame as StageClientFrame) : encodeStageServerFrame(item.frame as StageServerFrame);
        assert.equal(again.toString('hex'), v.hex);
      }),
      { numRuns: 50 },
    );
  });
}

for (const inv of file.invalid) {
  test(`file-stage invalid ${inv.direction} ${inv.tag}: ${inv.why} is ${inv.code} (${inv.kind})`, () => {
    const decoder = inv.direction === 'client' ? createStageClientDecoder() : createStageServerDecoder();
    const bytes = Buffer.from(inv.hex, 'hex');
    if (inv.kind === 'framing') {
      assert.throws(
        () => decoder.push(bytes),
        (e) => e instanceof ProtocolError && e.code === inv.code && e.kind === 'framing',
      );
      return;
    }
    const items = decoder.push(bytes);
    assert.equal(items.length, 1);
    const item = items[0]!;
    assert.ok(!item.ok);
    assert.equal(item.error.code, inv.code);
    assert.equal(item.error.kind, 'payload');
  });
}

test('file-stage caps: the vectors file, FRAME_CAPS and the encoders agree', () => {
  for (const [tag, cap] of Object.entries(file.caps)) assert.equal(capForTag(Number(tag)), cap, tag);
  assert.throws(() => encodeStageChunkHeader(1n, 0, 1024 * 1024 + 1), RangeError);
  assert.throws(() => encodeStageChunkHeader(1n, 0, 0), RangeError);
  assert.throws(() => encodeStageServerFrame({ type: 'FileStaged', transferId: 1n, bytes: 1, path: '' }), RangeError);
  assert.throws(() => encodeStageClientFrame({ type: 'FileStageEnd', transferId: 1n, sha256: Buffer.alloc(31) }), RangeError);
});

test('file-stage property: any chunk, end or staged frame round-trips, and a chunk header is the frame minus its data', () => {
  const id = fc.bigInt({ min: 0n, max: (1n << 64n) - 1n });
  const client = fc.oneof(
    fc.record(
      {
        type: fc.constant('FileStageChunk' as const),
        transferId: id,
        offset: fc.nat({ max: Number.MAX_SAFE_INTEGER }),
        bytes: fc.uint8Array({ minLength: 1, maxLength: 2048 }).map((u) => Buffer.from(u)),
      },
      { noNullPrototype: true },
    ),
    fc.record(
      { type: fc.constant('FileStageEnd' as const), transferId: id, sha256: fc.uint8Array({ minLength: 32, maxLength: 32 }).map((u) => Buffer.from(u)) },
      { noNullPrototype: true },
    ),
  );
  fc.assert(
    fc.property(client, (f) => {
      const bytes = encodeStageClientFrame(f);
      const [item] = createStageClientDecoder().push(bytes);
      assert.ok(item?.ok);
      assert.deepEqual(item.frame, f);
      if (f.type === 'FileStageChunk') assert.deepEqual(Buffer.concat([encodeStageChunkHeader(f.transferId, f.offset, f.bytes.length), f.bytes]), bytes);
    }),
  );
  const staged = fc.record(
    {
      type: fc.constant('FileStaged' as const),
      transferId: id,
      bytes: fc.nat({ max: Number.MAX_SAFE_INTEGER }),
      path: fc.string({ minLength: 1, maxLength: 300 }).filter((s) => Buffer.from(s, 'utf8').toString('utf8') === s),
    },
    { noNullPrototype: true },
  );
  fc.assert(
    fc.property(staged, (f) => {
      const [item] = createStageServerDecoder().push(encodeStageServerFrame(f));
      assert.ok(item?.ok);
      assert.deepEqual(item.frame, f);
    }),
  );
});

test('stage frames are unknown tags on an attach connection (a payload error, skipped), in both directions', () => {
  const chunk = encodeStageClientFrame({ type: 'FileStageChunk', transferId: 1n, offset: 0, bytes: Buffer.from('x') });
  const [c] = createClientFrameDecoder().push(chunk);
  assert.ok(c !== undefined && !c.ok && c.error.code === 'E_UNKNOWN_TAG' && c.error.kind === 'payload');
  const staged = encodeStageServerFrame({ type: 'FileStaged', transferId: 1n, bytes: 1, path: '/x' });
  const [s] = createServerFrameDecoder().push(staged);
  assert.ok(s !== undefined && !s.ok && s.error.code === 'E_UNKNOWN_TAG' && s.error.kind === 'payload');
  assert.equal(FILE_STAGE_TAGS.FileStaged, 0xa6);
});

test('docs/protocol.md lists every file-stage vector with its exact bytes', () => {
  const doc = readFileSync(new URL('docs/protocol.md', repoRoot), 'utf8');
  for (const v of file.frames) assert.ok(doc.includes(`| ${v.name} | ${v.direction} | \`${v.hex}\` |`), `${v.name} is missing or stale in docs/protocol.md`);
});
