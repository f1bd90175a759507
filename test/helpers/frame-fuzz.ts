/**
 * Mutation fuzzing of the frame decoders. Streams are built from a corpus of valid frames (the upstream
 * and extension vectors plus frames of every kind made here), mutated (bit flips, byte changes, inserted
 * and deleted runs, rewritten length fields, splices of two streams), and fed to the decoder of each
 * direction in random slices. Invariants: only ProtocolError is ever thrown; the decoder never holds more
 * than a header plus the cap of the tag being read; a payload error leaves the stream usable.
 * Deterministic for a seed, so a failure can be replayed.
 */
import { readFileSync } from 'node:fs';
import {
  capForTag,
  createClientFrameDecoder,
  createServerFrameDecoder,
  encodeClientFrame,
  encodeServerFrame,
  FRAME_HEADER_BYTES,
  LARGE_FRAME_CAP,
  ProtocolError,
  type ClientFrame,
  type ServerFrame,
} from '../../src/protocol/index.ts';

/** xorshift32: small, fast, seedable. */
export class Rng {
  #s: number;
  constructor(seed: number) {
    this.#s = seed >>> 0 || 0x9e3779b9;
  }
  next(): number {
    let x = this.#s;
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    this.#s = x >>> 0;
    return this.#s;
  }
  int(n: number): number {
    return this.next() % n;
  }
  bytes(n: number): Buffer {
    const b = Buffer.allocUnsafe(n);
    for (let i = 0; i < n; i++) b[i] = this.next() & 0xff;
    return b;
  }
}

function vectorFrames(path: URL): Array<{ direction: 'client' | 'server'; bytes: Buffer }> {
  const v = JSON.parse(readFileSync(path, 'utf8')) as { frames: Array<{ direction: 'client' | 'server'; hex: string }> };
  return v.frames.map((f) => ({ direction: f.direction, bytes: Buffer.from(f.hex, 'hex') }));
}

function extraFrames(): Array<{ direction: 'client' | 'server'; bytes: Buffer }> {
  const client: ClientFrame[] = [
    { type: 'Input', bytes: Buffer.from('ls -la\r') },
    { type: 'Resize', rows: 50, cols: 200 },
    { type: 'AttachControl', requestId: 9n, context: { v: 1 }, body: { kind: 'ClipboardImageStart', transferId: 4n, format: 'png', size: 1000 } },
    { type: 'AttachControl', requestId: 9n, context: { v: 1 }, body: { kind: 'ClipboardImageChunk', transferId: 4n, offset: 0, bytes: Buffer.alloc(64, 7) } },
    { type: 'AttachControl', requestId: 9n, context: { v: 1 }, body: { kind: 'ClipboardImageEnd', transferId: 4n, sha256: Buffer.alloc(32, 1) } },
    { type: 'ClipboardImageError', message: 'no image' },
    { type: 'ExtHello', features: { notice: 1, repaint: 1 } },
    { type: 'Resolve', requestId: 3n, target: 'link', at: { row: 1, col: 2 } },
    { type: 'StageOnly', requestId: 3n },
  ];
  const server: ServerFrame[] = [
    { type: 'Output', bytes: Buffer.from('\x1b[31mred\x1b[0m\r\n') },
    { type: 'FileExportStart', exportId: 5n, size: 10, source: '/w/a.txt', name: 'a.txt', reveal: false, open: true },
    { type: 'FileExportChunk', exportId: 5n, offset: 0, bytes: Buffer.alloc(10, 0x61) },
    { type: 'Welcome', sessions: 1, features: { 'exit-status': 1 } },
    { type: 'Notice', level: 'error', text: 'refused' },
    { type: 'Resolved', requestId: 3n, kind: 'osc8', text: 'https://example.com' },
    { type: 'ImageStaged', requestId: 3n, bytes: 10, pasted: true, path: '/jackin/run/clipboard/a.png' },
    { type: 'Modes', mouseTracking: true, sgrMouse: true, bracketedPaste: false, focusReporting: false, alternateScreen: true },
  ];
  return [
    ...client.map((f) => ({ direction: 'client' as const, bytes: encodeClientFrame(f) })),
    ...server.map((f) => ({ direction: 'server' as const, bytes: encodeServerFrame(f) })),
  ];
}

function corpus(repoRoot: URL): Record<'client' | 'server', Buffer[]> {
  const all = [
    ...vectorFrames(new URL('test/vectors/attach-v1.json', repoRoot)),
    ...vectorFrames(new URL('test/vectors/extensions-v1.json', repoRoot)),
    ...extraFrames(),
  ];
  return {
    client: all.filter((f) => f.direction === 'client').map((f) => f.bytes),
    server: all.filter((f) => f.direction === 'server').map((f) => f.bytes),
  };
}

function mutate(rng: Rng, b: Buffer): Buffer {
  const out = Buffer.from(b);
  switch (rng.int(7)) {
    case 0: {
      if (out.length > 0) out[rng.int(out.length)]! ^= 1 << rng.int(8);
      return out;
    }
    case 1: {
      if (out.length > 0) out[rng.int(out.length)] = rng.int(256);
      return out;
    }
    case 2: {
      const at = rng.int(out.length + 1);
      return Buffer.concat([out.subarray(0, at), rng.bytes(1 + rng.int(16)), out.subarray(at)]);
    }
    case 3: {
      const at = rng.int(out.length + 1);
      return Buffer.concat([out.subarray(0, at), out.subarray(Math.min(out.length, at + 1 + rng.int(8)))]);
    }
    case 4: {
      // Rewrite a frame's length field to a nearby or an extreme value.
      if (out.length >= FRAME_HEADER_BYTES) {
        const len = out.readUInt32BE(1);
        const choices = [len + 1, Math.max(0, len - 1), 0, capForTag(out[0]!), capForTag(out[0]!) + 1, 0xffffffff, rng.next()];
        out.writeUInt32BE(choices[rng.int(choices.length)]! >>> 0, 1);
      }
      return out;
    }
    case 5: {
      // Change the tag (any byte).
      if (out.length > 0) out[0] = rng.int(256);
      return out;
    }
    default:
      return out;
  }
}

export interface FuzzStats {
  frames: number;
  items: number;
  payloadErrors: number;
  framingErrors: number;
  maxBuffered: number;
}

/** Runs `frames` corpus frames (mutated or not) through the decoder of `direction`. Throws on a broken invariant. */
export function fuzzDirection(direction: 'client' | 'server', frames: number, seed: number, repoRoot: URL): FuzzStats {
  const rng = new Rng(seed);
  const pool = corpus(repoRoot)[direction];
  const stats: FuzzStats = { frames: 0, items: 0, payloadErrors: 0, framingErrors: 0, maxBuffered: 0 };
  while (stats.frames < frames) {
    const n = 1 + rng.int(8);
    const parts: Buffer[] = [];
    for (let i = 0; i < n; i++) {
      const f = pool[rng.int(pool.length)]!;
      parts.push(rng.int(3) === 0 ? f : mutate(rng, f));
    }
    stats.frames += n;
    let stream: Buffer = Buffer.concat(parts);
    if (rng.int(10) === 0) stream = mutate(rng, stream);
    const d = direction === 'client' ? createClientFrameDecoder() : createServerFrameDecoder();
    let at = 0;
    try {
      while (at < stream.length) {
        const step = 1 + rng.int(Math.max(1, Math.min(64, stream.length - at)));
        const chunk = stream.subarray(at, at + step);
        at += step;
        for (const item of d.push(chunk)) {
          stats.items += 1;
          if (!item.ok) {
            if (!(item.error instanceof ProtocolError) || item.error.kind !== 'payload') throw new Error(`bad payload error item: ${String(item.error)}`);
            stats.payloadErrors += 1;
          }
        }
        if (d.failure) throw d.failure;
        // Never more than what arrived, nor more than a header plus the largest cap (the exact per-tag
        // bound is checked by the property tests).
        if (d.bufferedBytes > at || d.bufferedBytes > FRAME_HEADER_BYTES + LARGE_FRAME_CAP) {
          throw new Error(`seed ${seed}: decoder holds ${d.bufferedBytes} bytes after ${at}`);
        }
        stats.maxBuffered = Math.max(stats.maxBuffered, d.bufferedBytes);
      }
      d.end();
    } catch (e) {
      if (!(e instanceof ProtocolError)) {
        throw new Error(`seed ${seed} direction ${direction}: decoder threw a non-protocol error: ${String(e)}`, { cause: e });
      }
      stats.framingErrors += 1;
    }
  }
  return stats;
}
