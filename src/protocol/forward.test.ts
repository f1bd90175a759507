import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import {
  capForTag,
  createClientFrameDecoder,
  createForwardDecoder,
  createServerFrameDecoder,
  encodeForwardDataHeader,
  encodeForwardFrame,
  FORWARD_RESET_REASONS,
  MAX_FORWARD_DATA_BYTES,
  FORWARD_METHOD,
  ProtocolError,
  type ForwardFrame,
  type ForwardSide,
} from './index.ts';

const repoRoot = new URL('../../', import.meta.url);
interface Vectors {
  caps: Record<string, number>;
  frames: Array<{ name: string; direction: ForwardSide; hex: string; meaning: Record<string, unknown> }>;
  invalid: Array<{ direction: ForwardSide; tag: string; hex: string; code: string; kind: 'payload' | 'framing'; why: string }>;
}
const vectors = JSON.parse(readFileSync(new URL('test/vectors/forward-v1.json', repoRoot), 'utf8')) as Vectors;

const meaning = (f: ForwardFrame): Record<string, unknown> => (f.type === 'ForwardData' ? { type: f.type, bytes: f.bytes.toString('hex') } : { ...f });

/** Everything `bytes` decodes to when pushed in the pieces that `cuts` make. */
function decodeSliced(side: ForwardSide, bytes: Buffer, cuts: number[]): ForwardFrame[] {
  const d = createForwardDecoder(side);
  const frames: ForwardFrame[] = [];
  const at = [0, ...cuts.filter((c) => c > 0 && c < bytes.length).sort((a, b) => a - b), bytes.length];
  for (let i = 1; i < at.length; i++) {
    for (const item of d.push(bytes.subarray(at[i - 1], at[i]))) {
      assert.ok(item.ok, item.ok ? '' : item.error.message);
      frames.push(item.frame);
    }
  }
  d.end();
  return frames;
}

for (const v of vectors.frames) {
  test(`forward vector ${v.name}: decodes to its meaning under any slicing and encodes back to its bytes`, () => {
    const bytes = Buffer.from(v.hex, 'hex');
    fc.assert(
      fc.property(fc.array(fc.nat(bytes.length), { maxLength: 6 }), (cuts) => {
        const frames = decodeSliced(v.direction, bytes, cuts);
        assert.equal(frames.length, 1);
        assert.deepEqual(meaning(frames[0]!), v.meaning);
        assert.equal(encodeForwardFrame(v.direction, frames[0]!).toString('hex'), v.hex);
      }),
      { numRuns: 40 },
    );
  });
}

for (const inv of vectors.invalid) {
  test(`forward invalid, sent by ${inv.direction}, ${inv.tag}: ${inv.why} is ${inv.code} (${inv.kind})`, () => {
    const d = createForwardDecoder(inv.direction);
    const bytes = Buffer.from(inv.hex, 'hex');
    if (inv.kind === 'framing') {
      assert.throws(
        () => d.push(bytes),
        (e) => e instanceof ProtocolError && e.code === inv.code && e.kind === 'framing',
      );
      return;
    }
    const items = d.push(bytes);
    assert.equal(items.length, 1);
    assert.ok(!items[0]!.ok && items[0]!.error.code === inv.code && items[0]!.error.kind === 'payload');
    // The stream is still in sync: the next frame decodes.
    const [next] = d.push(encodeForwardFrame(inv.direction, { type: 'ForwardEnd' }));
    assert.deepEqual(next, { ok: true, frame: { type: 'ForwardEnd' } });
  });
}

test('forward caps: the vectors file, FRAME_CAPS and the encoder agree', () => {
  for (const [tag, cap] of Object.entries(vectors.caps)) assert.equal(capForTag(Number(tag)), cap, tag);
  assert.equal(MAX_FORWARD_DATA_BYTES, 256 * 1024);
  for (const side of ['client', 'server'] as const) {
    assert.throws(() => encodeForwardDataHeader(side, 0), RangeError);
    assert.throws(() => encodeForwardDataHeader(side, MAX_FORWARD_DATA_BYTES + 1), RangeError);
    assert.equal(encodeForwardDataHeader(side, MAX_FORWARD_DATA_BYTES).length, 5);
  }
});

test('forward property: any frame sequence, from either side, round-trips under any slicing', () => {
  const frame: fc.Arbitrary<ForwardFrame> = fc.oneof(
    fc.uint8Array({ minLength: 1, maxLength: 4096 }).map((u): ForwardFrame => ({ type: 'ForwardData', bytes: Buffer.from(u) })),
    fc.constant<ForwardFrame>({ type: 'ForwardEnd' }),
    fc.constantFrom(...FORWARD_RESET_REASONS).map((reason): ForwardFrame => ({ type: 'ForwardReset', reason })),
  );
  fc.assert(
    fc.property(
      fc.constantFrom<ForwardSide>('client', 'server'),
      fc.array(frame, { maxLength: 8 }),
      fc.array(fc.nat(40_000), { maxLength: 10 }),
      (side, frames, cuts) => {
        const bytes = Buffer.concat(frames.map((f) => encodeForwardFrame(side, f)));
        assert.deepEqual(decodeSliced(side, bytes, cuts).map(meaning), frames.map(meaning));
      },
    ),
  );
});

test('forward property: arbitrary bytes never crash a forward decoder; it returns frames and payload errors or throws a framing error', () => {
  fc.assert(
    fc.property(fc.constantFrom<ForwardSide>('client', 'server'), fc.uint8Array({ maxLength: 600 }), (side, bytes) => {
      const d = createForwardDecoder(side);
      try {
        for (const item of d.push(Buffer.from(bytes))) if (!item.ok) assert.equal(item.error.kind, 'payload');
        assert.ok(d.bufferedBytes <= 5 + MAX_FORWARD_DATA_BYTES);
      } catch (e) {
        assert.ok(e instanceof ProtocolError && e.kind === 'framing', String(e));
      }
    }),
  );
});

test('forward frames are unknown tags on an attach connection (a payload error, skipped), both ways', () => {
  const [c] = createClientFrameDecoder().push(encodeForwardFrame('client', { type: 'ForwardData', bytes: Buffer.from('x') }));
  assert.ok(c !== undefined && !c.ok && c.error.code === 'E_UNKNOWN_TAG' && c.error.kind === 'payload');
  const [s] = createServerFrameDecoder().push(encodeForwardFrame('server', { type: 'ForwardReset', reason: 'reset' }));
  assert.ok(s !== undefined && !s.ok && s.error.code === 'E_UNKNOWN_TAG' && s.error.kind === 'payload');
});

test('a forward request names a port and nothing else: an address, host or family is refused', () => {
  assert.deepEqual(FORWARD_METHOD.parseParams({ method: 'forward', port: 8080 }), { ok: true, params: { port: 8080 } });
  for (const bad of [
    { method: 'forward', port: 8080, host: '10.0.0.1' },
    { method: 'forward', port: 8080, address: '169.254.169.254' },
    { method: 'forward', port: 8080, family: 6 },
    { method: 'forward', port: 0 },
    { method: 'forward', port: 65536 },
    { method: 'forward', port: '80' },
    { method: 'forward', port: 80.5 },
    { method: 'forward' },
  ]) {
    assert.equal(FORWARD_METHOD.parseParams(bad).ok, false, JSON.stringify(bad));
  }
  fc.assert(
    fc.property(fc.dictionary(fc.string({ maxLength: 12 }), fc.jsonValue(), { minKeys: 1 }), fc.integer({ min: 1, max: 65535 }), (extra, port) => {
      const keys = Object.keys(extra).filter((k) => k !== 'method' && k !== 'port');
      const r = FORWARD_METHOD.parseParams({ ...extra, method: 'forward', port });
      assert.equal(r.ok, keys.length === 0);
    }),
  );
});

test('docs/protocol.md lists every forward vector with its exact bytes', () => {
  const doc = readFileSync(new URL('docs/protocol.md', repoRoot), 'utf8');
  for (const v of vectors.frames) assert.ok(doc.includes(`| ${v.name} | ${v.direction} | \`${v.hex}\` |`), `${v.name} is missing or stale in docs/protocol.md`);
});
