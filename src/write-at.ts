/**
 * Writes a received chunk into a file at a position, in writes of at most WRITE_PIECE_BYTES: the export
 * sink (host) and the stage receiver (capsule) write every byte of a transfer through here.
 *
 * Why pieces: Linux sizes the page-cache folios a buffered write allocates by the write's length, and on
 * virtual machines that hand free memory back to the hypervisor (free page reporting: Firecracker, and the
 * VMs of Docker Desktop, colima and Podman machine use it) the large, high-order folios come from memory
 * the hypervisor must fault in again. Measured on this project's machines (bench/RESULTS.md, "Where the
 * time goes"): writing 1 GiB into fresh page cache took 6.4 s of system CPU in 1 MiB writes, 1.9 s in
 * 256 KiB writes, 0.3 s in 128 KiB writes and 0.3 s in 64 KiB ones; `cp` (copy_file_range) 0.5 s, and
 * `podman cp` and `docker cp` write 32 KiB at a time. On a machine without the effect, pieces cost a few
 * more calls into libuv's pool (8 per MiB).
 */
import { writeSync } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';

/** Largest single write: the biggest size measured still cheap on a reporting VM (see above). */
export const WRITE_PIECE_BYTES = 128 * 1024;

/**
 * Writes all of `bytes` at `position`, piece by piece, in order. `beforeEach`, when given, runs before
 * every write call (a writer that failed elsewhere stops between pieces by throwing there).
 */
export async function writeAllAt(handle: FileHandle, bytes: Uint8Array, position: number, beforeEach?: () => void): Promise<void> {
  let at = 0;
  while (at < bytes.byteLength) {
    beforeEach?.();
    const { bytesWritten } = await handle.write(bytes, at, Math.min(WRITE_PIECE_BYTES, bytes.byteLength - at), position + at);
    at += bytesWritten;
  }
}

/**
 * writeAllAt on the calling thread: the same pieces, each a `writeSync`. For a process with nothing else to
 * serve while it writes (`jackin export`): each write through libuv's pool is a wake-up of a pool thread and
 * a trip back, which on a VM cost more than the write (measured: a local 1 GiB export took 1.85 s against
 * 2.31 s through the pool, and 0.46 s less of the host's CPU; bench/RESULTS.md, the fifth pass).
 */
export function writeAllAtSync(fd: number, bytes: Uint8Array, position: number, beforeEach?: () => void): void {
  let at = 0;
  while (at < bytes.byteLength) {
    beforeEach?.();
    at += writeSync(fd, bytes, at, Math.min(WRITE_PIECE_BYTES, bytes.byteLength - at), position + at);
  }
}
