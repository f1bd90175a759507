// The one fake capsule for tests: it listens where `jackin attach <name>` looks
// (`$JACKIN_HOME/sockets/<name>/jackin.sock`, directory 0700), answers Hello with a Welcome of the test's
// choosing (or lets the test send its own), and lets the test send any frame, well-formed (src/protocol
// encoders) or not (raw bytes). Everything the host sends back is decoded and recorded, so tests can assert
// the HostNotice frames an upstream capsule would show. A control-channel connection (first byte 0x00) gets
// the test's `control` answer. At the end of the test it closes every connection and the server and removes
// its temporary directory.
import { mkdirSync, mkdtempSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { createClientFrameDecoder, encodeServerFrame, SERVER_TAGS, type ClientFrame, type Features, type ServerFrame } from '../../src/protocol/index.ts';
import { pollUntil } from './poll.ts';
import { removeTestDir } from './test-run.ts';
import { socketAddress } from '../../src/transport/socket-address.ts';

/** What "our" capsule advertises in these tests: enough for the host to draw its own palette and notices. */
export const OUR_FEATURES: Readonly<Features> = { 'exit-status': 1, notice: 1, repaint: 1 };

/** One raw frame: tag, u32 big-endian length, payload. `length` may lie about the payload. */
export function rawFrame(tag: number, payload: Uint8Array, length: number = payload.length): Buffer {
  const header = Buffer.alloc(5);
  header[0] = tag;
  header.writeUInt32BE(length, 1);
  return Buffer.concat([header, payload]);
}

/** A Welcome frame: upstream (exactly 4 bytes, `features` null) or ours (with the JX extension block). */
export function welcomeFrame(features: Features | null): Buffer {
  return encodeServerFrame({ type: 'Welcome', sessions: 1, features });
}

/** A Welcome whose extension block starts right (magic, version) but breaks off inside a feature name. */
export function malformedWelcomeFrame(): Buffer {
  const sessions = Buffer.alloc(4);
  sessions.writeUInt32BE(1);
  // magic "JX", list version 1, 2 features, then a name length of 9 followed by only 3 bytes.
  return rawFrame(SERVER_TAGS.Welcome, Buffer.concat([sessions, Buffer.from('JX', 'ascii'), Buffer.from([1, 2, 9]), Buffer.from('rep', 'ascii')]));
}

export interface FakeConnection {
  /** 0 for the first attach, 1 for the next... */
  readonly index: number;
  readonly socket: Socket;
  /** Client frames received, in order (malformed ones are left out and counted in `malformed`). */
  readonly received: ClientFrame[];
  readonly malformed: number;
  send(f: ServerFrame): void;
  /** Writes bytes as they are: broken frames, lying lengths. */
  raw(bytes: Uint8Array): void;
  /** Writes and resolves once the socket took the bytes (backpressure: the host may stop reading). */
  write(bytes: Uint8Array): Promise<void>;
  /** Texts of the HostNotice frames received. */
  notices(): string[];
  /** All Input bytes received so far, as latin1. */
  input(): string;
  /** Called for each Input frame. */
  onInput(listener: (bytes: Buffer) => void): void;
  /** Called for each client frame as it arrives (a scripted answer to a Resolve, say). */
  onFrame(listener: (f: ClientFrame) => void): void;
  readonly closed: boolean;
}

export interface FakeCapsuleOptions {
  /** JACKIN_HOME to listen under (the pane's, usually); default `home` inside the fake's own directory. */
  home?: string;
  /** Instance name; default `fake`. */
  name?: string;
  /**
   * The Welcome to send for each connection (raw bytes, see welcomeFrame / malformedWelcomeFrame), then
   * `FAKE-READY-<index>` as Output. Called with the connection's index. Without it the test sends its own.
   */
  welcome?: (index: number) => Buffer;
  /** Echo typed printable input back as Output (Enter as CRLF), like a program with a shell prompt would. */
  echo?: boolean;
  /** Answers a control-channel connection once its first bytes arrived; without it such a connection is closed. */
  control?: (socket: Socket, first: Buffer) => void;
}

export interface FakeCapsule {
  /** A temporary directory of the fake's own, removed at the end of the test (the default home is in it). */
  readonly dir: string;
  readonly home: string;
  readonly socketPath: string;
  readonly connections: FakeConnection[];
  /** Waits for attach number `index` to have said Hello (and been welcomed, when `welcome` is set). */
  connection(index: number, timeoutMs?: number): Promise<FakeConnection>;
  /** Closes every connection and stops listening (the end of the test does it too). */
  close(): Promise<void>;
}

export async function startFakeCapsule(t: TestContext, o: FakeCapsuleOptions = {}): Promise<FakeCapsule> {
  const dir = mkdtempSync(join(tmpdir(), 'jackin-fake-'));
  const home = o.home ?? join(dir, 'home');
  const socketDir = join(home, 'sockets', o.name ?? 'fake');
  mkdirSync(socketDir, { recursive: true, mode: 0o700 });
  const socketPath = join(socketDir, 'jackin.sock');
  const connections: FakeConnection[] = [];
  const sockets = new Set<Socket>();
  let next = 0;

  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    const received: ClientFrame[] = [];
    const inputListeners: Array<(bytes: Buffer) => void> = [];
    const frameListeners: Array<(f: ClientFrame) => void> = [];
    let malformed = 0;
    let closed = false;
    let index = -1;
    const conn: FakeConnection = {
      get index() {
        return index;
      },
      socket,
      received,
      get malformed() {
        return malformed;
      },
      send: (f) => void (closed || socket.write(encodeServerFrame(f))),
      raw: (bytes) => void (closed || socket.write(bytes)),
      write: (bytes) =>
        new Promise<void>((resolve, reject) => {
          if (closed) return reject(new Error('the host closed the connection'));
          socket.write(bytes, (e) => (e ? reject(e) : resolve()));
        }),
      notices: () => received.flatMap((f) => (f.type === 'HostNotice' ? [f.text] : [])),
      input: () => Buffer.concat(received.flatMap((f) => (f.type === 'Input' ? [f.bytes] : []))).toString('latin1'),
      onInput: (l) => void inputListeners.push(l),
      onFrame: (l) => void frameListeners.push(l),
      get closed() {
        return closed;
      },
    };
    socket.on('close', () => (closed = true));
    const decoder = createClientFrameDecoder();
    const onData = (chunk: Buffer): void => {
      // A control-channel connection (first byte 0x00): the test's answer, or closed.
      if (index < 0 && received.length === 0 && decoder.bufferedBytes === 0 && chunk[0] === 0x00) {
        socket.off('data', onData);
        if (o.control !== undefined) o.control(socket, chunk);
        else socket.destroy();
        return;
      }
      let items;
      try {
        items = decoder.push(chunk);
      } catch {
        socket.destroy();
        return;
      }
      for (const item of items) {
        if (!item.ok) {
          malformed += 1;
          continue;
        }
        const f = item.frame;
        received.push(f);
        for (const l of frameListeners) l(f);
        if (f.type === 'Hello' && index < 0) {
          index = next++;
          connections[index] = conn;
          if (o.welcome !== undefined) {
            socket.write(o.welcome(index));
            socket.write(encodeServerFrame({ type: 'Output', bytes: Buffer.from(`FAKE-READY-${index}\r\n`) }));
          }
        }
        if (f.type === 'Input') {
          for (const l of inputListeners) l(f.bytes);
          if (o.echo === true) {
            const shown = f.bytes
              .toString('latin1')
              .replace(/\r/g, '\r\n')
              .replace(/[^\x20-\x7e\r\n]/g, '');
            if (shown !== '') conn.send({ type: 'Output', bytes: Buffer.from(shown, 'latin1') });
          }
        }
      }
    };
    socket.on('data', onData);
  });
  // Through its directory when the path is longer than a socket address holds (a long TMPDIR).
  const address = socketAddress(socketPath);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(address.address, () => {
      server.off('error', reject);
      resolve();
    });
  }).finally(address.release);
  let stopped: Promise<void> | undefined;
  const close = (): Promise<void> => {
    stopped ??= new Promise<void>((resolve) => {
      server.close(() => resolve());
      for (const s of sockets) s.destroy();
    });
    return stopped;
  };
  t.after(async () => {
    await close();
    removeTestDir(dir);
  });
  return {
    dir,
    home,
    socketPath,
    connections,
    connection: (index, timeoutMs = 20_000) => pollUntil(`attach number ${index} to say Hello to the fake capsule`, () => connections[index], { timeoutMs }),
    close,
  };
}
