/**
 * Byte sizes as policy files and `JACKIN_*_MAX_BYTES` write them: a non-negative integer, a string such as
 * `"512 MiB"`, or docker's short form (`16g`, `512m`, `1024k`, `2G`, `100b`: one letter b, k, m, g or t,
 * either case, binary multiples as docker's). Pure.
 */

const KiB = 1024;
export const MiB = 1024 * KiB;
export const GiB = 1024 * MiB;
const TiB = 1024 * GiB;

const UNITS: Readonly<Record<string, number>> = { B: 1, KiB, MiB, GiB, TiB, b: 1, k: KiB, m: MiB, g: GiB, t: TiB };
const SIZE_RE = /^(\d+(?:\.\d+)?)\s*(B|KiB|MiB|GiB|TiB)$/;
/** Docker's `--memory`/`--shm-size` form. Two-letter `MB`/`GB` stay refused: they read as decimal units. */
const DOCKER_SIZE_RE = /^(\d+(?:\.\d+)?)\s*([bkmgt])$/i;

/** The byte count `value` stands for, or undefined when it is not a valid size. */
export function parseSize(value: unknown): number | undefined {
  if (typeof value === 'number') {
    return Number.isSafeInteger(value) && value >= 0 ? value : undefined;
  }
  if (typeof value !== 'string') return undefined;
  const text = value.trim();
  const m = SIZE_RE.exec(text);
  const d = m === null ? DOCKER_SIZE_RE.exec(text) : null;
  const unit = m !== null ? UNITS[m[2] ?? ''] : d !== null ? UNITS[(d[2] ?? '').toLowerCase()] : undefined;
  const amount = m?.[1] ?? d?.[1];
  if (unit === undefined || amount === undefined) return undefined;
  const bytes = Math.floor(Number(amount) * unit);
  return Number.isSafeInteger(bytes) ? bytes : undefined;
}
