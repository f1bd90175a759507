/**
 * The normative upstream vectors (../shared/vectors/attach-v1.json, copied to test/vectors/ so the repo is
 * self-contained) and this project's extension vectors (test/vectors/extensions-v1.json): every frame
 * decodes to its meaning and encodes back to its exact bytes, under any slicing of the stream; every invalid
 * entry is rejected with a protocol error code.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import fc from 'fast-check';
import {
  CLIENT_TAGS,
  SERVER_TAGS,
  capForTag,
  createClientFrameDecoder,
  createServerFrameDecoder,
  encodeClientFrame,
  encodeServerFrame,
  FRAME_HEADER_BYTES,
  PROTOCOL_CODES,
  ProtocolError,
  type AttachContext,
  type Capabilities,
  type ClientFrame,
  type ControlBody,
  type DecodeItem,
  type Direction,
  type Features,
  type Frame,
  type ImageFormat,
  type ListedLink,
  type NoticeLevel,
  type Rgb,
  type ServerFrame,
  type Spawn,
} from './index.ts';

const repoRoot = new URL('../../', import.meta.url);
const sharedVectors = new URL('../shared/vectors/attach-v1.json', repoRoot);
const localVectors = new URL('test/vectors/attach-v1.json', repoRoot);
const extensionVectors = new URL('test/vectors/extensions-v1.json', repoRoot);

interface VectorFrame {
  name: string;
  direction: Direction;
  hex: string;
  meaning: Record<string, unknown>;
}
interface VectorInvalid {
  direction: Direction;
  tag: string;
  payload_hex: string;
  why: string;
  /** Only in the extension vectors: the exact code and kind expected. */
  code?: string;
  kind?: 'payload' | 'framing';
}
interface VectorFile {
  caps: Record<string, number>;
  frames: VectorFrame[];
  invalid: VectorInvalid[];
}

function load(url: URL): VectorFile {
  return JSON.parse(readFileSync(url, 'utf8')) as VectorFile;
}

/** The upstream file from shared/ when the checkout has it beside the repo, else the repo's copy. */
const upstream = load(existsSync(sharedVectors) ? sharedVectors : localVectors);
const extensions = load(extensionVectors);

// ---------------------------------------------------------------------------------------------------------
// Vector meaning (snake_case JSON) → frame objects. Every key of a meaning must be consumed, so a field the
// converter ignored cannot make a vector pass by accident.

class Meaning {
  readonly #left: Set<string>;
  readonly #m: Record<string, unknown>;
  constructor(m: Record<string, unknown>) {
    this.#m = m;
    this.#left = new Set(Object.keys(m));
  }
  has(key: string): boolean {
    return Object.hasOwn(this.#m, key);
  }
  get(key: string): unknown {
    if (!this.has(key)) throw new Error(`vector meaning lacks ${key}: ${JSON.stringify(this.#m)}`);
    this.#left.delete(key);
    return this.#m[key];
  }
  opt<T>(key: string, fallback: T): unknown {
    return this.has(key) ? this.get(key) : fallback;
  }
  num(key: string): number {
    const v = this.get(key);
    if (typeof v !== 'number') throw new Error(`vector meaning ${key} is not a number: ${JSON.stringify(v)}`);
    return v;
  }
  str(key: string): string {
    const v = this.get(key);
    if (typeof v !== 'string') throw new Error(`vector meaning ${key} is not a string: ${JSON.stringify(v)}`);
    return v;
  }
  big(key: string): bigint {
    const v = this.get(key);
    if (typeof v !== 'number' && typeof v !== 'string') throw new Error(`vector meaning ${key} is not an id`);
    return BigInt(v);
  }
  nullableStr(key: string): string | null {
    const v = this.opt(key, null);
    if (v !== null && typeof v !== 'string') throw new Error(`vector meaning ${key} is not a string or null`);
    return v;
  }
  /** `bytes_hex` or `bytes_utf8`. */
  bytes(prefix = 'bytes'): Buffer {
    if (this.has(`${prefix}_hex`)) return Buffer.from(this.str(`${prefix}_hex`), 'hex');
    return Buffer.from(this.str(`${prefix}_utf8`), 'utf8');
  }
  id(): bigint {
    for (const k of ['id', 'transfer_id', 'export_id']) if (this.has(k)) return this.big(k);
    throw new Error(`vector meaning has no id: ${JSON.stringify(this.#m)}`);
  }
  done(): void {
    if (this.#left.size > 0) throw new Error(`vector meaning fields not converted: ${[...this.#left].join(', ')}`);
  }
}

const TRI = ['unset', 'false', 'true'] as const;
const IMAGE_PROTOCOLS = ['unset', 'unsupported', 'kitty'] as const;

function pick<T>(values: readonly T[], i: unknown, what: string): T {
  const v = typeof i === 'number' ? values[i] : undefined;
  if (v === undefined) throw new Error(`vector ${what} ${JSON.stringify(i)} is not known`);
  return v;
}

function caps(v: unknown): Capabilities {
  const a = v as unknown[];
  return {
    pointerShapes: pick(TRI, a[0], 'capability'),
    truecolor: pick(TRI, a[1], 'capability'),
    synchronizedOutput: pick(TRI, a[2], 'capability'),
    osc8: pick(TRI, a[3], 'capability'),
    underlineStyle: pick(TRI, a[4], 'capability'),
    imageProtocol: pick(IMAGE_PROTOCOLS, a[5], 'image protocol'),
  };
}

function rgb(v: unknown): Rgb | null {
  if (v === null) return null;
  if (Array.isArray(v)) return { r: v[0] as number, g: v[1] as number, b: v[2] as number };
  return v as Rgb;
}

function spawn(m: Meaning): Spawn {
  const kind = m.opt('spawn', 'none');
  switch (kind) {
    case 'none':
      return { kind: 'none' };
    case 'shell':
      return { kind: 'shell' };
    case 'agent':
      return { kind: 'agent', agent: m.str('agent') };
    case 'agent_provider':
    case 'agent-provider':
      return { kind: 'agent-provider', agent: m.str('agent'), provider: m.str('provider') };
    default:
      throw new Error(`vector spawn ${JSON.stringify(kind)} is not known`);
  }
}

function controlBody(m: Meaning): ControlBody {
  const kind = m.str('kind');
  switch (kind) {
    case 'Detach':
    case 'FocusIn':
    case 'FocusOut':
      return { kind };
    case 'ClipboardImage':
      return { kind, format: m.str('format') as ImageFormat, bytes: m.bytes() };
    case 'ClipboardImageStart':
      return { kind, transferId: m.id(), format: m.str('format') as ImageFormat, size: m.num('size') };
    case 'ClipboardImageChunk':
      return { kind, transferId: m.id(), offset: m.num('offset'), bytes: m.bytes() };
    case 'ClipboardImageEnd':
      return { kind, transferId: m.id(), sha256: m.bytes('sha256') };
    case 'ClipboardImageError':
      return { kind, message: m.str('message') };
    default:
      throw new Error(`vector control kind ${kind} is not known`);
  }
}

function clientFrame(m: Meaning): ClientFrame {
  const type = m.str('type');
  switch (type) {
    case 'Hello': {
      // Fields a vector leaves out take the values of the minimal Hello (24x80, nothing set, context null).
      const focus = m.opt('focus', null);
      return {
        type,
        rows: m.has('rows') ? m.num('rows') : 24,
        cols: m.has('cols') ? m.num('cols') : 80,
        spawn: spawn(m),
        env: m.opt('env', []) as Array<[string, string]>,
        focus: focus === null ? null : BigInt(focus as number),
        term: m.nullableStr('term'),
        termProgram: m.nullableStr('term_program'),
        colorTerm: m.nullableStr('colorterm'),
        fg: rgb(m.opt('fg', null)),
        bg: rgb(m.opt('bg', null)),
        caps: caps(m.opt('caps', [0, 0, 0, 0, 0, 0])),
        context: m.opt('context', null) as AttachContext | null,
      };
    }
    case 'Resize':
      return { type, rows: m.num('rows'), cols: m.num('cols') };
    case 'Input':
    case 'Command':
      return { type, bytes: m.bytes() };
    case 'Detach':
    case 'FocusIn':
    case 'FocusOut':
    case 'Repaint':
      return { type };
    case 'ClipboardImage':
      return { type, format: m.str('format') as ImageFormat, bytes: m.bytes() };
    case 'ClipboardImageStart':
      return { type, transferId: m.id(), format: m.str('format') as ImageFormat, size: m.num('size') };
    case 'ClipboardImageChunk':
      return { type, transferId: m.id(), offset: m.num('offset'), bytes: m.bytes() };
    case 'ClipboardImageEnd':
      return { type, transferId: m.id(), sha256: m.bytes('sha256') };
    case 'ClipboardImageError':
      return { type, message: m.str('message') };
    case 'HostNotice':
      return { type, text: m.str('text') };
    case 'AttachControl':
      return {
        type,
        requestId: m.big('request_id'),
        context: m.get('context') as AttachContext,
        body: controlBody(m),
      };
    case 'ExtHello':
      return { type, features: m.get('features') as Features };
    case 'Resolve':
      return {
        type,
        requestId: m.big('request_id'),
        target: m.str('target') as 'link',
        at: m.get('at') as { row: number; col: number } | null,
      };
    case 'StageOnly':
    case 'ListLinks':
      return { type, requestId: m.big('request_id') };
    case 'HoldReplies':
      return { type, held: m.get('held') as boolean };
    default:
      throw new Error(`vector client frame type ${type} is not known`);
  }
}

function serverFrame(m: Meaning): ServerFrame {
  const type = m.str('type');
  switch (type) {
    case 'Welcome':
      return { type, sessions: m.num('sessions'), features: m.opt('features', null) as Features | null };
    case 'Output':
      return { type, bytes: m.bytes() };
    case 'SessionList':
      return { type, json: m.str('json') };
    case 'Shutdown':
      return { type, reason: m.nullableStr('reason') };
    case 'Bell':
    case 'HostStageImageFromClipboardPath':
    case 'HostPasteImageFromClipboard':
    case 'HostStageImageFromClipboard':
      return { type };
    case 'HostOpenUrl':
      return { type, url: m.str('url') };
    case 'FileExportStart':
      return {
        type,
        exportId: m.id(),
        size: m.num('size'),
        source: m.str('source'),
        name: m.str('name'),
        reveal: m.get('reveal') as boolean,
        open: m.get('open') as boolean,
      };
    case 'FileExportChunk':
      return { type, exportId: m.id(), offset: m.num('offset'), bytes: m.bytes() };
    case 'FileExportEnd':
      return { type, exportId: m.id(), sha256: m.bytes('sha256') };
    case 'HostRevealPath':
      return { type, path: m.str('path') };
    case 'AttachControlResponse':
      return { type, requestId: m.big('request_id'), result: m.str('result') as 'success' };
    case 'ExitStatus':
      return { type, status: m.num('status') };
    case 'Notice':
      return { type, level: m.str('level') as NoticeLevel, text: m.str('text') };
    case 'Resolved':
      return { type, requestId: m.big('request_id'), kind: m.str('kind') as 'none', text: m.str('text') };
    case 'ImageStaged':
      return { type, requestId: m.big('request_id'), bytes: m.num('bytes'), pasted: m.get('pasted') as boolean, path: m.str('path') };
    case 'FileExportLength':
      return { type, exportId: m.id(), size: m.num('size') };
    case 'Links':
      return { type, requestId: m.big('request_id'), links: m.get('links') as ListedLink[] };
    case 'RepliesHeld':
      return { type, held: m.get('held') as boolean };
    case 'Ports':
      return { type, ports: m.get('ports') as number[] };
    case 'Modes':
      return {
        type,
        mouseTracking: m.get('mouseTracking') as boolean,
        sgrMouse: m.get('sgrMouse') as boolean,
        bracketedPaste: m.get('bracketedPaste') as boolean,
        focusReporting: m.get('focusReporting') as boolean,
        alternateScreen: m.get('alternateScreen') as boolean,
      };
    default:
      throw new Error(`vector server frame type ${type} is not known`);
  }
}

function frameOf(v: VectorFrame): Frame {
  const m = new Meaning(v.meaning);
  const f = v.direction === 'client' ? clientFrame(m) : serverFrame(m);
  m.done();
  return f;
}

// ---------------------------------------------------------------------------------------------------------

function encode(direction: Direction, f: Frame): Buffer {
  return direction === 'client' ? encodeClientFrame(f as ClientFrame) : encodeServerFrame(f as ServerFrame);
}

function decoderFor(direction: Direction): { push(b: Buffer): Array<DecodeItem<Frame>>; end(): void } {
  return direction === 'client' ? createClientFrameDecoder() : createServerFrameDecoder();
}

/** Feeds `bytes` cut at `cuts` (sorted offsets) and returns every item, checking the clean end. */
function decodeSliced(direction: Direction, bytes: Buffer, cuts: number[]): Array<DecodeItem<Frame>> {
  const d = decoderFor(direction);
  const out: Array<DecodeItem<Frame>> = [];
  let at = 0;
  for (const c of [...cuts, bytes.length]) {
    out.push(...d.push(bytes.subarray(at, c)));
    at = c;
  }
  d.end();
  return out;
}

function okFrames(items: Array<DecodeItem<Frame>>): Frame[] {
  return items.map((i) => {
    if (!i.ok) throw i.error;
    return i.frame;
  });
}

function cutsArb(length: number): fc.Arbitrary<number[]> {
  return fc.uniqueArray(fc.integer({ min: 0, max: length }), { maxLength: Math.min(length + 1, 40) }).map((a) => a.sort((x, y) => x - y));
}

function frameVectorTests(label: string, file: VectorFile): void {
  for (const v of file.frames) {
    test(`${label} ${v.name}: decodes to its meaning and encodes back to its bytes`, () => {
      const bytes = Buffer.from(v.hex, 'hex');
      const expected = frameOf(v);
      assert.deepEqual(okFrames(decodeSliced(v.direction, bytes, [])), [expected]);
      assert.equal(encode(v.direction, expected).toString('hex'), v.hex);
    });

    test(`${label} ${v.name}: decodes one byte at a time and in random slices`, () => {
      const bytes = Buffer.from(v.hex, 'hex');
      const expected = frameOf(v);
      const everyByte = Array.from({ length: bytes.length }, (_, i) => i);
      assert.deepEqual(okFrames(decodeSliced(v.direction, bytes, everyByte)), [expected]);
      fc.assert(
        fc.property(cutsArb(bytes.length), (cuts) => {
          assert.deepEqual(okFrames(decodeSliced(v.direction, bytes, cuts)), [expected]);
        }),
        { numRuns: 50 },
      );
    });
  }

  for (const direction of ['client', 'server'] as const) {
    const vs = file.frames.filter((v) => v.direction === direction);
    if (vs.length === 0) continue;
    test(`${label}: all ${direction} vectors concatenated decode to the same sequence, however sliced`, () => {
      const stream = Buffer.concat(vs.map((v) => Buffer.from(v.hex, 'hex')));
      const expected = vs.map(frameOf);
      assert.deepEqual(okFrames(decodeSliced(direction, stream, [])), expected);
      const everyByte = Array.from({ length: stream.length }, (_, i) => i);
      assert.deepEqual(okFrames(decodeSliced(direction, stream, everyByte)), expected);
      fc.assert(
        fc.property(cutsArb(stream.length), (cuts) => {
          assert.deepEqual(okFrames(decodeSliced(direction, stream, cuts)), expected);
        }),
        { numRuns: 100 },
      );
    });
  }

  const codes = new Set<string>(Object.values(PROTOCOL_CODES));
  for (const inv of file.invalid) {
    test(`${label} invalid ${inv.direction} ${inv.tag}: ${inv.why}`, () => {
      const tag = Number.parseInt(inv.tag, 16);
      const payload = Buffer.from(inv.payload_hex, 'hex');
      const header = Buffer.alloc(FRAME_HEADER_BYTES);
      header[0] = tag;
      header.writeUInt32BE(payload.length, 1);
      const d = decoderFor(inv.direction);
      let error: unknown;
      let items: Array<DecodeItem<Frame>> = [];
      try {
        items = d.push(Buffer.concat([header, payload]));
      } catch (e) {
        error = e;
      }
      if (error === undefined) {
        assert.equal(items.length, 1, 'one item for one frame');
        const item = items[0]!;
        assert.equal(
          item.ok,
          false,
          `decoded instead of rejected: ${JSON.stringify(item.ok && item.frame, (_k, x: unknown) => (typeof x === 'bigint' ? String(x) : x))}`,
        );
        if (!item.ok) error = item.error;
      }
      assert.ok(error instanceof ProtocolError, `a ProtocolError, not ${String(error)}`);
      assert.ok(codes.has(error.code), `code ${error.code} is one of PROTOCOL_CODES`);
      assert.equal(error.tag, tag);
      if (inv.code !== undefined) assert.equal(error.code, inv.code);
      assert.equal(error.kind, inv.kind ?? 'payload');
      if (error.kind === 'payload') {
        // The stream is still in sync: the next frame decodes.
        const next = inv.direction === 'client' ? encodeClientFrame({ type: 'FocusIn' }) : encodeServerFrame({ type: 'Bell' });
        assert.deepEqual(okFrames(d.push(next)), [{ type: inv.direction === 'client' ? 'FocusIn' : 'Bell' }]);
        d.end();
      } else {
        assert.throws(
          () => d.push(Buffer.alloc(1)),
          (e: unknown) => e === error,
        );
      }
    });
  }
}

frameVectorTests('upstream', upstream);
frameVectorTests('extension', extensions);

test('the repo copy of the upstream vectors is identical to ../shared/vectors/attach-v1.json', () => {
  const local = readFileSync(localVectors);
  // In CI the repo is cloned with shared/ beside it; a lone clone runs on its own copy.
  if (existsSync(sharedVectors)) assert.ok(local.equals(readFileSync(sharedVectors)), 'test/vectors/attach-v1.json differs from shared; copy it again');
  assert.ok(load(localVectors).frames.length > 0);
});

test('the vector files cover every upstream frame type they should and use our caps', () => {
  for (const [key, cap] of Object.entries(upstream.caps)) {
    if (key === 'default') assert.equal(capForTag(0x03), cap);
    else assert.equal(capForTag(Number.parseInt(key, 16)), cap, `cap of ${key}`);
  }
  for (const [key, cap] of Object.entries(extensions.caps)) assert.equal(capForTag(Number.parseInt(key, 16)), cap, `cap of ${key}`);
  // Every extension tag has a frame vector, so the reference's hex stays generated from the encoder.
  const extTypes = new Set(extensions.frames.map((v) => v.meaning['type']));
  for (const t of ['ExtHello', 'Repaint']) assert.ok(extTypes.has(t) && CLIENT_TAGS[t as 'ExtHello'] !== undefined, t);
  for (const t of ['Welcome', 'ExitStatus', 'Notice']) assert.ok(extTypes.has(t) && SERVER_TAGS[t as 'Notice'] !== undefined, t);
});

test('docs/protocol.md lists every extension vector with its exact bytes', () => {
  const doc = readFileSync(new URL('docs/protocol.md', repoRoot), 'utf8');
  for (const v of extensions.frames)
    assert.ok(doc.includes(`| ${v.name} | ${v.direction} | \`${v.hex}\` |`), `${v.name} is missing or stale in docs/protocol.md`);
});
