/**
 * Ports programs start listening on in the container (feature `ports`, docs/protocol.md section 8.17), for
 * an attached host that asked for them: read from /proc/net/tcp and /proc/net/tcp6 (state LISTEN), only
 * the sockets a `forward` can reach (bound to the loopback or to any address). Every one is a program's: the
 * capsule and its relays listen on no TCP port (the capsule's socket is a Unix one, forwards connect out).
 *
 * No clock runs while the program is quiet: the watcher looks once when the host asks, then only after
 * the program wrote output (a development server prints its URL once it listens), at most once per
 * PORT_CHECK_INTERVAL_MS (trailing, so the last output of a burst is always followed by a look). A steady
 * poll would wake the capsule every second of an idle session (test/idle-e2e.test.ts).
 */
import { open } from 'node:fs/promises';
import { endianness } from 'node:os';
import { MAX_LISTENING_PORTS } from '../../protocol/index.ts';
import type { Disposable } from '../../disposable.ts';

/** At most one look at /proc per this many ms while output flows. */
const PORT_CHECK_INTERVAL_MS = 1000;
/** The wait after a first output before looking: a burst of output costs one look. */
const PORT_CHECK_SETTLE_MS = 150;
/** Most bytes read of one /proc table (a container with this many sockets has more pressing problems). */
const MAX_TABLE_BYTES = 8 * 1024 * 1024;

/** One LISTEN socket of a /proc/net/tcp table. */
interface ListeningSocket {
  readonly port: number;
  readonly inode: string;
}

/** The address bytes of a /proc/net/tcp local address (32-bit words printed in host byte order). */
function addressBytes(hex: string, littleEndian: boolean): number[] | null {
  if ((hex.length !== 8 && hex.length !== 32) || !/^[0-9A-Fa-f]+$/.test(hex)) return null;
  const out: number[] = [];
  for (let w = 0; w < hex.length; w += 8) {
    const word = [0, 2, 4, 6].map((i) => Number.parseInt(hex.slice(w + i, w + i + 2), 16));
    out.push(...(littleEndian ? word.reverse() : word));
  }
  return out;
}

/** A forward (127.0.0.1, then ::1) reaches a socket bound to a loopback or to any address. */
function reachable(b: readonly number[]): boolean {
  const is = (prefix: readonly number[], rest: readonly number[]): boolean =>
    b.length === prefix.length + rest.length && [...prefix, ...rest].every((x, i) => b[i] === x);
  const zeros = (n: number): number[] => Array.from({ length: n }, () => 0);
  if (b.length === 4) return is([], [0, 0, 0, 0]) || is([], [127, 0, 0, 1]);
  return is(zeros(16), []) || is(zeros(15), [1]) || is(zeros(10), [0xff, 0xff, 127, 0, 0, 1]) || is(zeros(10), [0xff, 0xff, 0, 0, 0, 0]);
}

/**
 * The LISTEN sockets of one /proc/net/tcp or tcp6 text that a forward can reach. Never throws: a line it
 * cannot read is skipped (the text is the kernel's, but a parser of /proc is no place to crash the capsule).
 */
export function parseListening(text: string, littleEndian = endianness() === 'LE'): ListeningSocket[] {
  const out: ListeningSocket[] = [];
  for (const line of text.split('\n')) {
    const f = line.trim().split(/\s+/);
    // sl local rem st tx:rx tr:when retrnsmt uid timeout inode ...
    if (f.length < 10 || !/^\d+:$/.test(f[0] ?? '') || f[3] !== '0A') continue;
    const [addr, portHex] = (f[1] ?? '').split(':');
    if (addr === undefined || portHex === undefined || !/^[0-9A-Fa-f]{4}$/.test(portHex)) continue;
    const port = Number.parseInt(portHex, 16);
    const bytes = addressBytes(addr, littleEndian);
    const inode = f[9] ?? '';
    if (port === 0 || bytes === null || !reachable(bytes) || !/^\d+$/.test(inode)) continue;
    out.push({ port, inode });
  }
  return out;
}

/** The ports of `sockets`, ascending, each once, the lowest MAX_LISTENING_PORTS. */
export function listeningPorts(sockets: readonly ListeningSocket[]): number[] {
  const ports = new Set(sockets.map((s) => s.port));
  return [...ports].sort((a, b) => a - b).slice(0, MAX_LISTENING_PORTS);
}

async function readTable(path: string): Promise<string> {
  // /proc files report size 0: read until the end, bounded.
  const fh = await open(path, 'r').catch(() => null);
  if (fh === null) return '';
  try {
    const chunks: Buffer[] = [];
    let total = 0;
    for (;;) {
      const buf = Buffer.alloc(64 * 1024);
      const { bytesRead } = await fh.read(buf, 0, buf.length, null);
      if (bytesRead === 0 || total + bytesRead > MAX_TABLE_BYTES) break;
      chunks.push(buf.subarray(0, bytesRead));
      total += bytesRead;
    }
    return Buffer.concat(chunks).toString('latin1');
  } finally {
    await fh.close();
  }
}

/** The container's listening ports a forward can reach, now (empty where there is no /proc). */
export async function readListeningPorts(): Promise<number[]> {
  return listeningPorts([...parseListening(await readTable('/proc/net/tcp')), ...parseListening(await readTable('/proc/net/tcp6'))]);
}

/**
 * Runs `run` after a poke, at most once per `intervalMs`, trailing: a poke while a run is due or running
 * is folded into it (or into one more run after it), so the state after the last poke is always seen.
 */
export class TrailingThrottle implements Disposable {
  readonly #run: () => Promise<void>;
  readonly #intervalMs: number;
  readonly #settleMs: number;
  readonly #now: () => number;
  #timer: NodeJS.Timeout | undefined;
  #running = false;
  #again = false;
  #last = Number.NEGATIVE_INFINITY;
  #disposed = false;

  constructor(run: () => Promise<void>, o: { intervalMs?: number; settleMs?: number; now?: () => number } = {}) {
    this.#run = run;
    this.#intervalMs = o.intervalMs ?? PORT_CHECK_INTERVAL_MS;
    this.#settleMs = o.settleMs ?? PORT_CHECK_SETTLE_MS;
    this.#now = o.now ?? Date.now;
  }

  /** Something changed: a run follows within the interval. */
  poke(): void {
    if (this.#disposed) return;
    if (this.#running) {
      this.#again = true;
      return;
    }
    if (this.#timer !== undefined) return;
    const wait = Math.max(this.#settleMs, this.#last + this.#intervalMs - this.#now());
    this.#timer = setTimeout(() => void this.#fire(), wait);
  }

  async #fire(): Promise<void> {
    this.#timer = undefined;
    if (this.#disposed) return;
    this.#running = true;
    this.#last = this.#now();
    try {
      await this.#run();
    } catch {
      // A failed look is only a missed offer; the next output looks again.
    } finally {
      this.#running = false;
    }
    if (this.#again) {
      this.#again = false;
      this.poke();
    }
  }

  dispose(): void {
    this.#disposed = true;
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }
}

/**
 * The ports one attached host is told of: a first look at once, then one after output (throttled); a
 * Ports frame only when the list changed since the last one sent.
 */
export class PortWatch implements Disposable {
  readonly #send: (ports: number[]) => void;
  readonly #read: () => Promise<number[]>;
  readonly #throttle: TrailingThrottle;
  #sent: number[] | null = null;

  constructor(send: (ports: number[]) => void, o: { read?: () => Promise<number[]>; intervalMs?: number; settleMs?: number } = {}) {
    this.#send = send;
    this.#read = o.read ?? readListeningPorts;
    this.#throttle = new TrailingThrottle(() => this.#look(), {
      ...(o.intervalMs !== undefined ? { intervalMs: o.intervalMs } : {}),
      ...(o.settleMs !== undefined ? { settleMs: o.settleMs } : {}),
    });
  }

  /** The first look: the ports already listening count as opened for this host. */
  start(): void {
    this.#throttle.poke();
  }

  /** The program wrote output. */
  output(): void {
    this.#throttle.poke();
  }

  async #look(): Promise<void> {
    const ports = await this.#read();
    const sent = this.#sent;
    if (sent !== null && sent.length === ports.length && sent.every((p, i) => p === ports[i])) return;
    this.#sent = ports;
    this.#send(ports);
  }

  dispose(): void {
    this.#throttle.dispose();
  }
}
