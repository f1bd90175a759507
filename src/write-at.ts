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
