/**
 * The `stage` control method (docs/protocol.md sections 7 and 8.14): the host asks
 * `{"method":"stage","name":N,"size":S}`; the capsule checks name, size and space, opens a partial file and
 * replies `{"ok":true,"transferId":"<u64>","chunkBytes":1048576}`; the host then sends FileStageChunk frames
 * at consecutive offsets and one FileStageEnd with the SHA-256; the capsule answers FileStaged with the
 * staged path, or a Notice `E_CODE: message` when anything failed, and closes.
 *
 * Backpressure: the connection is paused while more than STAGE_WRITE_QUEUE_BYTES wait for the disk, so a
 * slow disk slows the host's sends and memory stays bounded. A connection that closes before FileStageEnd, or stays silent
 * for TRANSFER_IDLE_MS, drops the transfer and its partial file.
 */
import type { Socket } from 'node:net';
import { JackinError, type ErrorCode } from '../../errors.ts';
import type { FramePool } from '../../protocol/frame-pool.ts';
import {
  createStageClientDecoder,
  encodeStageServerFrame,
  MAX_CHUNK_BYTES,
  MAX_HOST_NOTICE_BYTES,
  STAGE_METHOD,
  TRANSFER_IDLE_MS,
  truncateUtf8,
  type NoticeLevel,
  type StageClientFrame,
} from '../../protocol/index.ts';
import { formatBytes } from '../../ui/format-bytes.ts';
import { answer, refuse, type ControlMethods } from '../session/control-methods.ts';
import { readViews } from '../session/lent-reads.ts';
import { transferBuffers } from '../session/transfer-buffers.ts';
import { FileStaging, type FileStageTransfer, type StagedFile } from './file-staging.ts';

/** Files arriving at once; more are refused (E_TOO_MANY_TRANSFERS). */
export const MAX_CONCURRENT_STAGES = 4;
/** Bytes of chunks waiting for the disk before the connection is paused (backpressure to the host). */
const STAGE_WRITE_QUEUE_BYTES = 8 * 1024 * 1024;

export interface StageMethodOptions {
  readonly runDir: string;
  /** This capsule's cap on one file. */
  readonly maxBytes: number;
  readonly notify: (level: NoticeLevel, text: string) => void;
  readonly log?: (line: string) => void;
  readonly idleMs?: number;
}

let nextTransferId = BigInt(Date.now()) * 1000n;

function codeOf(e: unknown): ErrorCode {
  return e instanceof JackinError ? e.code : 'E_STAGING_FAILED';
}

function messageOf(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/**
 * Receives the frames of one transfer on `socket` until FileStaged is sent; throws on any failure. Chunks
 * are checked as they are decoded, queued for hashing in order, and their writes issued at once (positioned writes, so they
 * may complete in any order); the connection is paused only while more than STAGE_WRITE_QUEUE_BYTES wait
 * for the disk, so the network and the disk overlap and memory stays bounded.
 */
function receive(socket: Socket, transfer: FileStageTransfer, transferId: bigint, idleMs: number, pool: FramePool): Promise<StagedFile> {
  return new Promise<StagedFile>((resolve, reject) => {
    // Each read is a view of the connection's lent buffer (lent-reads.ts): the decoder copies what it keeps.
    const decoder = createStageClientDecoder(pool.allocate, { copyInput: true });
    let settled = false;
    let stopReading = (): void => undefined;
    let timer: NodeJS.Timeout | undefined;
    let queued = 0;
    const writes = new Set<Promise<void>>();
    const cleanup = (): void => {
      clearTimeout(timer);
      stopReading();
      socket.off('close', onClose);
      socket.off('end', onClose);
    };
    const fail = (e: unknown): void => {
      if (settled) return;
      settled = true;
      cleanup();
      // The partial file goes once the writes already issued are done with it.
      void Promise.allSettled([...writes]).then(() => transfer.abort());
      if (!socket.destroyed && socket.writable) {
        socket.write(encodeStageServerFrame({ type: 'Notice', level: 'error', text: truncateUtf8(`${codeOf(e)}: ${messageOf(e)}`, MAX_HOST_NOTICE_BYTES) }));
      }
      reject(e);
    };
    const touch = (): void => {
      clearTimeout(timer);
      timer = setTimeout(() => fail(new JackinError('E_TRANSFER_IDLE', `no data from the host for ${idleMs} ms; ${transfer.name} dropped`)), idleMs);
      timer.unref();
    };
    const write = (offset: number, bytes: Buffer): void => {
      // write() checks synchronously and rejects before its first await.
      const w = transfer.write(offset, bytes);
      queued += bytes.length;
      writes.add(w);
      if (queued > STAGE_WRITE_QUEUE_BYTES) socket.pause();
      w.then(
        () => {
          writes.delete(w);
          pool.release(bytes);
          queued -= bytes.length;
          if (!settled && queued <= STAGE_WRITE_QUEUE_BYTES) socket.resume();
        },
        (e: unknown) => {
          writes.delete(w);
          fail(e);
        },
      );
    };
    const finish = async (sha256: Buffer): Promise<void> => {
      socket.pause();
      await Promise.all([...writes]);
      const staged = await transfer.finish(sha256);
      if (settled) return;
      settled = true;
      cleanup();
      socket.write(encodeStageServerFrame({ type: 'FileStaged', transferId, bytes: staged.bytes, path: staged.path }));
      resolve(staged);
    };
    const onFrame = (f: StageClientFrame): void => {
      if (f.transferId !== transferId) throw new JackinError('E_TRANSFER_CORRELATION', `frame for transfer ${f.transferId}, expected ${transferId}`);
      if (f.type === 'FileStageChunk') write(f.offset, f.bytes);
      else finish(f.sha256).catch(fail);
    };
    const onData = (chunk: Buffer): void => {
      if (settled) return;
      touch();
      try {
        for (const item of decoder.push(chunk)) {
          if (!item.ok) throw new JackinError('E_TRANSFER_PROTOCOL', `bad frame from the host: ${item.error.message}`, { cause: item.error });
          onFrame(item.frame);
        }
      } catch (e) {
        fail(e);
      }
    };
    const onClose = (): void => {
      fail(
        new JackinError(
          'E_TRANSFER_INTERRUPTED',
          `the host closed the connection after ${transfer.received} of ${transfer.size} bytes of ${transfer.name}; nothing was staged`,
        ),
      );
    };
    stopReading = readViews(socket, onData);
    // The server allows half-open sockets: a host that is gone shows as 'end' first, and 'close' may wait.
    socket.once('end', onClose);
    socket.once('close', onClose);
    touch();
  });
}

/** Registers `stage`; returns the staging area (the capsule removes it when it exits). */
export function registerStageMethod(control: ControlMethods, o: StageMethodOptions): FileStaging {
  const staging = new FileStaging(o.runDir, { maxBytes: o.maxBytes });
  // Chunk payloads go to pooled buffers, taken back once written and hashed (frame-pool.ts). One pool for
  // every transfer of this capsule, exports too (session/transfer-buffers.ts): a pool per transfer left its buffers
  // to the collector at the end of each, and V8 collects dead buffers only once about 64 MiB of them have
  // piled up, so a capsule that staged one file after another grew by that much.
  const pool = transferBuffers;
  let active = 0;
  control.register(STAGE_METHOD, async ({ name, size, notify }, socket) => {
    const quiet = !notify;
    if (active >= MAX_CONCURRENT_STAGES) {
      return refuse('E_TOO_MANY_TRANSFERS', `${active} files are being staged already; try again when they are done`);
    }
    let transfer: FileStageTransfer;
    try {
      transfer = await staging.begin(name, size);
    } catch (e) {
      o.log?.(`stage ${JSON.stringify(name).slice(0, 300)} refused: ${codeOf(e)}: ${messageOf(e)}`);
      return refuse(codeOf(e), messageOf(e));
    }
    active++;
    // The slot is free once the transfer is over or the host is gone, whichever comes first (a host that
    // stages files one after another must not find its last transfer still counted), and only once.
    let released = false;
    const release = (): void => {
      if (released) return;
      released = true;
      active--;
      void transfer.abort();
    };
    // The host may go before the stream starts (the server then skips it): drop the partial file then too.
    socket.once('close', release);
    if (socket.destroyed) release();
    const transferId = nextTransferId++;
    return answer(
      { transferId, chunkBytes: MAX_CHUNK_BYTES },
      {
        stream: async (s) => {
          try {
            const staged = await receive(s, transfer, transferId, o.idleMs ?? TRANSFER_IDLE_MS, pool);
            o.log?.(`staged ${staged.path} (${staged.bytes} bytes, sha256 ${staged.sha256})`);
            if (!quiet) o.notify('success', `Host file staged: ${staged.path} (${formatBytes(staged.bytes)})`);
          } catch (e) {
            o.log?.(`stage of ${transfer.name} failed: ${codeOf(e)}: ${messageOf(e)}`);
            if (!quiet) o.notify('error', `Staging ${transfer.name} failed: ${messageOf(e)}`);
            throw e;
          } finally {
            release();
          }
        },
      },
    );
  });
  return staging;
}
