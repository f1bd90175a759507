/**
 * The keys hint: once, when a session starts on a terminal, a host notice says how to reach the palette and
 * detach ("jackin: Ctrl+\ opens the palette, Ctrl+\ d detaches"); it goes at the operator's first key or
 * with the notice's time. JACKIN_HINT=off leaves it out. Pure.
 */
import { envSwitch } from '../../policy/env-switch.ts';
import { DEFAULT_PALETTE_KEY, type KeySpec } from '../terminal/trigger-keys.ts';

/** Whether the hint is wanted (JACKIN_HINT, default on). */
export function keysHintEnabled(env: Readonly<Record<string, string | undefined>>): boolean {
  return envSwitch(env, 'JACKIN_HINT');
}

/**
 * The hint's text for this palette key (undefined: the default); null without one (JACKIN_PALETTE_KEY=none:
 * no palette, no detach key).
 */
export function keysHintText(paletteKey: KeySpec | null | undefined): string | null {
  if (paletteKey === null) return null;
  const key = (paletteKey?.spec ?? DEFAULT_PALETTE_KEY).replace(/^ctrl\+/i, 'Ctrl+');
  return `jackin: ${key} opens the palette, ${key} d detaches`;
}
