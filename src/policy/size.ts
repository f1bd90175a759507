/** Byte sizes as policy files write them: a non-negative integer, or a string such as `"512 MiB"`. Pure. */

const KiB = 1024;
export const MiB = 1024 * KiB;
export const GiB = 1024 * MiB;
const TiB = 1024 * GiB;

const UNITS: Readonly<Record<string, number>> = { B: 1, KiB, MiB, GiB, TiB };
const SIZE_RE = /^(\d+(?:\.\d+)?)\s*(B|KiB|MiB|GiB|TiB)$/;

/** The byte count `value` stands for, or undefined when it is not a valid size. */
export function parseSize(value: unknown): number | undefined {
  if (typeof value === 'number') {
    return Number.isSafeInteger(value) && value >= 0 ? value : undefined;
  }
  if (typeof value !== 'string') return undefined;
  const m = SIZE_RE.exec(value.trim());
  if (m === null) return undefined;
  const unit = UNITS[m[2] ?? ''];
  if (unit === undefined) return undefined;
  const bytes = Math.floor(Number(m[1]) * unit);
  return Number.isSafeInteger(bytes) ? bytes : undefined;
}
