/**
 * The machine an ELF file is built for (its header's e_machine), so an assembled runtime is checked to be
 * of the architecture it is for before any container runs it: a registry that served the other
 * architecture's Node would otherwise surface as "exec format error" inside a container.
 */
import { open } from 'node:fs/promises';
import type { RuntimeArch } from './pins.ts';

/** e_machine of each architecture: EM_X86_64 and EM_AARCH64. */
export const ELF_MACHINE: Readonly<Record<RuntimeArch, number>> = { x64: 62, arm64: 183 };

/** The e_machine of the ELF file `file`, or null when it is not an ELF file (too short, another magic). */
export async function elfMachine(file: string): Promise<number | null> {
  const fh = await open(file, 'r');
  try {
    const header = Buffer.alloc(20);
    const { bytesRead } = await fh.read(header, 0, 20, 0);
    return elfMachineOf(header.subarray(0, bytesRead));
  } finally {
    await fh.close();
  }
}

/** Pure: e_machine from the first 20 bytes of a file; null when they are no ELF header. */
export function elfMachineOf(header: Buffer): number | null {
  if (header.length < 20 || header.readUInt32BE(0) !== 0x7f454c46) return null;
  // EI_DATA (byte 5): 1 little-endian, 2 big-endian; e_machine is the half-word at offset 18.
  if (header[5] === 1) return header.readUInt16LE(18);
  if (header[5] === 2) return header.readUInt16BE(18);
  return null;
}

/** A fake ELF header of `machine` (little-endian, 64-bit): the stand-in binaries of the tests. */
export function fakeElf(machine: number, size = 64): Buffer {
  const b = Buffer.alloc(Math.max(size, 20));
  b.writeUInt32BE(0x7f454c46, 0);
  b[4] = 2;
  b[5] = 1;
  b[6] = 1;
  b.writeUInt16LE(machine, 18);
  return b;
}
