// Order statistics over samples; no interpolation, so a reported p99 is a value that was observed.

/** The q-quantile (0..1) of `samples` by the nearest-rank method. */
export function quantile(samples, q) {
  if (samples.length === 0) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[rank];
}

export function median(samples) {
  return quantile(samples, 0.5);
}

/** Formats a number with a fixed number of significant decimals for a table cell. */
export function fmt(value, digits = 2) {
  if (value === undefined || value === null || Number.isNaN(value)) return 'n/a';
  return value.toFixed(digits);
}

/** `a / b` as "1.23×", or n/a. */
export function ratio(a, b) {
  if (!Number.isFinite(a) || !Number.isFinite(b) || b === 0) return 'n/a';
  return `${(a / b).toFixed(2)}×`;
}
