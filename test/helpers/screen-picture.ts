import { pollUntil } from './poll.ts';
import type { TmuxPane } from './tmux.ts';

/**
 * What a pane shows, as the screen fidelity suite compares it: cells with attributes (tmux's own SGR), then
 * the cursor, the screen and the size. An SGR change after the last character of a row shows nothing: tmux
 * emits one when the row has cells past its text that were written blank (vim's ESC[K) and none when they
 * were never written. For the same reason a row may start by resetting the background or foreground the row
 * above ended with, past its text: tmux captures such an erased tail in one pane and not the other
 * (docs/screen-fidelity.md), so a reset to the defaults before a row's first character is dropped too.
 */
export async function picture(pane: TmuxPane): Promise<string[]> {
  const cells = (await pane.capture({ escapes: true })).split('\n').slice(0, -1);
  const state = await pane.display('cursor=#{cursor_x},#{cursor_y} alternate=#{alternate_on} size=#{pane_width}x#{pane_height}');
  return [...cells.map((l) => l.replace(/(?:\x1b\[[0-9;:]*m)+$/, '').replace(/^(?:\x1b\[(?:0|39|49|39;49|49;39)?m)+/, '')), state];
}

/** The pane's picture once it has stopped changing for 1.5 s (an agent redraws its status line for a while after start). */
export async function settled(pane: TmuxPane): Promise<string> {
  let last = '';
  let since = Date.now();
  return pollUntil(
    'the screen to settle',
    async () => {
      const now = (await picture(pane)).join('\n');
      if (now !== last) {
        last = now;
        since = Date.now();
        return undefined;
      }
      return Date.now() - since >= 1500 ? now : undefined;
    },
    { timeoutMs: 60_000, intervalMs: 250 },
  );
}
