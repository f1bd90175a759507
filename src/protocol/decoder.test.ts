import { test } from 'node:test';
import assert from 'node:assert/strict';
import { helloFrame } from '../../test/helpers/capsule-client.ts';
import {
  CHUNK_FRAME_CAP,
  CLIENT_TAGS,
  DEFAULT_FRAME_CAP,
  LARGE_FRAME_CAP,
  MAX_SINGLE_IMAGE_BYTES,
  MiB,
  SERVER_TAGS,
  capForTag,
  createClientFrameDecoder,
  createServerFrameDecoder,
  encodeClientFrame,
  encodeServerFrame,
  FRAME_HEADER_BYTES,
  PROTOCOL_CODES,
  ProtocolError,
  type ClientFrame,
  type DecodeItem,
  type FrameDecoder,
  type ServerFrame,
} from './index.ts';

function header(tag: number, length: number): Buffer {
  const h = Buffer.alloc(FRAME_HEADER_BYTES);
  h[0] = tag;
  h.writeUInt32BE(length, 1);
  return h;
}

function rawFrame(tag: number, payload: Buffer | string): Buffer {
  const p = typeof payload === 'string' ? Buffer.from(payload, 'hex') : payload;
  return Buffer.concat([header(tag, p.length), p]);
}

function isProtocolError(code: string, kind: 'framing' | 'payload') {
  return (e: unknown): boolean => {
    assert.ok(e instanceof ProtocolError, `expected a ProtocolError, got ${String(e)}`);
    assert.equal(e.code, code);
    assert.equal(e.kind, kind);
    return true;
  };
}

function only<F>(items: Array<DecodeItem<F>>): DecodeItem<F> {
  assert.equal(items.length, 1);
  return items[0]!;
}

function payloadError<F>(items: Array<DecodeItem<F>>): ProtocolError {
  const item = only(items);
  assert.equal(item.ok, false, 'expected a payload error');
  if (item.ok) throw new Error('unreachable');
  assert.equal(item.error.kind, 'payload');
  return item.error;
}

const ALL_TAGS = [...Object.values(CLIENT_TAGS), ...Object.values(SERVER_TAGS)];

test('the caps table: 16 MiB for 0x08/0x0E, 1 MiB+16 for 0x0A/0x88, 4 MiB for every other upstream tag', () => {
  assert.equal(capForTag(0x08), 16 * MiB);
  assert.equal(capForTag(0x0e), 16 * MiB);
  assert.equal(capForTag(0x0a), MiB + 16);
  assert.equal(capForTag(0x88), MiB + 16);
  for (const tag of [0x01, 0x02, 0x03, 0x04, 0x05, 0x0d, 0x81, 0x82, 0x83, 0x87, 0x89, 0x8e, 0x7f, 0xff]) {
    assert.equal(capForTag(tag), 4 * MiB, `cap of 0x${tag.toString(16)}`);
  }
  assert.equal(capForTag(CLIENT_TAGS.ExtHello), 4096);
  assert.equal(capForTag(CLIENT_TAGS.Repaint), 0);
  assert.equal(capForTag(SERVER_TAGS.ExitStatus), 4);
  assert.equal(capForTag(SERVER_TAGS.Notice), 4096);
});

for (const tag of [...ALL_TAGS, 0x7f, 0xfe]) {
  const cap = capForTag(tag);
  const name = `0x${tag.toString(16).padStart(2, '0')}`;
  test(`framing of tag ${name}: a payload of exactly its cap (${cap}) is accepted, one byte more is E_FRAME_TOO_LARGE`, () => {
    for (const d of [createClientFrameDecoder(), createServerFrameDecoder()] as Array<FrameDecoder<unknown>>) {
      // At the cap: the framing layer hands the payload on (the payload decoder may still reject it).
      const items = d.push(Buffer.concat([header(tag, cap), Buffer.alloc(cap)]));
      const item = only(items);
      if (!item.ok) assert.equal(item.error.kind, 'payload');
      d.end();

      const over = tag & 0x80 ? createServerFrameDecoder() : createClientFrameDecoder();
      // One byte over fails on the header alone: no payload byte is needed or buffered.
      assert.throws(() => over.push(header(tag, cap + 1)), isProtocolError(PROTOCOL_CODES.frameTooLarge, 'framing'));
      assert.equal(over.bufferedBytes, 0);
    }
  });
}

test('frames exactly at their cap decode: Input 4 MiB, Output 4 MiB, ClipboardImage 16 MiB, AttachControl 16 MiB, chunks 1 MiB+16', () => {
  const client: ClientFrame[] = [
    { type: 'Input', bytes: Buffer.alloc(DEFAULT_FRAME_CAP, 0x61) },
    { type: 'ClipboardImage', format: 'png', bytes: Buffer.alloc(MAX_SINGLE_IMAGE_BYTES, 1) },
    {
      type: 'AttachControl',
      requestId: 9n,
      context: { v: 1 },
      // kind 1 + request id 8 + context length 2 + `{"v":1}` 7 + format 1 = 19 bytes before the image.
      body: { kind: 'ClipboardImage', format: 'gif', bytes: Buffer.alloc(LARGE_FRAME_CAP - 19, 2) },
    },
    { type: 'ClipboardImageChunk', transferId: 3n, offset: 5, bytes: Buffer.alloc(CHUNK_FRAME_CAP - 16, 3) },
  ];
  for (const f of client) {
    const bytes = encodeClientFrame(f);
    assert.equal(bytes.length - FRAME_HEADER_BYTES, capForTag(bytes[0]!), `${f.type} is exactly at its cap`);
    const d = createClientFrameDecoder();
    assert.deepEqual(only(d.push(bytes)), { ok: true, frame: f });
    d.end();
    // One byte more cannot be encoded: the encoder refuses what the peer would drop the connection for.
    const bigger = Buffer.concat([bytes.subarray(FRAME_HEADER_BYTES), Buffer.alloc(1)]);
    assert.throws(() => createClientFrameDecoder().push(rawFrame(bytes[0]!, bigger)), isProtocolError(PROTOCOL_CODES.frameTooLarge, 'framing'));
  }
  assert.throws(() => encodeClientFrame({ type: 'Input', bytes: Buffer.alloc(DEFAULT_FRAME_CAP + 1) }), RangeError);

  const server: ServerFrame[] = [
    { type: 'Output', bytes: Buffer.alloc(DEFAULT_FRAME_CAP, 0x62) },
    { type: 'FileExportChunk', exportId: 4n, offset: 0, bytes: Buffer.alloc(CHUNK_FRAME_CAP - 16, 4) },
  ];
  for (const f of server) {
    const bytes = encodeServerFrame(f);
    assert.equal(bytes.length - FRAME_HEADER_BYTES, capForTag(bytes[0]!));
    const d = createServerFrameDecoder();
    assert.deepEqual(only(d.push(bytes)), { ok: true, frame: f });
    d.end();
  }
  assert.throws(() => encodeServerFrame({ type: 'Output', bytes: Buffer.alloc(DEFAULT_FRAME_CAP + 1) }), RangeError);
});

test('a declared 4 GiB Input fails at once on its header, with nothing buffered', () => {
  const d = createClientFrameDecoder();
  assert.throws(() => d.push(Buffer.from('03ffffffff', 'hex')), isProtocolError(PROTOCOL_CODES.frameTooLarge, 'framing'));
  assert.equal(d.bufferedBytes, 0);
});

test('a header split over reads is checked as soon as it is complete', () => {
  const d = createServerFrameDecoder();
  const h = header(0x82, DEFAULT_FRAME_CAP + 1);
  for (let i = 0; i < 4; i++) assert.deepEqual(d.push(h.subarray(i, i + 1)), []);
  assert.throws(() => d.push(h.subarray(4)), isProtocolError(PROTOCOL_CODES.frameTooLarge, 'framing'));
});

test('after a payload error the next frame still decodes', () => {
  const d = createClientFrameDecoder();
  const items = d.push(Buffer.concat([rawFrame(0x0d, ''), encodeClientFrame({ type: 'Input', bytes: Buffer.from('x') })]));
  assert.equal(items.length, 2);
  assert.equal(items[0]!.ok, false);
  if (!items[0]!.ok) {
    assert.equal(items[0]!.error.code, PROTOCOL_CODES.badLength);
    assert.equal(items[0]!.error.tag, 0x0d);
  }
  assert.deepEqual(items[1], { ok: true, frame: { type: 'Input', bytes: Buffer.from('x') } });
  d.end();
});

test('frames before a framing error in the same read are delivered; then every push and end throw it', () => {
  const d = createServerFrameDecoder();
  const items = d.push(Buffer.concat([encodeServerFrame({ type: 'ExitStatus', status: 3 }), header(0x88, CHUNK_FRAME_CAP + 1)]));
  assert.deepEqual(items, [{ ok: true, frame: { type: 'ExitStatus', status: 3 } }]);
  let first: unknown;
  try {
    d.push(encodeServerFrame({ type: 'Bell' }));
  } catch (e) {
    first = e;
  }
  assert.ok(first instanceof ProtocolError && first.kind === 'framing' && first.code === PROTOCOL_CODES.frameTooLarge);
  assert.throws(
    () => d.push(encodeServerFrame({ type: 'Bell' })),
    (e: unknown) => e === first,
  );
  assert.throws(
    () => d.end(),
    (e: unknown) => e === first,
  );
});

test('a framing error with nothing decoded before it is thrown at once', () => {
  const d = createServerFrameDecoder();
  assert.throws(() => d.push(header(0x88, CHUNK_FRAME_CAP + 1)), isProtocolError(PROTOCOL_CODES.frameTooLarge, 'framing'));
});

test('EOF mid-header or mid-payload is E_FRAME_TRUNCATED; EOF at a frame boundary is clean', () => {
  const frame = encodeServerFrame({ type: 'Output', bytes: Buffer.from('hello') });
  for (let cut = 1; cut < frame.length; cut++) {
    const d = createServerFrameDecoder();
    assert.deepEqual(d.push(frame.subarray(0, cut)), []);
    assert.throws(() => d.end(), isProtocolError(PROTOCOL_CODES.truncated, 'framing'));
  }
  const d = createServerFrameDecoder();
  d.end();
  const e = createServerFrameDecoder();
  assert.equal(e.push(Buffer.concat([frame, encodeServerFrame({ type: 'Bell' })])).length, 2);
  assert.equal(e.bufferedBytes, 0);
  e.end();
});

test('Resize accepts extra bytes after rows and cols, as upstream does', () => {
  const d = createClientFrameDecoder();
  assert.deepEqual(only(d.push(rawFrame(0x02, '00280078ffff'))), { ok: true, frame: { type: 'Resize', rows: 40, cols: 120 } });
});

test('a frame of the other direction is an unknown tag, not a lost stream', () => {
  assert.equal(payloadError(createClientFrameDecoder().push(encodeServerFrame({ type: 'Bell' }))).code, PROTOCOL_CODES.unknownTag);
  assert.equal(payloadError(createServerFrameDecoder().push(encodeClientFrame({ type: 'FocusIn' }))).code, PROTOCOL_CODES.unknownTag);
});

// ---------------------------------------------------------------------------------------------------------
// AttachControl errors carry the request id, so the capsule can answer under it.

function control(kind: number, requestId: bigint, context: string | Buffer, body = ''): Buffer {
  const ctx = typeof context === 'string' ? Buffer.from(context, 'utf8') : context;
  const p = Buffer.alloc(11);
  p[0] = kind;
  p.writeBigUInt64BE(requestId, 1);
  p.writeUInt16BE(ctx.length, 9);
  return rawFrame(0x0e, Buffer.concat([p, ctx, Buffer.from(body, 'hex')]));
}

test('AttachControl with an invalid context is E_BAD_CONTEXT with the request id', () => {
  for (const ctx of ['null', '{"v":2}', '{"v":1,"x":"y"}', '{"v":1,"invocation_id":"nope"}', '{"v":1,"session_id":""}', 'nojson', '[]']) {
    const e = payloadError(createClientFrameDecoder().push(control(2, 77n, ctx)));
    assert.equal(e.code, PROTOCOL_CODES.badContext, ctx);
    assert.equal(e.requestId, 77n);
  }
  const notUtf8 = payloadError(createClientFrameDecoder().push(control(2, 78n, Buffer.from([0x7b, 0xff, 0x7d]))));
  assert.equal(notUtf8.code, PROTOCOL_CODES.badContext);
  assert.equal(notUtf8.requestId, 78n);
});

test('AttachControl body errors, unknown kinds and overrunning contexts carry the request id', () => {
  const cases: Array<[Buffer, string]> = [
    [control(9, 5n, '{"v":1}'), PROTOCOL_CODES.badEnum],
    [control(1, 6n, '{"v":1}', '00'), PROTOCOL_CODES.trailing],
    [control(4, 7n, '{"v":1}', '63ff'), PROTOCOL_CODES.badEnum],
    [control(4, 8n, '{"v":1}', '01'), PROTOCOL_CODES.badLength],
    [control(5, 9n, '{"v":1}', '0000000000000001010000000004000001'), PROTOCOL_CODES.badValue],
    [control(7, 10n, '{"v":1}', '0000000000000001'), PROTOCOL_CODES.short],
    [control(8, 11n, '{"v":1}', ''), PROTOCOL_CODES.badLength],
  ];
  for (const [bytes, code] of cases) {
    const e = payloadError(createClientFrameDecoder().push(bytes));
    assert.equal(e.code, code);
    assert.equal(e.requestId, BigInt(bytes.readBigUInt64BE(6)));
  }
  // The context length runs past the payload.
  const p = Buffer.from('02000000000000000c00ff7b7d', 'hex');
  const e = payloadError(createClientFrameDecoder().push(rawFrame(0x0e, p)));
  assert.equal(e.code, PROTOCOL_CODES.short);
  assert.equal(e.requestId, 12n);
  // Too short to hold a request id: nothing to answer under.
  assert.equal(payloadError(createClientFrameDecoder().push(rawFrame(0x0e, '0200'))).requestId, undefined);
});

test('Welcome: 4 bytes is upstream (features null); a malformed block is always E_BAD_EXTENSIONS', () => {
  assert.deepEqual(only(createServerFrameDecoder().push(rawFrame(0x81, '00000002'))), {
    ok: true,
    frame: { type: 'Welcome', sessions: 2, features: null },
  });
  for (const tail of ['4a', '4a58', '4a5801', '4a58010106', 'ffffffffffff']) {
    const e = payloadError(createServerFrameDecoder().push(rawFrame(0x81, `00000002${tail}`)));
    assert.equal(e.code, PROTOCOL_CODES.badExtensions, tail);
  }
});

test('Hello rejects out-of-range lengths with E_BAD_LENGTH and bad enumerations with E_BAD_ENUM', () => {
  const minimal = encodeClientFrame(helloFrame(24, 80)).subarray(FRAME_HEADER_BYTES);
  assert.equal(minimal.length, 30);
  const hello = (mutate: (p: Buffer) => Buffer) => createClientFrameDecoder().push(rawFrame(0x01, mutate(Buffer.from(minimal))));
  const set = (i: number, v: number) => (p: Buffer) => {
    p[i] = v;
    return p;
  };
  assert.equal(payloadError(hello(set(4, 4))).code, PROTOCOL_CODES.badEnum); // spawn kind 4
  assert.equal(payloadError(hello((p) => (p.writeUInt16BE(65, 7), p))).code, PROTOCOL_CODES.badLength); // env count 65
  assert.equal(payloadError(hello(set(9, 2))).code, PROTOCOL_CODES.badEnum); // focus kind 2
  assert.equal(payloadError(hello((p) => (p.writeUInt16BE(1025, 10), p))).code, PROTOCOL_CODES.badLength); // TERM 1025
  assert.equal(payloadError(hello(set(16, 2))).code, PROTOCOL_CODES.badEnum); // fg presence 2
  assert.equal(payloadError(hello(set(18, 3))).code, PROTOCOL_CODES.badEnum); // capability 3
  assert.equal(payloadError(hello(set(23, 3))).code, PROTOCOL_CODES.badEnum); // image protocol 3
  assert.equal(payloadError(hello((p) => Buffer.concat([p.subarray(0, 24), Buffer.from('000131', 'hex')]))).code, PROTOCOL_CODES.badContext);
  // Kind 2 without a label, kind 3 with an empty provider.
  assert.equal(payloadError(hello(set(4, 2))).code, PROTOCOL_CODES.badValue);
  const p3 = Buffer.concat([Buffer.from('00180050030001610000', 'hex'), minimal.subarray(7)]);
  assert.equal(payloadError(createClientFrameDecoder().push(rawFrame(0x01, p3))).code, PROTOCOL_CODES.badLength);
});

test('a payload spanning pushes is assembled in a buffer from the given allocator; one inside a push is a view', () => {
  const sizes: number[] = [];
  const decoder = createServerFrameDecoder((n) => {
    sizes.push(n);
    return Buffer.alloc(n);
  });
  const frame = encodeServerFrame({ type: 'Output', bytes: Buffer.from('abcdefgh') });
  assert.deepEqual(
    decoder.push(frame).map((i) => (i.ok ? i.frame.type : 'error')),
    ['Output'],
  );
  assert.deepEqual(sizes, []);
  decoder.push(frame.subarray(0, 8));
  const items = decoder.push(frame.subarray(8));
  assert.deepEqual(sizes, [frame.length - 5]);
  assert.ok(items[0]?.ok && items[0].frame.type === 'Output' && Buffer.from(items[0].frame.bytes).toString() === 'abcdefgh');
});

test('streamed Output: each push hands over what it carries of the payload at once, as a view; other frames still wait to be whole', () => {
  const d = createServerFrameDecoder(undefined, { streamOutput: true });
  const payload = Buffer.from('x'.repeat(1000));
  const stream = Buffer.concat([
    rawFrame(SERVER_TAGS.Output, payload),
    encodeServerFrame({ type: 'ExitStatus', status: 3 }),
    rawFrame(SERVER_TAGS.Output, Buffer.alloc(0)),
  ]);
  const parts = (items: Array<DecodeItem<ServerFrame>>) =>
    items.map((i) => (i.ok && i.frame.type === 'Output' ? i.frame.bytes.length : i.ok ? i.frame.type : 'error'));
  // The header and 395 payload bytes: out at once, nothing held back.
  const first = stream.subarray(0, 400);
  const a = d.push(first);
  assert.deepEqual(parts(a), [395]);
  assert.equal(d.bufferedBytes, 0);
  assert.ok(a[0]!.ok && a[0]!.frame.type === 'Output' && a[0]!.frame.bytes.buffer === stream.buffer, 'a view of the read, not a copy');
  // The rest of the payload and part of the next frame's header.
  assert.deepEqual(parts(d.push(stream.subarray(400, 1007))), [605]);
  assert.equal(d.bufferedBytes, 2);
  // The ExitStatus is delivered only whole; the empty Output as one empty part.
  assert.deepEqual(parts(d.push(stream.subarray(1007, 1009))), []);
  assert.deepEqual(parts(d.push(stream.subarray(1009))), ['ExitStatus', 0]);
  d.end();
  // Without the option the same stream gives whole frames (what `jackin export` reads).
  assert.deepEqual(parts(createServerFrameDecoder().push(stream)), [1000, 'ExitStatus', 0]);
});

test('streamed Output: a declared length over the cap is still refused on its header, and EOF inside the payload is truncation', () => {
  const d = createServerFrameDecoder(undefined, { streamOutput: true });
  assert.throws(() => d.push(header(SERVER_TAGS.Output, capForTag(SERVER_TAGS.Output) + 1)), isProtocolError(PROTOCOL_CODES.frameTooLarge, 'framing'));
  const e = createServerFrameDecoder(undefined, { streamOutput: true });
  assert.equal(e.push(Buffer.concat([header(SERVER_TAGS.Output, 10), Buffer.from('abc')])).length, 1);
  assert.throws(
    () => e.end(),
    (err: unknown) => isProtocolError(PROTOCOL_CODES.truncated, 'framing')(err) && /\(3 of 10 payload bytes\)/.test((err as Error).message),
  );
});
