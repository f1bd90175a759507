import { JackinError } from '../../../errors.ts';
import { confirmedRealPath, openExact, type ConfirmRedirect } from '../host-file.ts';

/**
 * The bytes of the regular file at `path`, at most `maxBytes`. Resolves the path first and, when its
 * symlinks lead elsewhere and `confirm` is given (a path a paste or a copy named), asks before reading
 * (host-file.ts); opens the resolved file exactly and checks the opened descriptor (no stat-then-open
 * race), non-blocking so a FIFO named by a hostile paste cannot hang the host, and reads at most
 * maxBytes + 1 so a file that grows meanwhile is caught by the cap.
 * Throws E_PATH_NOT_FOUND, E_PATH_UNREADABLE, E_CHANGED_WHILE_READING, E_SYMLINK_DECLINED, E_NOT_A_FILE
 * or E_IMAGE_TOO_LARGE. Not validated.
 */
export async function readRawFile(path: string, maxBytes: number, confirm?: ConfirmRedirect): Promise<Buffer> {
  const shown = JSON.stringify(path);
  const fh = await openExact(await confirmedRealPath(path, confirm), shown);
  try {
    const st = await fh.stat();
    if (!st.isFile()) throw new JackinError('E_NOT_A_FILE', `${shown} is not a regular file`);
    const tooLarge = (size: number): JackinError =>
      new JackinError('E_IMAGE_TOO_LARGE', `image ${shown} of ${size} bytes exceeds the cap of ${maxBytes} bytes`);
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
