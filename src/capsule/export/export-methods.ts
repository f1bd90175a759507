/**
 * The `export` control method (docs/protocol.md section 7): resolve the requested path under the policy
 * (export-source.ts), reply `{"ok":true,"exportId",...}` and stream FileExportStart, FileExportChunk (1 MiB
 * at most) and FileExportEnd attach frames on the same connection, or reply `{"ok":false,"code","message"}`.
 *
 * Memory stays bounded whatever the file size: a chunk is read (the next one already being read ahead),
 * written as header + data without copying, and once the socket holds EXPORT_SEND_BUFFER_BYTES the next
 * read waits until it drains, so a slow host disk slows the capsule's reads instead of filling its memory.
 * Chunk buffers are recycled once the socket is done with them. Every chunk awaits a real read, so the
 * event loop (the agent's terminal traffic) gets a turn between chunks.
 * A failure after the reply (the file changed while streaming, a read error) cannot become an `ok:false`
 * reply any more; the capsule then sends a Notice frame (level error) whose text starts with the stable
 * code (`E_CHANGED_WHILE_READING: ...`) instead of FileExportEnd, and closes. A host treats any stream that
 * ends without FileExportEnd as failed.
 */
import type { Socket } from 'node:net';
import { DisposableStore, onEvent } from '../../disposable.ts';
import { JackinError, type ErrorCode } from '../../errors.ts';
import {
  encodeExportChunkHeader,
  encodeServerFrame,
  EXPORT_METHOD,
  MAX_EXPORT_NAME_BYTES,
  MAX_EXPORT_SOURCE_BYTES,
  MAX_HOST_NOTICE_BYTES,
  truncateUtf8,
  type NoticeLevel,
  type ServerFrame,
} from '../../protocol/index.ts';
import type { Policy } from '../../policy/schema.ts';
import { answer, refuse, type ControlMethods } from '../session/control-methods.ts';
import { transferBuffers } from '../session/transfer-buffers.ts';
import { openExportSource, type ExportSource } from './export-source.ts';
import { formatBytes } from '../../ui/format-bytes.ts';

export interface ExportMethodsOptions {
  readonly policy: Policy;
  readonly workspace: string;
  readonly runDir: string;
  /** Tells an attached operator (server.notify). */
  readonly notify: (level: NoticeLevel, text: string) => void;
  readonly log?: (line: string) => void;
}

/** Bytes allowed to wait in the socket's send buffer before the next chunk is read. */
const EXPORT_SEND_BUFFER_BYTES = 4 * 1024 * 1024;

/** Export ids are unique per capsule process; the host matches every frame's id against the reply's. */
let nextExportId = BigInt(Date.now()) * 1000n;

function codeOf(e: unknown): ErrorCode {
  return e instanceof JackinError ? e.code : 'E_EXPORT_IO';
}

function messageOf(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

function checkOpen(socket: Socket): void {
  if (socket.destroyed || !socket.writable) throw new JackinError('E_EXPORT_CLOSED', 'the host closed the export connection');
}

/** Writes one frame, waiting for the socket to drain when its buffer is full. */
async function writeFrame(socket: Socket, frame: ServerFrame): Promise<void> {
  checkOpen(socket);
  socket.write(encodeServerFrame(frame));
  await roomToWrite(socket);
}

/**
 * Chunk buffers handed back once the socket has passed them to the kernel and the source has hashed them
 * (see streamExport), so a
 * long export reuses a handful of 1 MiB buffers instead of leaving one garbage buffer per MiB for the GC.
 * One pool serves every transfer of the process (session/transfer-buffers.ts): fresh buffers per export left the
 * malloc heap growing by several MiB with each export (measured: a capsule's peak RSS rose from 84 to
 * 127 MiB over five exports). An export holds what the send buffer holds, the chunk being hashed, and a
 * directory's chunks waiting for the sender (export-source.ts). A last, shorter chunk is a view of a pooled
 * one (a directory's always, a file's from half a chunk up) and comes back whole.
 */
const chunkPool = transferBuffers;

/**
 * Writes a FileExportChunk frame as header + data in one writev, without copying the data. It waits for
 * room before writing rather than after, so the previous chunk is hashed while the socket flushes.
 */
async function writeChunk(socket: Socket, exportId: bigint, offset: number, bytes: Buffer, onWritten: () => void): Promise<void> {
  await roomToWrite(socket);
  checkOpen(socket);
  socket.cork();
  socket.write(encodeExportChunkHeader(exportId, offset, bytes.length));
  socket.write(bytes, (err) => {
    if (err === null || err === undefined) onWritten();
  });
  socket.uncork();
}

async function roomToWrite(socket: Socket): Promise<void> {
  // Let a few chunks queue in the socket so reading the next chunk overlaps sending this one; past that,
  // wait for the host, which is how its disk slows our reads (memory stays under this bound + a chunk).
  if (socket.writableLength <= EXPORT_SEND_BUFFER_BYTES) return;
  await new Promise<void>((resolve, reject) => {
    const waits = new DisposableStore();
    waits.add(
      onEvent(socket, 'drain', () => {
        waits.dispose();
        resolve();
      }),
    );
    waits.add(
      onEvent(socket, 'close', () => {
        waits.dispose();
        reject(new JackinError('E_EXPORT_CLOSED', 'the host closed the export connection'));
      }),
    );
  });
}

/** Streams an opened source as Start, Chunk... and End frames; on failure a Notice frame replaces End. */
async function streamExport(socket: Socket, source: ExportSource, exportId: bigint, reveal: boolean, open: boolean): Promise<void> {
  try {
    await writeFrame(socket, {
      type: 'FileExportStart',
      exportId,
      size: source.size,
      source: truncateUtf8(source.requested, MAX_EXPORT_SOURCE_BYTES),
      name: truncateUtf8(source.name, MAX_EXPORT_NAME_BYTES),
      reveal,
      open,
    });
    // A chunk's buffer goes back to the pool (shared by every export of the process) only once the socket
    // has written it and the source has hashed it. A source hashes a chunk after yielding it, so that is
    // done when the next chunk, or the end, arrives. Given back on the write alone, a buffer could be
    // refilled by a concurrent export while still being hashed: a wrong digest.
    type Held = { readonly bytes: Buffer; written: boolean; hashed: boolean };
    const giveBack = (h: Held): void => {
      if (h.written && h.hashed) chunkPool.release(h.bytes);
    };
    let last: Held | undefined;
    for await (const c of source.chunks(chunkPool.allocate)) {
      if (last !== undefined) {
        last.hashed = true;
        giveBack(last);
      }
      const held: Held = { bytes: c.bytes, written: false, hashed: false };
      last = held;
      await writeChunk(socket, exportId, c.offset, c.bytes, () => {
        held.written = true;
        giveBack(held);
      });
    }
    if (last !== undefined) {
      last.hashed = true;
      giveBack(last);
    }
    const digest = source.digest();
    if (source.streamed) await writeFrame(socket, { type: 'FileExportLength', exportId, size: digest.bytes });
    await writeFrame(socket, { type: 'FileExportEnd', exportId, sha256: digest.sha256 });
  } catch (e) {
    if (!socket.destroyed && socket.writable) {
      const text = truncateUtf8(`${codeOf(e)}: ${messageOf(e)}`, MAX_HOST_NOTICE_BYTES);
      socket.write(encodeServerFrame({ type: 'Notice', level: 'error', text }));
    }
    throw e;
  } finally {
    await source.close();
  }
}

/** Registers `export` on the capsule's control channel. */
export function registerExportMethods(control: ControlMethods, o: ExportMethodsOptions): void {
  // reveal and open are only echoed in FileExportStart: the host that asked acts on its own operator's choice.
  control.register(EXPORT_METHOD, async ({ path, reveal, open, confirmOutside, streamSize }, socket) => {
    let source: ExportSource;
    try {
      source = await openExportSource(path, {
        policy: o.policy,
        workspace: o.workspace,
        runDir: o.runDir,
        confirmedOutside: confirmOutside,
        streamSize,
      });
    } catch (e) {
      const code = codeOf(e);
      o.log?.(`export ${JSON.stringify(path)} refused: ${code}: ${messageOf(e)}`);
      o.notify('warning', `Export of ${path} refused: ${messageOf(e)}`);
      return refuse(code, messageOf(e));
    }
    // The server skips the stream when the host is already gone: release the descriptor then too. The host
    // may have gone while the source was opened (archiving a directory for an older host takes a while), and
    // then 'close' has already fired.
    const release = (): void => void source.close().catch(() => undefined);
    socket.once('close', release);
    if (socket.destroyed) release();
    const exportId = nextExportId++;
    return answer(
      { exportId, name: source.name, size: source.size, kind: source.kind, streamed: source.streamed },
      {
        stream: async (s) => {
          try {
            await streamExport(s, source, exportId, reveal, open);
            o.notify('success', `Exported ${path} (${formatBytes(source.size)}) to the host`);
          } catch (e) {
            o.notify('error', `Export of ${path} failed: ${messageOf(e)}`);
            throw e;
          }
        },
      },
    );
  });
}
