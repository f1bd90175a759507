/**
 * Cuts a string to at most `maxBytes` of UTF-8 without splitting a code point, ending it with `ellipsis`
 * (default `…`; pass '' for a plain cut) when it was cut. The one implementation: frames bound container
 * text with it, and the host cuts file names with it.
 */
export function truncateUtf8(s: string, maxBytes: number, ellipsis = '…'): string {
  if (Buffer.byteLength(s, 'utf8') <= maxBytes) return s;
  const marked = Buffer.byteLength(ellipsis, 'utf8') <= maxBytes;
  const budget = marked ? maxBytes - Buffer.byteLength(ellipsis, 'utf8') : maxBytes;
  let out = '';
  let used = 0;
  for (const ch of s) {
    const n = Buffer.byteLength(ch, 'utf8');
    if (used + n > budget) break;
    out += ch;
    used += n;
  }
  return marked ? out + ellipsis : out;
}
