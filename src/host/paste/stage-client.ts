/**
 * The host's side of one `stage` request (docs/protocol.md section 8.14): on a fresh connection to the
 * capsule (socket or exec relay), ask `stage` with the name and size, then send the opened file in 1 MiB
 * FileStageChunk frames (header and data written together, no copy) and FileStageEnd with the SHA-256 of
 * what was read, and wait for FileStaged with the container path.
 *
 * The file is read from the descriptor opened by openStageSource, exactly `size` bytes: a file that shrinks
 * or grows meanwhile fails the transfer (E_CHANGED_WHILE_READING) and the capsule keeps nothing. Writes wait
 * for the connection to drain, so memory stays at a few chunks whatever the file size.
 */
import { nodeCrypto } from '../../lazy-builtins.ts';
import type { Writable } from 'node:stream';
import { JackinError } from '../../errors.ts';
import {
  createStageServerDecoder,
  encodeControlRequest,
  encodeStageChunkHeader,
  encodeStageClientFrame,
  MAX_CHUNK_BYTES,
  readControlReply,
  STAGE_METHOD,
  type StageServerFrame,
} from '../../protocol/index.ts';
import type { Transport } from '../../transport/transport.ts';
import { ReplyReader, streamFailure, withConnection } from '../../transport/control-call.ts';
import type { StageSource } from './stage-source.ts';

/** Silence longer than this fails the transfer (the capsule checks space before it replies). */
const STAGE_IDLE_TIMEOUT_MS = 60_000;
/** Bytes allowed to wait in the connection's send buffer before the next chunk is read. */
const STAGE_SEND_QUEUE_BYTES = 8 * 1024 * 1024;

export interface StageClientOptions {
  /** Opens a new connection to the capsule (never the attach connection itself). */
  readonly connect: () => Promise<Transport>;
  readonly signal?: AbortSignal;
  readonly idleTimeoutMs?: number;
  /** false: the capsule does not tell an attached operator (the caller does). */
  readonly capsuleNotice?: boolean;
  readonly onProgress?: (bytes: number, total: number) => void;
}

export interface StagedFileResult {
  /** The host path as given. */
  readonly source: string;
  /** Where the host path's symlinks led, or null. */
  readonly resolved: string | null;
  /** The container path. */
  readonly destination: string;
  readonly bytes: number;
  /** Lower-case hex. */
  readonly sha256: string;
}

function waitDrain(w: Writable): Promise<void> {
  return new Promise((resolve, reject) => {
    const done = (): void => {
      w.off('drain', onDrain);
      w.off('close', onClose);
      w.off('error', onClose);
    };
    const onDrain = (): void => {
      done();
      resolve();
    };
    const onClose = (): void => {
      done();
      reject(new JackinError('E_TRANSFER_INTERRUPTED', 'the connection to the capsule closed while sending'));
    };
    w.on('drain', onDrain);
    w.on('close', onClose);
    w.on('error', onClose);
  });
}

/** Reads the whole file and sends it; resolves with its SHA-256. */
async function sendFile(
  w: Writable,
  src: StageSource,
  transferId: bigint,
  touch: () => void,
  stopped: () => boolean,
  onProgress?: (n: number, total: number) => void,
): Promise<Buffer> {
  const hash = nodeCrypto().createHash('sha256');
  // Chunk buffers come back once the socket has written them: a long file reuses a few instead of leaving
  // one per MiB to the collector (fresh memory costs page faults, and on a VM the hypervisor's too).
  const free: Buffer[] = [];
  let offset = 0;
  while (offset < src.size) {
    if (stopped()) throw new JackinError('E_TRANSFER_INTERRUPTED', 'stopped');
    const want = Math.min(MAX_CHUNK_BYTES, src.size - offset);
    const buf = (free.pop() ?? Buffer.allocUnsafeSlow(MAX_CHUNK_BYTES)).subarray(0, want);
    let got = 0;
    while (got < want) {
      const { bytesRead } = await src.handle.read(buf, got, want - got, offset + got);
      if (bytesRead === 0) throw new JackinError('E_CHANGED_WHILE_READING', `${src.path} shrank to ${offset + got} bytes while it was sent (was ${src.size})`);
      got += bytesRead;
    }
    hash.update(buf);
    w.cork();
    w.write(encodeStageChunkHeader(transferId, offset, want));
    const more = w.write(buf, (err) => {
      // Reused only once written: a failed write may still hold it (and the send stops on that failure).
      if (err == null && free.length < STAGE_SEND_QUEUE_BYTES / MAX_CHUNK_BYTES + 2) free.push(Buffer.from(buf.buffer, buf.byteOffset, MAX_CHUNK_BYTES));
    });
    w.uncork();
    offset += want;
    touch();
    onProgress?.(offset, src.size);
    // Let a few chunks queue so reading the next one overlaps sending this one; past that, wait for the
    // capsule (which pauses while its disk is behind): memory stays under this bound plus a chunk.
    if (!more && w.writableLength > STAGE_SEND_QUEUE_BYTES) await waitDrain(w);
  }
  const extra = await src.handle.read(Buffer.alloc(1), 0, 1, src.size);
  if (extra.bytesRead !== 0) throw new JackinError('E_CHANGED_WHILE_READING', `${src.path} grew past ${src.size} bytes while it was sent`);
  const sha256 = hash.digest();
  w.write(encodeStageClientFrame({ type: 'FileStageEnd', transferId, sha256 }));
  return sha256;
}

/** Stages one opened host file into the capsule; the caller closes `src.handle`. */
export async function stageFile(src: StageSource, o: StageClientOptions): Promise<StagedFileResult> {
  const t = await o.connect();
  t.writable.write(encodeControlRequest(STAGE_METHOD, { name: src.name, size: src.size, notify: o.capsuleNotice !== false }));
  return withConnection(
    t,
    o.signal,
    o.idleTimeoutMs ?? STAGE_IDLE_TIMEOUT_MS,
    async (chunks, touch, stoppedBy) => {
      const reader = new ReplyReader();
      const decoder = createStageServerDecoder();
      let transferId: bigint | undefined;
      let sending: Promise<Buffer> | undefined;
      let sendError: unknown;
      const onFrame = async (f: StageServerFrame): Promise<StagedFileResult> => {
        if (f.type === 'Notice') throw streamFailure(f.text);
        if (f.transferId !== transferId) throw new JackinError('E_TRANSFER_PROTOCOL', `FileStaged for transfer ${f.transferId}, expected ${transferId}`);
        const sha256 = await sending!;
        if (f.bytes !== src.size) throw new JackinError('E_TRANSFER_PROTOCOL', `the capsule says it staged ${f.bytes} bytes, ${src.size} were sent`);
        // The path is typed into the program and shown to the operator: an absolute path, nothing else.
        if (!f.path.startsWith('/') || /[\x00-\x1f\x7f-\x9f]/.test(f.path))
          throw new JackinError(
            'E_TRANSFER_PROTOCOL',
            `the capsule answered a staged path that is not a plain absolute path: ${JSON.stringify(f.path).slice(0, 200)}`,
          );
        return { source: src.path, resolved: src.resolved, destination: f.path, bytes: f.bytes, sha256: sha256.toString('hex') };
      };
      // A send failure closes the connection, and reading a closed stream can fail on its own (a premature
      // close): the send's error is the reason then.
      try {
        for await (const raw of chunks) {
          touch();
          let chunk: Buffer = raw;
          if (transferId === undefined) {
            const got = reader.push(chunk);
            if (got === undefined) continue;
            transferId = readControlReply(STAGE_METHOD, got.value).transferId;
            sending = sendFile(t.writable, src, transferId, touch, () => stoppedBy() !== undefined, o.onProgress);
            // A send failure closes the connection, which ends this loop; the error is then the reason.
            sending.catch((e: unknown) => {
              sendError = e;
              t.close();
            });
            chunk = got.rest;
          }
          for (const item of decoder.push(chunk)) {
            if (!item.ok) throw new JackinError('E_TRANSFER_PROTOCOL', `bad frame from the capsule: ${item.error.message}`, { cause: item.error });
            return await onFrame(item.frame);
          }
        }
      } catch (e) {
        throw sendError ?? e;
      }
      if (sendError !== undefined) throw sendError;
      const detail = await Promise.race([t.failureDetail(), new Promise<null>((r) => setTimeout(() => r(null), 1000).unref())]);
      throw new JackinError(
        transferId === undefined ? 'E_CONTROL_REPLY' : 'E_TRANSFER_INTERRUPTED',
        `the capsule closed the connection ${transferId === undefined ? 'without answering stage' : 'before confirming'}${detail === null ? '' : ` (${detail})`}; nothing was staged`,
      );
    },
    { timeoutCode: 'E_STAGE_TIMEOUT', abortedCode: 'E_STAGE_ABORTED', aborted: 'interrupted; nothing was staged' },
  );
}
