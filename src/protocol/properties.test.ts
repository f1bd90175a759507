/**
 * Property tests: every frame variant of both directions round-trips through encode/decode, and no byte
 * stream (random, frame-shaped or a corrupted valid stream) makes a decoder throw anything but a
 * ProtocolError or hold more than a header plus the cap of the tag it is reading.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  CLIENT_TAGS,
  CONTEXT_MAX_SESSION_ID,
  IMAGE_FORMATS,
  MAX_CHUNK_BYTES,
  MAX_IMAGE_TRANSFER_BYTES,
  NOTICE_LEVELS,
  LISTED_LINK_SOURCES,
  RESOLVE_TARGETS,
  SERVER_TAGS,
  capForTag,
  createClientFrameDecoder,
  createServerFrameDecoder,
  encodeClientFrame,
  encodeServerFrame,
  FRAME_HEADER_BYTES,
  outputFrameBuffers,
  ProtocolError,
  type AttachContext,
  type Capabilities,
  type ClientFrame,
  type ControlBody,
  type DecodeItem,
  type Features,
  type FrameDecoder,
  type Rgb,
  type ServerFrame,
  type Spawn,
} from './index.ts';

type Of<U, T> = Extract<U, { type: T }>;

/** fc.record may build null-prototype objects, which never deep-equal a decoded frame. */
function rec<T>(model: { [K in keyof T]: fc.Arbitrary<T[K]> }): fc.Arbitrary<T> {
  return fc.record(model, { noNullPrototype: true });
}

/** Text whose UTF-8 length is within [min, max] bytes (unicode, so multi-byte characters are exercised). */
function text(min: number, max: number): fc.Arbitrary<string> {
  return fc.string({ unit: 'binary', minLength: min, maxLength: Math.min(max, 64) }).filter((s) => {
    const n = Buffer.byteLength(s, 'utf8');
    return n >= min && n <= max;
  });
}
const bytes = (min: number, max: number): fc.Arbitrary<Buffer> => fc.uint8Array({ minLength: min, maxLength: max }).map((a) => Buffer.from(a));
const u16 = fc.integer({ min: 0, max: 0xffff });
const u64 = fc.bigInt({ min: 0n, max: 2n ** 64n - 1n });
const safeU64 = fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER });
const format = fc.constantFrom(...IMAGE_FORMATS);
const tri = fc.constantFrom('unset' as const, 'false' as const, 'true' as const);
const rgb: fc.Arbitrary<Rgb | null> = fc.option(
  rec({ r: fc.integer({ min: 0, max: 255 }), g: fc.integer({ min: 0, max: 255 }), b: fc.integer({ min: 0, max: 255 }) }),
  { nil: null },
);

const context: fc.Arbitrary<AttachContext> = fc.record(
  {
    v: fc.constant(1 as const),
    traceparent: fc.string(),
    tracestate: text(0, 256),
    invocation_id: fc.uuid(),
    session_id: text(1, CONTEXT_MAX_SESSION_ID),
    job_id: fc.uuid(),
  },
  { requiredKeys: ['v'], noNullPrototype: true },
);

const features: fc.Arbitrary<Features> = fc.dictionary(fc.stringMatching(/^[a-z0-9][a-z0-9-]{0,31}$/), u16, {
  maxKeys: 64,
  noNullPrototype: true,
});

const spawn: fc.Arbitrary<Spawn> = fc.oneof(
  fc.constant({ kind: 'none' as const }),
  fc.constant({ kind: 'shell' as const }),
  rec({ kind: fc.constant('agent' as const), agent: text(1, 256) }),
  rec({ kind: fc.constant('agent-provider' as const), agent: text(1, 256), provider: text(1, 64) }),
);

const caps: fc.Arbitrary<Capabilities> = rec({
  pointerShapes: tri,
  truecolor: tri,
  synchronizedOutput: tri,
  osc8: tri,
  underlineStyle: tri,
  imageProtocol: fc.constantFrom('unset' as const, 'unsupported' as const, 'kitty' as const),
});

const termField = fc.option(text(1, 1024), { nil: null });

const hello: fc.Arbitrary<Of<ClientFrame, 'Hello'>> = rec({
  type: fc.constant('Hello' as const),
  rows: u16,
  cols: u16,
  spawn,
  env: fc.array(fc.tuple(text(0, 1024), text(0, 8192)), { maxLength: 64 }),
  focus: fc.option(u64, { nil: null }),
  term: termField,
  termProgram: termField,
  colorTerm: termField,
  fg: rgb,
  bg: rgb,
  caps,
  context: fc.option(context, { nil: null }),
});

/** One arbitrary per control body kind; the mapped type makes a missing kind a compile error. */
const controlBodies: { [K in ControlBody['kind']]: fc.Arbitrary<Extract<ControlBody, { kind: K }>> } = {
  Detach: fc.constant({ kind: 'Detach' }),
  FocusIn: fc.constant({ kind: 'FocusIn' }),
  FocusOut: fc.constant({ kind: 'FocusOut' }),
  ClipboardImage: rec({ kind: fc.constant('ClipboardImage' as const), format, bytes: bytes(1, 256) }),
  ClipboardImageStart: rec({
    kind: fc.constant('ClipboardImageStart' as const),
    transferId: u64,
    format,
    size: fc.integer({ min: 1, max: MAX_IMAGE_TRANSFER_BYTES }),
  }),
  ClipboardImageChunk: rec({ kind: fc.constant('ClipboardImageChunk' as const), transferId: u64, offset: safeU64, bytes: bytes(1, 256) }),
  ClipboardImageEnd: rec({ kind: fc.constant('ClipboardImageEnd' as const), transferId: u64, sha256: bytes(32, 32) }),
  ClipboardImageError: rec({ kind: fc.constant('ClipboardImageError' as const), message: text(1, 1024) }),
};

/** One arbitrary per client frame type; the mapped type makes a missing variant a compile error. */
const clientFrames: { [K in ClientFrame['type']]: fc.Arbitrary<Of<ClientFrame, K>> } = {
  Hello: hello,
  Resize: rec({ type: fc.constant('Resize' as const), rows: u16, cols: u16 }),
  Input: rec({ type: fc.constant('Input' as const), bytes: bytes(0, 256) }),
  Command: rec({ type: fc.constant('Command' as const), bytes: bytes(0, 256) }),
  Detach: fc.constant({ type: 'Detach' }),
  FocusIn: fc.constant({ type: 'FocusIn' }),
  FocusOut: fc.constant({ type: 'FocusOut' }),
  ClipboardImage: rec({ type: fc.constant('ClipboardImage' as const), format, bytes: bytes(1, 256) }),
  ClipboardImageStart: rec({
    type: fc.constant('ClipboardImageStart' as const),
    transferId: u64,
    format,
    size: fc.integer({ min: 1, max: MAX_IMAGE_TRANSFER_BYTES }),
  }),
  ClipboardImageChunk: rec({ type: fc.constant('ClipboardImageChunk' as const), transferId: u64, offset: safeU64, bytes: bytes(1, 256) }),
  ClipboardImageEnd: rec({ type: fc.constant('ClipboardImageEnd' as const), transferId: u64, sha256: bytes(32, 32) }),
  ClipboardImageError: rec({ type: fc.constant('ClipboardImageError' as const), message: text(1, 1024) }),
  HostNotice: rec({ type: fc.constant('HostNotice' as const), text: text(1, 2048) }),
  AttachControl: rec({
    type: fc.constant('AttachControl' as const),
    requestId: u64,
    context,
    body: fc.oneof(...Object.values(controlBodies)) as fc.Arbitrary<ControlBody>,
  }),
  ExtHello: rec({ type: fc.constant('ExtHello' as const), features }),
  Repaint: fc.constant({ type: 'Repaint' }),
  Resolve: rec({
    type: fc.constant('Resolve' as const),
    requestId: u64,
    target: fc.constantFrom(...RESOLVE_TARGETS),
    // 0xFFFF/0xFFFF is the cursor's encoding, so a cell never uses both.
    at: fc.option(rec({ row: fc.integer({ min: 0, max: 0xfffe }), col: u16 }), { nil: null }),
  }),
  StageOnly: rec({ type: fc.constant('StageOnly' as const), requestId: u64 }),
  ListLinks: rec({ type: fc.constant('ListLinks' as const), requestId: u64 }),
  HoldReplies: rec({ type: fc.constant('HoldReplies' as const), held: fc.boolean() }),
};

const serverFrames: { [K in ServerFrame['type']]: fc.Arbitrary<Of<ServerFrame, K>> } = {
  Welcome: rec({
    type: fc.constant('Welcome' as const),
    sessions: fc.integer({ min: 0, max: 0xffffffff }),
    features: fc.option(features, { nil: null }),
  }),
  Output: rec({ type: fc.constant('Output' as const), bytes: bytes(0, 256) }),
  SessionList: rec({ type: fc.constant('SessionList' as const), json: fc.json() }),
  Shutdown: rec({ type: fc.constant('Shutdown' as const), reason: fc.option(text(1, 256), { nil: null }) }),
  Bell: fc.constant({ type: 'Bell' }),
  HostOpenUrl: rec({
    type: fc.constant('HostOpenUrl' as const),
    url: fc.tuple(fc.constantFrom('http://', 'HTTPS://', 'https://', 'mailto:', 'MailTo:'), text(0, 200)).map(([a, b]) => a + b),
  }),
  FileExportStart: rec({
    type: fc.constant('FileExportStart' as const),
    exportId: u64,
    size: safeU64,
    source: text(1, 4096),
    name: text(1, 255),
    reveal: fc.boolean(),
    open: fc.boolean(),
  }),
  FileExportChunk: rec({ type: fc.constant('FileExportChunk' as const), exportId: u64, offset: safeU64, bytes: bytes(1, 256) }),
  FileExportEnd: rec({ type: fc.constant('FileExportEnd' as const), exportId: u64, sha256: bytes(32, 32) }),
  HostStageImageFromClipboardPath: fc.constant({ type: 'HostStageImageFromClipboardPath' }),
  HostPasteImageFromClipboard: fc.constant({ type: 'HostPasteImageFromClipboard' }),
  HostStageImageFromClipboard: fc.constant({ type: 'HostStageImageFromClipboard' }),
  HostRevealPath: rec({ type: fc.constant('HostRevealPath' as const), path: text(1, 4096) }),
  AttachControlResponse: rec({
    type: fc.constant('AttachControlResponse' as const),
    requestId: u64,
    result: fc.constantFrom('success' as const, 'invalid-correlation' as const, 'rejected' as const),
  }),
  ExitStatus: rec({ type: fc.constant('ExitStatus' as const), status: fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }) }),
  Notice: rec({ type: fc.constant('Notice' as const), level: fc.constantFrom(...NOTICE_LEVELS), text: text(1, 2048) }),
  Resolved: fc.oneof(
    rec({ type: fc.constant('Resolved' as const), requestId: u64, kind: fc.constant('none' as const), text: fc.constant('') }),
    rec({
      type: fc.constant('Resolved' as const),
      requestId: u64,
      kind: fc.constantFrom('osc8' as const, 'text' as const, 'offer' as const),
      text: text(1, 4096),
    }),
  ),
  ImageStaged: rec({ type: fc.constant('ImageStaged' as const), requestId: u64, bytes: safeU64, pasted: fc.boolean(), path: text(1, 4096) }),
  FileExportLength: rec({ type: fc.constant('FileExportLength' as const), exportId: u64, size: safeU64 }),
  Links: rec({
    type: fc.constant('Links' as const),
    requestId: u64,
    links: fc.array(rec({ row: u16, col: u16, cells: u16, source: fc.constantFrom(...LISTED_LINK_SOURCES), url: text(1, 2048) }), { maxLength: 8 }),
  }),
  RepliesHeld: rec({ type: fc.constant('RepliesHeld' as const), held: fc.boolean() }),
  Ports: rec({
    type: fc.constant('Ports' as const),
    ports: fc.uniqueArray(fc.integer({ min: 1, max: 0xffff }), { maxLength: 256 }).map((a) => a.sort((x, y) => x - y)),
  }),
  Modes: rec({
    type: fc.constant('Modes' as const),
    mouseTracking: fc.boolean(),
    sgrMouse: fc.boolean(),
    bracketedPaste: fc.boolean(),
    focusReporting: fc.boolean(),
    alternateScreen: fc.boolean(),
  }),
};

const anyClientFrame = fc.oneof(...Object.values(clientFrames)) as fc.Arbitrary<ClientFrame>;
const anyServerFrame = fc.oneof(...Object.values(serverFrames)) as fc.Arbitrary<ServerFrame>;

function decodeAll<F>(d: FrameDecoder<F>, b: Buffer): F[] {
  const out = d.push(b).map((i) => {
    if (!i.ok) throw i.error;
    return i.frame;
  });
  d.end();
  return out;
}

for (const [type, arb] of Object.entries(clientFrames) as Array<[string, fc.Arbitrary<ClientFrame>]>) {
  test(`client ${type}: decode(encode(f)) equals f`, () => {
    fc.assert(
      fc.property(arb, (f) => {
        assert.deepEqual(decodeAll(createClientFrameDecoder(), encodeClientFrame(f)), [f]);
      }),
      { numRuns: type === 'Hello' || type === 'AttachControl' ? 300 : 100 },
    );
  });
}

for (const [type, arb] of Object.entries(serverFrames) as Array<[string, fc.Arbitrary<ServerFrame>]>) {
  test(`server ${type}: decode(encode(f)) equals f`, () => {
    fc.assert(
      fc.property(arb, (f) => {
        assert.deepEqual(decodeAll(createServerFrameDecoder(), encodeServerFrame(f)), [f]);
      }),
      { numRuns: 100 },
    );
  });
}

test('AttachControl covers every control kind and Hello every spawn kind (arbitraries are not vacuous)', () => {
  const kinds = new Set<string>();
  const spawns = new Set<string>();
  for (const f of fc.sample(clientFrames.AttachControl, 400)) kinds.add(f.body.kind);
  for (const f of fc.sample(hello, 200)) spawns.add(f.spawn.kind);
  assert.deepEqual([...kinds].sort(), Object.keys(controlBodies).sort());
  assert.deepEqual([...spawns].sort(), ['agent', 'agent-provider', 'none', 'shell']);
});

test('a sequence of random frames in one stream, randomly sliced, decodes to the same sequence', () => {
  const cuts = (n: number) => fc.uniqueArray(fc.integer({ min: 0, max: n }), { maxLength: 30 }).map((a) => a.sort((x, y) => x - y));
  const check = <F>(frames: F[], encode: (f: F) => Buffer, make: () => FrameDecoder<F>) => {
    const stream = Buffer.concat(frames.map(encode));
    return fc.assert(
      fc.property(cuts(stream.length), (cs) => {
        const d = make();
        const got: F[] = [];
        let at = 0;
        for (const c of [...cs, stream.length]) {
          for (const i of d.push(stream.subarray(at, c))) {
            if (!i.ok) throw i.error;
            got.push(i.frame);
          }
          at = c;
        }
        d.end();
        assert.deepEqual(got, frames);
      }),
      { numRuns: 5 },
    );
  };
  fc.assert(
    fc.property(fc.array(anyClientFrame, { maxLength: 12 }), fc.array(anyServerFrame, { maxLength: 12 }), (cf, sf) => {
      check(cf, encodeClientFrame, createClientFrameDecoder);
      check(sf, encodeServerFrame, createServerFrameDecoder);
    }),
    { numRuns: 60 },
  );
});

test('outputFrameBuffers: header then the parts themselves, byte for byte the Output frame of their concatenation; over the cap is a RangeError', () => {
  fc.assert(
    fc.property(fc.array(fc.uint8Array({ maxLength: 300 }), { maxLength: 10 }), (arrays) => {
      const parts = arrays.map((a) => Buffer.from(a));
      const list = outputFrameBuffers(parts);
      assert.equal(list.length, parts.length + 1);
      parts.forEach((p, i) => assert.equal(list[i + 1], p, 'a part is written as it is, not copied'));
      assert.deepEqual(Buffer.concat(list), encodeServerFrame({ type: 'Output', bytes: Buffer.concat(parts) }));
    }),
    { numRuns: 200 },
  );
  const cap = capForTag(SERVER_TAGS.Output);
  assert.throws(() => outputFrameBuffers([Buffer.alloc(cap), Buffer.alloc(1)]), RangeError);
  assert.equal(outputFrameBuffers([Buffer.alloc(cap)]).length, 2);
});

test("the host's streamed decoder: same frames, Output in parts (views of the reads) that join up to each payload, whatever the slicing", () => {
  // Consecutive Output frames cannot be told apart once streamed (nor need they be: output is a byte
  // stream), so both sides are compared with each run of Output joined into one.
  const joined = (frames: ServerFrame[]): ServerFrame[] => {
    const out: ServerFrame[] = [];
    for (const f of frames) {
      const last = out[out.length - 1];
      if (f.type === 'Output' && last?.type === 'Output') out[out.length - 1] = { type: 'Output', bytes: Buffer.concat([last.bytes, f.bytes]) };
      else out.push(f.type === 'Output' ? { type: 'Output', bytes: Buffer.from(f.bytes) } : f);
    }
    return out;
  };
  const withOutput = fc.array(fc.oneof({ weight: 2, arbitrary: serverFrames.Output }, { weight: 1, arbitrary: anyServerFrame }), { maxLength: 12 });
  fc.assert(
    fc.property(
      withOutput.chain((frames) => {
        const stream = Buffer.concat(frames.map(encodeServerFrame));
        return fc.tuple(
          fc.constant(frames),
          fc.constant(stream),
          fc.uniqueArray(fc.integer({ min: 0, max: stream.length }), { maxLength: 30 }).map((a) => a.sort((x, y) => x - y)),
        );
      }),
      ([frames, stream, cuts]) => {
        const d = createServerFrameDecoder(undefined, { streamOutput: true });
        const got: ServerFrame[] = [];
        let at = 0;
        for (const c of [...cuts, stream.length]) {
          const slice = stream.subarray(at, c);
          for (const i of d.push(slice)) {
            if (!i.ok) throw i.error;
            if (i.frame.type === 'Output' && i.frame.bytes.length > 0)
              assert.equal(i.frame.bytes.buffer, stream.buffer, 'an Output part is a view, not a copy');
            got.push(i.frame);
          }
          at = c;
        }
        d.end();
        assert.deepEqual(joined(got), joined(frames));
        assert.equal(got.filter((f) => f.type !== 'Output').length, frames.filter((f) => f.type !== 'Output').length);
      },
    ),
    { numRuns: 300 },
  );
});

// ---------------------------------------------------------------------------------------------------------
// Hostile input.

/**
 * Feeds `stream` in the given slices and checks, after every push, that the decoder holds exactly what a
 * reference walk of the stream says is pending: a partial header (< 5 bytes) or the payload bytes of the
 * frame being read, which never exceed that tag's cap. Returns quietly when the decoder reports a framing
 * error; any thrown value that is not a ProtocolError fails the property.
 */
function feedHostile<F>(d: FrameDecoder<F>, stream: Buffer, cuts: number[]): void {
  let at = 0;
  let frameStart = 0;
  for (const c of [...cuts, stream.length]) {
    try {
      for (const i of d.push(stream.subarray(at, c))) {
        if (!i.ok) {
          assert.ok(i.error instanceof ProtocolError);
          assert.equal(i.error.kind, 'payload');
        }
      }
    } catch (e) {
      if (!(e instanceof ProtocolError)) throw e;
      assert.equal(e.kind, 'framing');
      assert.equal(e.code, 'E_FRAME_TOO_LARGE');
      assert.throws(() => d.push(Buffer.alloc(1)), ProtocolError);
      return;
    }
    // A framing error found after complete frames in the same push is held for the next call.
    if (d.failure) {
      assert.equal(d.failure.code, 'E_FRAME_TOO_LARGE');
      assert.equal(d.bufferedBytes, 0);
      assert.throws(
        () => d.push(Buffer.alloc(1)),
        (e: unknown) => e === d.failure,
      );
      return;
    }
    at = c;
    // Reference walk: skip every frame completed within the first `at` bytes.
    for (;;) {
      if (at - frameStart < FRAME_HEADER_BYTES) break;
      const len = stream.readUInt32BE(frameStart + 1);
      if (at - frameStart - FRAME_HEADER_BYTES < len) break;
      frameStart += FRAME_HEADER_BYTES + len;
    }
    const pending = at - frameStart;
    if (pending < FRAME_HEADER_BYTES) {
      assert.equal(d.bufferedBytes, pending);
    } else {
      const cap = capForTag(stream[frameStart]!);
      assert.equal(d.bufferedBytes, pending - FRAME_HEADER_BYTES);
      assert.ok(d.bufferedBytes <= FRAME_HEADER_BYTES + cap, `holds ${d.bufferedBytes} > 5 + cap ${cap}`);
    }
  }
  try {
    d.end();
  } catch (e) {
    if (!(e instanceof ProtocolError)) throw e;
    assert.equal(e.code, 'E_FRAME_TRUNCATED');
    assert.notEqual(frameStart, stream.length, 'truncation reported at a frame boundary');
    return;
  }
  assert.equal(frameStart, stream.length, 'clean end reported inside a frame');
}

const ALL_TAGS = [...Object.values(CLIENT_TAGS), ...Object.values(SERVER_TAGS)];
/** Frames with an honest length and a random payload, so the payload decoders see random content. */
const frameShaped = fc
  .array(fc.tuple(fc.oneof(fc.constantFrom(...ALL_TAGS), fc.integer({ min: 0, max: 255 })), fc.uint8Array({ maxLength: 96 })), { maxLength: 16 })
  .map((fs) =>
    Buffer.concat(
      fs.map(([tag, p]) => {
        const h = Buffer.alloc(FRAME_HEADER_BYTES);
        h[0] = tag;
        h.writeUInt32BE(Math.min(p.length, capForTag(tag)), 1);
        return Buffer.concat([h, Buffer.from(p).subarray(0, capForTag(tag))]);
      }),
    ),
  );

function withCuts(a: fc.Arbitrary<Buffer>): fc.Arbitrary<[Buffer, number[]]> {
  return a.chain((b) =>
    fc.tuple(
      fc.constant(b),
      fc.uniqueArray(fc.integer({ min: 0, max: b.length }), { maxLength: 20 }).map((x) => x.sort((p, q) => p - q)),
    ),
  );
}

/** Valid frame streams with random bytes overwritten, inserted or removed. */
function corrupted<F>(frames: fc.Arbitrary<F>, encode: (f: F) => Buffer): fc.Arbitrary<Buffer> {
  return fc
    .tuple(
      fc.array(frames, { minLength: 1, maxLength: 6 }),
      fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 }), fc.constantFrom('set', 'insert', 'delete')), {
        minLength: 1,
        maxLength: 6,
      }),
    )
    .map(([fs, edits]) => {
      const b = [...Buffer.concat(fs.map(encode))];
      for (const [pos, byte, op] of edits) {
        const i = pos % (b.length + 1);
        if (op === 'set' && i < b.length) b[i] = byte;
        else if (op === 'insert') b.splice(i, 0, byte);
        else b.splice(i, 1);
      }
      return Buffer.from(b);
    });
}

const hostileStreams = fc.oneof(
  fc.uint8Array({ maxLength: 512 }).map((a) => Buffer.from(a)),
  frameShaped,
  corrupted(anyClientFrame, encodeClientFrame),
  corrupted(anyServerFrame, encodeServerFrame),
);

test('random, frame-shaped and corrupted streams: decoders return items or throw only ProtocolError, bounded', () => {
  fc.assert(
    fc.property(withCuts(hostileStreams), ([stream, cuts]) => {
      feedHostile(createClientFrameDecoder(), stream, cuts);
      feedHostile(createServerFrameDecoder(), stream, cuts);
    }),
    { numRuns: 3000 },
  );
});

test('a large declared length is refused before its payload is buffered, whatever the slicing', () => {
  fc.assert(
    fc.property(
      fc.constantFrom(...ALL_TAGS, 0x00, 0x7f, 0xff),
      fc.integer({ min: 1, max: 2 ** 32 - 1 - 16 * 1024 * 1024 }),
      fc.integer({ min: 1, max: 5 }),
      (tag, over, split) => {
        const h = Buffer.alloc(FRAME_HEADER_BYTES);
        h[0] = tag;
        h.writeUInt32BE(capForTag(tag) + over, 1);
        const d = createClientFrameDecoder();
        assert.deepEqual(d.push(h.subarray(0, split - 1)), []);
        assert.throws(
          () => d.push(h.subarray(split - 1)),
          (e: unknown) => e instanceof ProtocolError && e.code === 'E_FRAME_TOO_LARGE' && e.kind === 'framing' && e.tag === tag,
        );
        assert.equal(d.bufferedBytes, 0);
      },
    ),
  );
});

test('the chunk data arbitraries reach the chunk limit in the encoder only through the cap', () => {
  // A chunk body of exactly MAX_CHUNK_BYTES is the largest the cap allows; one more cannot be encoded.
  const f: ClientFrame = { type: 'ClipboardImageChunk', transferId: 1n, offset: 0, bytes: Buffer.alloc(MAX_CHUNK_BYTES, 7) };
  assert.deepEqual(decodeAll(createClientFrameDecoder(), encodeClientFrame(f)), [f]);
  assert.throws(() => encodeClientFrame({ ...f, bytes: Buffer.alloc(MAX_CHUNK_BYTES + 1) }), RangeError);
});

/**
 * Pushes each slice of `stream` from one scratch buffer that is overwritten right after the push (a socket
 * read into a reused buffer), collecting what a decoder returns and throws.
 */
function feedBorrowed<F>(d: FrameDecoder<F>, stream: Buffer, cuts: number[]): { items: Array<DecodeItem<F>>; thrown: unknown } {
  const scratch = Buffer.alloc(stream.length + 1);
  const items: Array<DecodeItem<F>> = [];
  let at = 0;
  try {
    for (const c of [...cuts, stream.length]) {
      const n = stream.copy(scratch, 0, at, c);
      items.push(...d.push(scratch.subarray(0, n)));
      scratch.fill(0xa5);
      at = c;
    }
    d.end();
  } catch (e) {
    return { items, thrown: e };
  }
  return { items, thrown: undefined };
}

test('the copying decoder keeps nothing of a pushed chunk: fed from one buffer overwritten after every push, it returns what the plain decoder returns, whatever the slicing', () => {
  fc.assert(
    fc.property(
      fc.array(anyServerFrame, { maxLength: 12 }).chain((frames) => {
        const stream = Buffer.concat(frames.map(encodeServerFrame));
        return fc.tuple(fc.constant(frames), fc.constant(stream), fc.uniqueArray(fc.integer({ min: 0, max: stream.length }), { maxLength: 30 }));
      }),
      ([frames, stream, cs]) => {
        const cuts = cs.sort((x, y) => x - y);
        const { items, thrown } = feedBorrowed(createServerFrameDecoder(undefined, { copyInput: true }), stream, cuts);
        assert.equal(thrown, undefined);
        assert.deepEqual(
          items.map((i) => (i.ok ? i.frame : i.error)),
          frames,
        );
      },
    ),
    { numRuns: 200 },
  );
});

test('on random, frame-shaped and corrupted streams the copying decoder returns and throws what the plain decoder does', () => {
  fc.assert(
    fc.property(withCuts(hostileStreams), ([stream, cuts]) => {
      const plain = createServerFrameDecoder();
      const plainItems: Array<DecodeItem<ServerFrame>> = [];
      let plainThrown: unknown;
      try {
        let at = 0;
        for (const c of [...cuts, stream.length]) {
          plainItems.push(...plain.push(stream.subarray(at, c)));
          at = c;
        }
        plain.end();
      } catch (e) {
        plainThrown = e;
      }
      const copying = createServerFrameDecoder(undefined, { copyInput: true });
      const { items, thrown } = feedBorrowed(copying, stream, cuts);
      assert.deepEqual(items, plainItems);
      assert.deepEqual(thrown, plainThrown);
      assert.equal(copying.bufferedBytes, plain.bufferedBytes);
    }),
    { numRuns: 3000 },
  );
});
