import { randomFillSync } from 'node:crypto';
import { closeSync, openSync, writeSync } from 'node:fs';

const MiB = 1024 * 1024;

/** Writes `bytes` random (incompressible) bytes to `path`, 16 MiB at a time. */
export function writeRandomFile(path, bytes) {
  const fd = openSync(path, 'w');
  const buf = Buffer.alloc(16 * MiB);
  for (let left = bytes; left > 0; left -= buf.length) {
    randomFillSync(buf);
    writeSync(fd, buf, 0, Math.min(buf.length, left));
  }
  closeSync(fd);
}
