import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Polls `probe` until it returns a value other than undefined/false, or throws after `timeoutMs` with the
 * description and the last observed value. Tests wait with this, never with fixed sleeps.
 */
export async function pollUntil<T>(
  description: string,
  probe: () => T | undefined | false | Promise<T | undefined | false>,
  { timeoutMs = 10_000, intervalMs = 20, last }: { timeoutMs?: number; intervalMs?: number; last?: () => unknown } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const v = await probe();
      if (v !== undefined && v !== false) return v;
    } catch (e) {
      lastError = e;
    }
    if (Date.now() > deadline) {
      const seen = last ? `\nlast seen: ${JSON.stringify(last())}` : '';
      const err = lastError instanceof Error ? `\nlast error: ${lastError.message}` : '';
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${description}${seen}${err}`);
    }
    await sleep(intervalMs);
  }
}
