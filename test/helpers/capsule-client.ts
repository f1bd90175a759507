/**
 * A raw attach client for capsule tests: connects to a capsule socket, sends frames or raw bytes, records
 * every server frame, and mirrors the Output it receives in a headless terminal so a test can compare
 * screens.
 */
import { connect, type Socket } from 'node:net';
import { createServerFrameDecoder, encodeClientFrame, type ClientFrame, type Hello, type ServerFrame } from '../../src/protocol/index.ts';
import { ScreenModel } from '../../src/capsule/screen/screen-model.ts';
import { pollUntil } from './poll.ts';
import { socketAddress } from '../../src/transport/socket-address.ts';

export function helloFrame(rows = 24, cols = 80): Hello {
  return {
    type: 'Hello',
    rows,
    cols,
    spawn: { kind: 'none' },
    env: [],
    focus: null,
    term: null,
    termProgram: null,
    colorTerm: null,
    fg: null,
    bg: null,
    caps: { pointerShapes: 'unset', truecolor: 'unset', synchronizedOutput: 'unset', osc8: 'unset', underlineStyle: 'unset', imageProtocol: 'unset' },
    context: null,
  };
}

export class TestClient {
  readonly frames: ServerFrame[] = [];
  readonly screen: ScreenModel;
  ended = false;
  closed = false;
  readonly #decoder = createServerFrameDecoder();
  #outputBytes: Buffer[] = [];

  readonly #mirror: boolean;
  // biome-ignore lint/style/useConsistentMemberAccessibility: built only by its static factory (an asynchronous set-up)
  private constructor(
    readonly socket: Socket,
    rows: number,
    cols: number,
    mirror: boolean,
  ) {
    this.#mirror = mirror;
    this.screen = new ScreenModel({ rows, cols });
    socket.on('data', (chunk: Buffer) => {
      for (const item of this.#decoder.push(chunk)) {
        if (!item.ok) throw item.error;
        this.frames.push(item.frame);
        if (item.frame.type === 'Output') {
          this.#outputBytes.push(item.frame.bytes);
          if (this.#mirror) this.screen.write(item.frame.bytes);
        }
      }
    });
    socket.on('end', () => {
      this.ended = true;
    });
    socket.on('error', () => undefined);
    socket.on('close', () => {
      this.closed = true;
    });
  }

  /** `mirror: false` skips the headless mirror, for tests that move megabytes and only count bytes. */
  static async connect(path: string, size: { rows: number; cols: number } = { rows: 24, cols: 80 }, mirror = true): Promise<TestClient> {
    // Through its directory when the path is longer than a socket address holds (a long TMPDIR).
    const address = socketAddress(path);
    const socket = connect({ path: address.address, allowHalfOpen: true });
    socket.once('connect', address.release).once('error', address.release);
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', resolve);
      socket.once('error', reject);
    });
    return new TestClient(socket, size.rows, size.cols, mirror);
  }

  send(frame: ClientFrame): void {
    this.socket.write(encodeClientFrame(frame));
  }

  sendRaw(bytes: Buffer): void {
    this.socket.write(bytes);
  }

  /** Everything received in Output frames, as latin1 text (byte-preserving). */
  output(): string {
    return Buffer.concat(this.#outputBytes).toString('latin1');
  }

  types(): string[] {
    return this.frames.map((f) => f.type);
  }

  async waitForOutput(needle: string, timeoutMs = 10_000): Promise<void> {
    await pollUntil(`output containing ${JSON.stringify(needle)}`, () => this.output().includes(needle), {
      timeoutMs,
      last: () => this.output().slice(-400),
    });
  }

  async waitForFrame<T extends ServerFrame['type']>(type: T, timeoutMs = 10_000): Promise<Extract<ServerFrame, { type: T }>> {
    return pollUntil(`a ${type} frame`, () => this.frames.find((f): f is Extract<ServerFrame, { type: T }> => f.type === type), {
      timeoutMs,
      last: () => this.types(),
    });
  }

  async waitClosed(timeoutMs = 10_000): Promise<void> {
    await pollUntil('the connection to close', () => this.closed || this.ended, { timeoutMs });
  }

  /** The mirrored screen once it has parsed everything received. */
  async screenLines(): Promise<string[]> {
    await this.screen.settle();
    return this.screen.screenLines();
  }

  close(): void {
    this.socket.destroy();
    this.screen.dispose();
  }
}
