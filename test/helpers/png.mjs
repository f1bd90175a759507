// Plain JavaScript so the bench (bench/sections/paste.mjs), which runs without a TypeScript loader, shares it
// with the tests. Types: png.d.mts.
import { randomBytes } from 'node:crypto';
import { crc32, deflateSync } from 'node:zlib';

/**
 * A structurally valid PNG of about `size` bytes: a 1024-pixel-wide RGB image whose IDAT stores random
 * (incompressible) bytes, so tests get large images that pass signature and structure checks. The file is
 * a few hundred bytes over `size` (the IDAT holds `size` random bytes plus its headers).
 */
export function bigPng(size) {
  const chunk = (type, data) => {
    const head = Buffer.alloc(8);
    head.writeUInt32BE(data.length, 0);
    head.write(type, 4, 'latin1');
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])), 0);
    return Buffer.concat([head, data, crc]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(1024, 0);
  ihdr.writeUInt32BE(Math.ceil(size / 3 / 1024), 4);
  ihdr[8] = 8;
  ihdr[9] = 2;
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', deflateSync(randomBytes(size), { level: 0 })),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}
