/**
 * Caps on host files staged into a capsule (`jackin stage`, pasted or dropped file paths), and the
 * `JACKIN_STAGE_MAX_BYTES` variable that sets them. One value bounds one file and the sum of one paste (or
 * one `jackin stage` command): a paste of many files can never stage more than a single file could. The host
 * checks before sending; the capsule checks again with its own environment's value. Pure.
 */
import { JackinError } from '../errors.ts';
import { GiB, parseSize } from './size.ts';

/** Default cap of one staged file and of one paste: 1 GiB. */
export const DEFAULT_STAGE_MAX_BYTES = 1 * GiB;

/**
 * `JACKIN_STAGE_MAX_BYTES` as bytes: an integer or a size such as `"256 MiB"` or `256m`; unset or empty gives the
 * default. Anything else is E_BAD_STAGE_MAX_BYTES (never a silent default).
 */
export function stageMaxBytes(env: NodeJS.ProcessEnv): number {
  const raw = env['JACKIN_STAGE_MAX_BYTES'];
  if (raw === undefined || raw.trim() === '') return DEFAULT_STAGE_MAX_BYTES;
  const text = raw.trim();
  const bytes = /^\d+$/.test(text) ? Number(text) : parseSize(text);
  if (bytes === undefined || !Number.isSafeInteger(bytes) || bytes < 1) {
    throw new JackinError(
      'E_BAD_STAGE_MAX_BYTES',
      `JACKIN_STAGE_MAX_BYTES=${JSON.stringify(raw)} is not a size; use bytes (1048576) or a size like "256 MiB" or 256m`,
    );
  }
  return bytes;
}
