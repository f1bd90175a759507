import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import { JackinError } from '../../errors.ts';

/**
 * The bytes of the regular file at `path`, at most `maxBytes`. Opens first and checks the opened
 * descriptor (no stat-then-open race), non-blocking so a FIFO named by a hostile paste cannot hang the
 * host, and reads at most maxBytes + 1 so a file that grows meanwhile is caught by the cap.
 * Throws E_PATH_NOT_FOUND, E_PATH_UNREADABLE, E_NOT_A_FILE or E_IMAGE_TOO_LARGE. Not validated.
 */
export async function readRawFile(path: string, maxBytes: number): Promise<Buffer> {
  const fh = await open(path, constants.O_RDONLY | constants.O_NONBLOCK).catch((e: unknown) => {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') {
      throw new JackinError('E_PATH_NOT_FOUND', `no file at ${JSON.stringify(path)}`, { cause: e });
    }
    throw new JackinError('E_PATH_UNREADABLE', `cannot open ${JSON.stringify(path)}: ${(e as Error).message}`, { cause: e });
  });
  try {
    const st = await fh.stat();
    if (!st.isFile()) throw new JackinError('E_NOT_A_FILE', `${JSON.stringify(path)} is not a regular file`);
    const tooLarge = (size: number): JackinError =>
      new JackinError('E_IMAGE_TOO_LARGE', `image ${JSON.stringify(path)} of ${size} bytes exceeds the cap of ${maxBytes} bytes`);
    if (st.size > maxBytes) throw tooLarge(st.size);
    const buf = Buffer.allocUnsafe(st.size + 1);
    let n = 0;
    for (;;) {
      const { bytesRead } = await fh.read(buf, n, buf.length - n, n);
      if (bytesRead === 0) break;
      n += bytesRead;
      if (n === buf.length) break;
    }
    if (n > maxBytes) throw tooLarge(n);
    return buf.subarray(0, n);
  } finally {
    await fh.close();
  }
}
