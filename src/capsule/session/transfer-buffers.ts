/**
 * The 1 MiB buffers of every bulk transfer of the capsule, in one pool (frame-pool.ts): a stage's chunk
 * frames, an export's chunks, and the directory export's compressor blocks and output slabs.
 *
 * Each kind had a pool of its own, and each kept its buffers for its next transfer, so a capsule that had
 * staged a file held the stage's buffers through every export after it, and the other way round: a Node 24
 * capsule taken through exports and stages in turn peaked at 96 to 100 MiB, against 88 to 89 MiB with one pool
 * (bench/RESULTS.md, the eighth pass). The pool holds only free buffers: transfers at the same time each
 * take their own, and a buffer serves the next transfer only once its last holder has given it back.
 */
import { FramePool } from '../../protocol/frame-pool.ts';
import { FILE_STAGE_TAGS } from '../../protocol/file-stage.ts';
import { capForTag } from '../../protocol/frames.ts';

/** Every pooled buffer holds a whole stage chunk frame's payload (1 MiB of data, its transfer id and
 * offset), and so a 1 MiB export chunk, block or slab. */
export const TRANSFER_BUFFER_BYTES = capForTag(FILE_STAGE_TAGS.FileStageChunk);

/**
 * Free buffers kept: more than one transfer holds at its most. Counted in a capsule (buffers the pool
 * made): a 1 GiB file export 6, a 256 MiB stage 7, the bench's 256 MiB directory export 13 (chunks in the
 * send buffer and waiting for it, blocks in the compressor, output slabs).
 */
const KEEP = 16;

export const transferBuffers = new FramePool(TRANSFER_BUFFER_BYTES, KEEP);
